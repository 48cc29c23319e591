// A verbs call's failure under a running transfer is the network's, never
// a disk's: EIO (the kernel's answer once a device is gone) becomes ENODEV.
#include <gtest/gtest.h>

#include <cerrno>

#include "middleware/rdma/verbs_error.h"

using rftp::middleware::rdma::fail_verbs;

namespace {

TEST(VerbsError, EioFromAGoneDeviceIsToldAsNoDevice) {
    auto e = fail_verbs("post RDMA WRITE and notice", EIO);
    EXPECT_EQ(e.error().code, -ENODEV);
    EXPECT_NE(e.error().message.find("post RDMA WRITE and notice"), std::string::npos) << e.error().message;
}

TEST(VerbsError, OtherErrnosKeepTheirCode) {
    for (int err : {ENOMEM, EINVAL, EAGAIN}) EXPECT_EQ(fail_verbs("post a control receive", err).error().code, -err);
}

}  // namespace
