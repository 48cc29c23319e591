// Settings sent ahead (FtpConnection::send_setting_ahead): the setting and
// the next command share a round trip, the setting's reply is read on the
// way to the next one's, and its refusal fails that read by name.
#include "client/ftp_connection.h"

#include <poll.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/loopback_listener.h"

using rftp::UniqueFd;
using rftp::client::ExitCode;
using rftp::client::FtpConnection;

namespace {

// A server that reads the given number of command lines (waiting up to
// 2 s for all of them) before it answers any, then writes its replies.
// lines_before_reply tells how many had come when it answered: a client
// that waited for a reply before sending the next line shows fewer.
struct ScriptedServer {
    LoopbackListener listener{1};
    std::vector<std::string> lines;
    std::thread thread;

    ScriptedServer(std::size_t expect_lines, std::string replies) {
        thread = std::thread([this, expect_lines, replies] {
            UniqueFd c(::accept4(listener.fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (!c) return;
            std::string got;
            while (static_cast<std::size_t>(std::count(got.begin(), got.end(), '\n')) < expect_lines) {
                pollfd p{c.get(), POLLIN, 0};
                if (::poll(&p, 1, 2000) <= 0) break;
                char buf[512];
                ssize_t n = ::recv(c.get(), buf, sizeof buf, 0);
                if (n <= 0) break;
                got.append(buf, static_cast<std::size_t>(n));
            }
            for (std::size_t at = 0, end; (end = got.find("\r\n", at)) != std::string::npos; at = end + 2)
                lines.push_back(got.substr(at, end - at));
            (void)::send(c.get(), replies.data(), replies.size(), MSG_NOSIGNAL);
            // Held open until the client is done reading.
            char rest[64];
            while (::recv(c.get(), rest, sizeof rest, 0) > 0) {
            }
        });
    }
    ~ScriptedServer() {
        if (thread.joinable()) thread.join();
    }
};

FtpConnection connect_to(const ScriptedServer &server) {
    auto c = FtpConnection::open("127.0.0.1", server.listener.port(), 5);
    EXPECT_TRUE(c) << c.error().message;
    return std::move(*c);
}

}  // namespace

TEST(SettingsAhead, ShareTheNextCommandsRoundTrip) {
    ScriptedServer server(2, "200 Switching to Binary mode.\r\n213 5\r\n");
    {
        FtpConnection c = connect_to(server);
        ASSERT_TRUE(c.send_setting_ahead("TYPE I"));
        EXPECT_FALSE(c.has_lines_ahead());  // no command asks for its reply
        auto size = c.command("SIZE /f");
        ASSERT_TRUE(size) << size.error().message;
        EXPECT_EQ(size->code, 213);
        EXPECT_EQ(size->text(), "5");
    }
    server.thread.join();
    EXPECT_EQ(server.lines, (std::vector<std::string>{"TYPE I", "SIZE /f"}));
}

TEST(SettingsAhead, ARefusalFailsTheNextReadByName) {
    ScriptedServer server(2, "504 Type not implemented.\r\n213 5\r\n200 NOOP ok.\r\n");
    {
        FtpConnection c = connect_to(server);
        ASSERT_TRUE(c.send_setting_ahead("TYPE I"));
        ASSERT_TRUE(c.send_ahead({"SIZE /f"}));
        auto size = c.command("SIZE /f");
        ASSERT_FALSE(size);
        EXPECT_EQ(size.error().exit, ExitCode::remote_file);
        EXPECT_NE(size.error().message.find("TYPE I: 504"), std::string::npos) << size.error().message;
        // The replies stay in step: SIZE's is read as not wanted, NOOP gets its own.
        auto noop = c.command("NOOP");
        ASSERT_TRUE(noop) << noop.error().message;
        EXPECT_EQ(noop->code, 200);
    }
}

TEST(SettingsAhead, ReadReplySettlesThemFirst) {
    // The exchanges that send and read for themselves (OPTS PARALLEL's).
    ScriptedServer server(2, "200 Switching to Binary mode.\r\n200 PARALLEL 4 8388608\r\n");
    FtpConnection c = connect_to(server);
    ASSERT_TRUE(c.send_setting_ahead("TYPE I"));
    ASSERT_TRUE(c.send("OPTS PARALLEL 4 8388608"));
    auto reply = c.read_reply();
    ASSERT_TRUE(reply) << reply.error().message;
    EXPECT_EQ(reply->text(), "PARALLEL 4 8388608");
}

TEST(SettingsAhead, DrainingChecksThem) {
    ScriptedServer server(1, "530 Not logged in.\r\n");
    FtpConnection c = connect_to(server);
    ASSERT_TRUE(c.send_setting_ahead("TYPE I"));
    auto drained = c.drain_ahead();
    ASSERT_FALSE(drained);
    EXPECT_EQ(drained.error().exit, ExitCode::auth);
}
