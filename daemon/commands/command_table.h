// Every command rftpd knows, in one table: its verb, whether it needs a
// login, what argument it takes, its handler and its HELP line. The session
// checks the first three before a handler ever runs, so handlers only deal
// with well-formed, permitted commands.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace rftp::daemon {

class Session;

enum class Argument { none, optional, required };

using CommandHandler = void (*)(Session &, const std::string &argument);

struct CommandSpec {
    std::string_view verb;
    bool needs_login;
    Argument argument;
    CommandHandler handler;
    std::string_view help;
};

const CommandSpec *find_command(std::string_view verb);
// The transfer commands, which take what REST, ALLO, SRCE and HOLD set for
// "the next transfer" (command_support.h), even when refused.
bool takes_pending_transfer(std::string_view verb);
// The commands that may come between those four and their transfer command;
// any other drops what they set, so that it never outlives a change of mind
// (REST, then SIZE, then a STOR meant to start over).
bool keeps_pending_transfer(std::string_view verb);
std::span<const CommandSpec> all_commands();

// Handlers, grouped by file: login_commands.cpp, info_commands.cpp,
// path_commands.cpp, data_commands.cpp, transfer_commands.cpp,
// rdma_commands.cpp.
void cmd_user(Session &, const std::string &);
void cmd_pass(Session &, const std::string &);
void cmd_tckt(Session &, const std::string &);
void cmd_quit(Session &, const std::string &);
void cmd_auth(Session &, const std::string &);
void cmd_pbsz(Session &, const std::string &);
void cmd_prot(Session &, const std::string &);
void cmd_ccc(Session &, const std::string &);

void cmd_noop(Session &, const std::string &);
void cmd_syst(Session &, const std::string &);
void cmd_feat(Session &, const std::string &);
void cmd_opts(Session &, const std::string &);
void cmd_help(Session &, const std::string &);
void cmd_stat(Session &, const std::string &);
void cmd_type(Session &, const std::string &);
void cmd_mode(Session &, const std::string &);
void cmd_stru(Session &, const std::string &);
void cmd_allo(Session &, const std::string &);
void cmd_srce(Session &, const std::string &);
void cmd_hold(Session &, const std::string &);
void cmd_comt(Session &, const std::string &);

void cmd_pwd(Session &, const std::string &);
void cmd_cwd(Session &, const std::string &);
void cmd_cdup(Session &, const std::string &);
void cmd_mkd(Session &, const std::string &);
void cmd_rmd(Session &, const std::string &);
void cmd_dele(Session &, const std::string &);
void cmd_rnfr(Session &, const std::string &);
void cmd_rnto(Session &, const std::string &);
void cmd_size(Session &, const std::string &);
void cmd_mdtm(Session &, const std::string &);
void cmd_mfmt(Session &, const std::string &);
void cmd_mlst(Session &, const std::string &);
void cmd_hash(Session &, const std::string &);

void cmd_pasv(Session &, const std::string &);
void cmd_epsv(Session &, const std::string &);
void cmd_port(Session &, const std::string &);
void cmd_eprt(Session &, const std::string &);
void cmd_rest(Session &, const std::string &);
void cmd_abor(Session &, const std::string &);

void cmd_retr(Session &, const std::string &);
void cmd_stor(Session &, const std::string &);
void cmd_appe(Session &, const std::string &);
void cmd_list(Session &, const std::string &);
void cmd_nlst(Session &, const std::string &);
void cmd_mlsd(Session &, const std::string &);
void cmd_mlsr(Session &, const std::string &);

void cmd_radr(Session &, const std::string &);
void cmd_rstr(Session &, const std::string &);
void cmd_rrtr(Session &, const std::string &);

}  // namespace rftp::daemon
