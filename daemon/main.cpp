// rftpd: parses the command line, loads the config, runs the server until
// SIGINT/SIGTERM. The one place where the daemon's errors are reported.
#include <signal.h>
#include <termios.h>
#include <unistd.h>
#include <uv.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "common/log.h"
#include "daemon/auth/password_hash.h"
#include "daemon/config/config_loader.h"
#include "daemon/rdma/session_rdma.h"
#include "daemon/server/server.h"
#include "daemon/server/service_manager.h"
#include "daemon/server/tls_setup.h"
#include "daemon/vfs/other_writers.h"
#include "daemon/vfs/user_root.h"

using namespace rftp;
using namespace rftp::daemon;

namespace {

// Exit codes of rftpd (docs/config.md).
enum ExitCode { kOk = 0, kUsage = 2, kConfig = 3, kStartup = 4 };

// Reads one line from stdin without echo when it is a terminal.
std::string read_password() {
    termios old{};
    bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &old) == 0;
    if (tty) {
        std::cerr << "Password: " << std::flush;
        termios quiet = old;
        quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    }
    std::string line;
    std::getline(std::cin, line);
    if (tty) {
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
        std::cerr << "\n";
    }
    return line;
}

int hash_password_command() {
    std::string password = read_password();
    if (password.empty()) {
        std::cerr << "rftpd: empty password; type one, or pipe it on stdin\n";
        return kUsage;
    }
    auto hash = hash_password(password);
    if (!hash) {
        std::cerr << "rftpd: " << hash.error().message << "\n";
        return kStartup;
    }
    std::cout << *hash << "\n";
    return kOk;
}

// The schema checks each value; this checks what they make together. A
// max_pinned below what one channel may pin (its blocks with their trailer
// pages, in whole 2 MiB pages, and its message area) would refuse such
// RADRs always, while the log said RDMA is on.
Status channel_fits_budget(const RdmaOptions &o) {
    if (!o.enabled) return {};
    uint64_t need = SessionRdma::largest_channel(o);
    if (need <= o.max_pinned) return {};
    return fail_msg("config: rdma.max_pinned (" + std::to_string(o.max_pinned) + " bytes) cannot hold one channel: with "
                    "rdma.pool_size " + std::to_string(o.pool_size) + ", rdma.max_block_size " +
                    std::to_string(o.max_block_size) + " and rdma.max_streams " + std::to_string(o.max_streams) +
                    " a channel pins up to " + std::to_string(need) + " bytes; raise rdma.max_pinned to at least that, "
                    "or lower rdma.pool_size");
}

// A root the config reaches through symbolic links is resolved now, once
// (daemon/SECURITY.md, "User roots"). One whose parent directories someone
// else may change is served, with a warning: refusing would break roots kept
// in users' homes, which the operator may have chosen knowingly.
std::string resolved_root(const std::string &user, const std::string &configured) {
    std::string real = root_as_resolved_at_start(configured);
    if (real != configured)
        log::notice("event=root_resolved user=" + log::quote(user) + " root=" + log::quote(configured) +
                    " real_path=" + log::quote(real));
    if (auto problem = root_path_problem(real))
        log::warning("event=root_unsafe user=" + log::quote(user) + " root=" + log::quote(real) +
                     " reason=" + log::quote(*problem));
    return real;
}

// What `systemctl status rftpd` shows once rftpd is ready.
std::string listening_status(const DaemonOptions &o) {
    std::string where;
    for (const auto &l : o.listen)
        where += (where.empty() ? "" : ", ") + l.address + " port " + std::to_string(l.port);
    return "Listening on " + where;
}

int serve(DaemonOptions options, middleware::tls::SharedSslCtx tls) {
    log::Level level;
    if (log::parse_level(options.log_level, level)) log::set_threshold(level);
    // Writes to a closed data connection must come back as EPIPE, not kill us.
    ::signal(SIGPIPE, SIG_IGN);

    for (auto &user : options.users) user.root = resolved_root(user.name, user.root);
    if (!options.anonymous_root.empty()) options.anonymous_root = resolved_root("anonymous", options.anonymous_root);

    uv_loop_t loop;
    uv_loop_init(&loop);
    int status = kOk;
    {
        Server server(&loop, std::move(options), std::move(tls));
        if (auto s = server.start(); !s) {
            log::error("event=startup_failed error=" + log::quote(s.error().message));
            server.stop("startup failed");
            status = kStartup;
        }
        uv_signal_t sigint, sigterm;
        for (auto [handle, signum] : {std::pair{&sigint, SIGINT}, std::pair{&sigterm, SIGTERM}}) {
            uv_signal_init(&loop, handle);
            handle->data = &server;
            uv_signal_start(
                handle,
                [](uv_signal_t *h, int sig) {
                    static_cast<Server *>(h->data)->stop(sig == SIGINT ? "SIGINT" : "SIGTERM");
                    uv_close(reinterpret_cast<uv_handle_t *>(h), nullptr);
                },
                signum);
            // Once one signal arrived, the other must not keep the loop alive.
            uv_unref(reinterpret_cast<uv_handle_t *>(handle));
        }
        // SIGHUP asks daemons to reload, out of habit (logrotate, systemctl
        // kill -s HUP); its default action would end every transfer. rftpd
        // reloads its TLS certificate (renewals) and nothing else, and says so.
        uv_signal_t sighup;
        uv_signal_init(&loop, &sighup);
        sighup.data = &server;
        uv_signal_start(
            &sighup,
            [](uv_signal_t *h, int) { static_cast<Server *>(h->data)->reload_tls(); },
            SIGHUP);
        uv_unref(reinterpret_cast<uv_handle_t *>(&sighup));
        // Ready once listening and the signals are handled: a stop sent at
        // once must not find SIGTERM's default action.
        if (status == kOk) {
            tell_service_manager_ready(listening_status(server.options()));
            uv_run(&loop, UV_RUN_DEFAULT);
        }
        // Close whatever is left (signal handles, a failed start) and drain.
        uv_walk(&loop, [](uv_handle_t *h, void *) { if (!uv_is_closing(h)) uv_close(h, nullptr); }, nullptr);
        uv_run(&loop, UV_RUN_DEFAULT);
        server.tasks().join_all();
    }
    uv_loop_close(&loop);
    if (status == kOk) log::notice("event=stopped");
    return status;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"rftpd: FTP server with parallel-stream and RDMA data paths"};
    std::string config_path;
    bool hash = false, check = false, print_default = false, version = false;
    std::string log_level;
    // Not CLI::ExistingFile: a missing or unreadable config is a config
    // error (exit 3, with the reason), as docs/config.md says.
    app.add_option("-c,--config", config_path, "YAML config file; overlays the embedded default");
    app.add_flag("--hash-password", hash, "read a password on stdin, print its yescrypt hash for the config");
    app.add_flag("--check-config", check, "load and validate the config, then exit");
    app.add_flag("--print-default-config", print_default, "print the embedded default config");
    app.add_option("--log-level", log_level, "error, warning, notice, info or debug (overrides log.level)");
    app.add_flag("-V,--version", version, "print the version");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        int code = app.exit(e);
        return code == 0 ? kOk : kUsage;
    }
    if (version) {
        std::cout << "rftpd 0.1.0\n";
        return kOk;
    }
    if (print_default) {
        std::cout << embedded_default_config();
        return kOk;
    }
    if (hash) return hash_password_command();

    // --config "" is a path that does not exist, not a request for the defaults.
    auto options = app.count("--config") == 0 ? load_default_config() : load_config_file(config_path);
    if (!options) {
        // Through the log, so journald files it as an error (journalctl -p err).
        log::error("rftpd: " + options.error().message);
        return kConfig;
    }
    if (!log_level.empty()) {
        log::Level l;
        if (!log::parse_level(log_level, l)) {
            std::cerr << "rftpd: --log-level must be error, warning, notice, info or debug\n";
            return kUsage;
        }
        options->log_level = log_level;
    }
    if (auto fits = channel_fits_budget(options->rdma); !fits) {
        log::error("rftpd: " + fits.error().message);
        return kConfig;
    }
    auto tls = load_tls_context(options->tls);
    if (!tls) {
        log::error("rftpd: config: " + tls.error().message);
        return kConfig;
    }
    if (check) {
        std::cout << "rftpd: config OK\n";
        return kOk;
    }
    return serve(std::move(*options), std::move(*tls));
}
