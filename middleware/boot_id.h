// Which boot of the machine this is. A resume journal records it: the same
// boot means only a process died and the page cache kept every completed
// write; another boot means the machine went down, and only what was synced
// to the disk survived.
#pragma once

#include <string>

namespace rftp::middleware {

// The kernel's boot id (a UUID), read once; empty where /proc does not give
// it, which a journal treats as "perhaps another boot".
const std::string &boot_id();

}  // namespace rftp::middleware
