// What ships: no test switch is ever read (test_switches.h). A test build
// links tests/switches/test_switches_from_env.cpp, whose definition comes
// first, so the linker never takes this one from the library.
#include "middleware/test_switches.h"

namespace rftp::middleware {

const char *test_switch(const char *) { return nullptr; }

}  // namespace rftp::middleware
