// Test-only fault switch for the client's connect retry (cm_setup.cpp).
// iWARP connects from a real TCP port that the RDMA CM picks without asking
// TCP, so a queue pair can find its port taken and must connect again from
// a new one. That collision is rare and random; with
// RFTP_TEST_RDMA_CONNECT_FROM=PORT in the client's environment every queue
// pair's first try binds to PORT instead, so a test that holds PORT makes it
// happen every time, through the real CM and the real device. Off unless set.
#pragma once

#include <cstdint>

namespace rftp::middleware::rdma {

// The local port a queue pair's first try is to bind to; 0 (unset): the CM picks.
uint16_t test_connect_from_port();

}  // namespace rftp::middleware::rdma
