#include "daemon/data/ascii_transfer.h"

#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "middleware/tcp/socket_io.h"

namespace rftp::daemon {

Result<uint64_t> send_ascii(int sock, int file_fd, uint64_t offset, middleware::TransferProgress &progress) {
    std::vector<char> in(64u << 10);
    std::string out;
    uint64_t total = 0;
    for (;;) {
        if (progress.abort.load()) return fail(Error{-ECANCELED, "transfer aborted"});
        ssize_t n = ::pread(file_fd, in.data(), in.size(), static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail_errno("read file");
        }
        if (n == 0) return total;
        out.clear();
        for (ssize_t i = 0; i < n; ++i) {
            if (in[i] == '\n') out += '\r';
            out += in[i];
        }
        if (auto s = middleware::write_all(sock, out.data(), out.size()); !s) return fail(s.error());
        offset += static_cast<uint64_t>(n);
        total += static_cast<uint64_t>(n);
        progress.bytes.fetch_add(static_cast<uint64_t>(n));
    }
}

Result<uint64_t> receive_ascii(int sock, int file_fd, uint64_t offset, middleware::TransferProgress &progress) {
    std::vector<char> in(64u << 10);
    std::string out;
    bool held_cr = false;  // a CR at the end of one read may pair with an LF in the next
    for (;;) {
        auto got = middleware::recv_some(sock, in.data(), in.size(), progress);
        if (!got) return fail(got.error());
        const auto n = static_cast<ssize_t>(*got);
        out.clear();
        if (n == 0) {
            if (held_cr) out += '\r';
        }
        for (ssize_t i = 0; i < n; ++i) {
            if (held_cr && in[i] != '\n') out += '\r';
            held_cr = in[i] == '\r';
            if (!held_cr) out += in[i];
        }
        if (!out.empty()) {
            if (auto s = middleware::write_to_file(file_fd, true, offset, out.data(), out.size()); !s) return fail(s.error());
            offset += out.size();
            progress.bytes.fetch_add(out.size());
        }
        if (n == 0) return offset;
    }
}

}  // namespace rftp::daemon
