// Case folding for protocol words (FTP verbs, FEAT names, OPTS choices,
// MLSx fact names): ASCII only, whatever the locale, so that a byte of a
// UTF-8 name is never changed.
#pragma once

#include <string>
#include <string_view>

namespace rftp {

inline std::string ascii_upper(std::string_view text) {
    std::string out(text);
    for (char &c : out)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return out;
}

inline std::string ascii_lower(std::string_view text) {
    std::string out(text);
    for (char &c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

}  // namespace rftp
