#include "protocol/telnet_filter.h"

namespace rftp::ftp {
namespace {
constexpr unsigned char kIac = 255;
constexpr unsigned char kWill = 251;  // WILL, WONT, DO, DONT (251..254) carry an option byte
}  // namespace

void TelnetFilter::filter(std::string_view in, std::string &out) {
    for (unsigned char c : in) {
        switch (state_) {
            case State::data:
                if (c == kIac) state_ = State::iac;
                else out += static_cast<char>(c);
                break;
            case State::iac:
                if (c == kIac) {
                    out += static_cast<char>(c);
                    state_ = State::data;
                } else if (c >= kWill && c < kIac) {
                    state_ = State::option;
                } else if (c >= 240) {
                    state_ = State::data;  // IP, DM, AYT, ...: dropped
                } else {
                    // Not a Telnet command: a lone IAC (its partner was sent as
                    // urgent data and taken out of band). Keep the byte.
                    out += static_cast<char>(c);
                    state_ = State::data;
                }
                break;
            case State::option:
                state_ = State::data;
                break;
        }
    }
}

}  // namespace rftp::ftp
