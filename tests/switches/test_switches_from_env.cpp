// The test builds of rftpd and rftp (build/testing/) read their test-only
// switches from the environment (middleware/test_switches.h).
#include <cstdlib>

#include "middleware/test_switches.h"

namespace rftp::middleware {

const char *test_switch(const char *name) { return std::getenv(name); }

}  // namespace rftp::middleware
