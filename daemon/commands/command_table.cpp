#include "daemon/commands/command_table.h"

#include <array>

namespace rftp::daemon {
namespace {

using A = Argument;

constexpr std::array kCommands{
    CommandSpec{"USER", false, A::required, cmd_user, "USER <name>: log in as name"},
    CommandSpec{"PASS", false, A::optional, cmd_pass, "PASS <password>: complete the login"},
    CommandSpec{"TCKT", false, A::optional, cmd_tckt,
                "TCKT: a login ticket for other sessions; TCKT <ticket>: log in with one, in the place of PASS"},
    CommandSpec{"QUIT", false, A::none, cmd_quit, "QUIT: end the session"},
    CommandSpec{"AUTH", false, A::required, cmd_auth, "AUTH TLS: TLS on the control connection (RFC 4217)"},
    CommandSpec{"PBSZ", false, A::required, cmd_pbsz, "PBSZ 0: after AUTH TLS, before PROT"},
    CommandSpec{"PROT", false, A::required, cmd_prot, "PROT P|C: TLS on data connections, or clear"},
    CommandSpec{"CCC", false, A::none, cmd_ccc, "CCC: refused; the control connection stays encrypted"},
    CommandSpec{"NOOP", false, A::none, cmd_noop, "NOOP: do nothing"},
    CommandSpec{"SYST", false, A::none, cmd_syst, "SYST: system type"},
    CommandSpec{"FEAT", false, A::none, cmd_feat, "FEAT: list extensions"},
    CommandSpec{"OPTS", false, A::required, cmd_opts, "OPTS <command> <options>: UTF8, HASH, MLST, PARALLEL, BLOCKSUM, DATATOKEN, DATAKEEP"},
    CommandSpec{"HELP", false, A::optional, cmd_help, "HELP [command]"},
    CommandSpec{"STAT", true, A::optional, cmd_stat, "STAT [path]: session or transfer status, or a listing over the control connection"},
    CommandSpec{"TYPE", true, A::required, cmd_type, "TYPE A|I: ASCII or binary"},
    CommandSpec{"MODE", true, A::required, cmd_mode, "MODE S: stream mode only"},
    CommandSpec{"STRU", true, A::required, cmd_stru, "STRU F: file structure only"},
    CommandSpec{"ALLO", true, A::optional, cmd_allo, "ALLO <size>: the next STOR reserves the file's space first"},
    CommandSpec{"SRCE", true, A::required, cmd_srce, "SRCE <token>: the local file the next upload comes from (for resumes)"},
    CommandSpec{"HOLD", true, A::none, cmd_hold, "HOLD: keep the next upload aside, complete, until COMT"},
    CommandSpec{"COMT", true, A::required, cmd_comt, "COMT <file>: put the upload HOLD kept aside in place"},
    CommandSpec{"PWD", true, A::none, cmd_pwd, "PWD: working directory"},
    CommandSpec{"XPWD", true, A::none, cmd_pwd, "XPWD: same as PWD"},
    CommandSpec{"CWD", true, A::required, cmd_cwd, "CWD <dir>: change directory"},
    CommandSpec{"XCWD", true, A::required, cmd_cwd, "XCWD: same as CWD"},
    CommandSpec{"CDUP", true, A::none, cmd_cdup, "CDUP: parent directory"},
    CommandSpec{"XCUP", true, A::none, cmd_cdup, "XCUP: same as CDUP"},
    CommandSpec{"MKD", true, A::required, cmd_mkd, "MKD <dir>: make directory"},
    CommandSpec{"XMKD", true, A::required, cmd_mkd, "XMKD: same as MKD"},
    CommandSpec{"RMD", true, A::required, cmd_rmd, "RMD <dir>: remove empty directory"},
    CommandSpec{"XRMD", true, A::required, cmd_rmd, "XRMD: same as RMD"},
    CommandSpec{"DELE", true, A::required, cmd_dele, "DELE <file>: delete file"},
    CommandSpec{"RNFR", true, A::required, cmd_rnfr, "RNFR <from>: rename, step 1"},
    CommandSpec{"RNTO", true, A::required, cmd_rnto, "RNTO <to>: rename, step 2"},
    CommandSpec{"SIZE", true, A::required, cmd_size, "SIZE <file>: size in bytes"},
    CommandSpec{"MDTM", true, A::required, cmd_mdtm, "MDTM <file>: modification time"},
    CommandSpec{"MFMT", true, A::required, cmd_mfmt, "MFMT <YYYYMMDDHHMMSS> <file>: set modification time (UTC)"},
    CommandSpec{"MLST", true, A::optional, cmd_mlst, "MLST [path]: facts about one entry"},
    CommandSpec{"HASH", true, A::required, cmd_hash, "HASH <file>: SHA-256 of the file"},
    CommandSpec{"PASV", true, A::none, cmd_pasv, "PASV: passive mode (IPv4)"},
    CommandSpec{"EPSV", true, A::optional, cmd_epsv, "EPSV [1|2|ALL]: extended passive mode"},
    CommandSpec{"PORT", true, A::required, cmd_port, "PORT h1,h2,h3,h4,p1,p2: active mode (if enabled)"},
    CommandSpec{"EPRT", true, A::required, cmd_eprt, "EPRT |p|addr|port|: extended active mode (if enabled)"},
    CommandSpec{"REST", true, A::required, cmd_rest, "REST <offset>: restart the next transfer there"},
    CommandSpec{"ABOR", true, A::none, cmd_abor, "ABOR: abort the transfer"},
    CommandSpec{"RETR", true, A::required, cmd_retr, "RETR <file>: download"},
    CommandSpec{"STOR", true, A::required, cmd_stor, "STOR <file>: upload"},
    CommandSpec{"APPE", true, A::required, cmd_appe, "APPE <file>: upload, appending"},
    CommandSpec{"LIST", true, A::optional, cmd_list, "LIST [path]: listing, ls -l style"},
    CommandSpec{"NLST", true, A::optional, cmd_nlst, "NLST [path]: names only"},
    CommandSpec{"MLSD", true, A::optional, cmd_mlsd, "MLSD [dir]: machine-readable listing"},
    CommandSpec{"MLSR", true, A::optional, cmd_mlsr, "MLSR [dir]: the whole tree below dir, as MLSD lines"},
    CommandSpec{"RADR", true, A::required, cmd_radr, "RADR <streams> <block> <iodepth>: set up an RDMA channel"},
    CommandSpec{"RSTR", true, A::required, cmd_rstr, "RSTR <file>: upload over the RDMA channel"},
    CommandSpec{"RRTR", true, A::required, cmd_rrtr, "RRTR <file>: download over the RDMA channel"},
};

}  // namespace

bool takes_pending_transfer(std::string_view verb) {
    for (std::string_view v : {"RETR", "STOR", "APPE", "RSTR", "RRTR", "LIST", "NLST", "MLSD", "MLSR"})
        if (verb == v) return true;
    return false;
}

bool keeps_pending_transfer(std::string_view verb) {
    // What a client sends between REST (ALLO, SRCE, HOLD) and its transfer
    // command: the others of those four, and the setup of the data
    // connection or RDMA channel it is to use (rftp: RADR and, given up on,
    // ABOR, then SRCE, OPTS PARALLEL, REST, EPSV, ALLO, HOLD, STOR; or SRCE,
    // REST, HOLD, RSTR). ABOR is not among them: it ends what was readied.
    for (std::string_view v : {"REST", "ALLO", "SRCE", "HOLD", "PASV", "EPSV", "PORT", "EPRT", "TYPE", "MODE",
                               "STRU", "OPTS", "RADR", "NOOP", "STAT"})
        if (verb == v) return true;
    return false;
}

const CommandSpec *find_command(std::string_view verb) {
    for (const auto &c : kCommands)
        if (c.verb == verb) return &c;
    return nullptr;
}

std::span<const CommandSpec> all_commands() { return kCommands; }

}  // namespace rftp::daemon
