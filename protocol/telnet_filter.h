// RFC 959 control connections are Telnet streams. Clients send Telnet
// commands before ABOR (IAC IP, IAC DM: "interrupt process, synch") and may
// negotiate options; none of that belongs in a command line. This filter
// removes Telnet sequences and un-doubles IAC IAC, across read boundaries.
#pragma once

#include <string>
#include <string_view>

namespace rftp::ftp {

class TelnetFilter {
public:
    // Appends the plain bytes of in to out.
    void filter(std::string_view in, std::string &out);

private:
    enum class State { data, iac, option } state_ = State::data;
};

}  // namespace rftp::ftp
