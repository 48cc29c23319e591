#include "client/commands/resume_command.h"

namespace rftp::client {
namespace {

std::string shell_quoted(const std::string &s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

}  // namespace

std::string resume_command(const char *verb, const Options &o, const std::vector<std::string> &args) {
    std::string cmd = std::string("rftp ") + verb + " -c";
    if (o.recursive) cmd += " -r";
    if (o.verify) cmd += " --verify";  // a resumed file deserves the check the first run asked for
    for (const auto &a : args) cmd += " " + shell_quoted(a);
    return cmd;
}

}  // namespace rftp::client
