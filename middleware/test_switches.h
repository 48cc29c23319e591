// Test-only switches: faults and timings a test needs to make happen every
// time (a damaged block, a checkpoint every 20 ms, a queue pair's port
// taken). Each is an environment variable named RFTP_TEST_*.
//
// Only the test builds of rftpd and rftp read them (build/testing/, linked
// with tests/switches/test_switches_from_env.cpp). The binaries that are
// installed link test_switches_off.cpp instead: an environment variable can
// never make a production rftpd damage blocks or a client bind odd ports.
#pragma once

namespace rftp::middleware {

// The switch's value, or nullptr when it is unset or this build reads none.
const char *test_switch(const char *name);

}  // namespace rftp::middleware
