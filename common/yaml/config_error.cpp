#include "common/yaml/config_error.h"

#include <cerrno>

#include "common/hex.h"

namespace rftp::yaml {

KeyLocation KeyLocation::child(std::string_view key, const YAML::Mark &m) const {
    std::string p = path.empty() ? std::string(key) : path + "." + std::string(key);
    return KeyLocation{source, std::move(p), m};
}

KeyLocation KeyLocation::element(size_t index, const YAML::Mark &m) const {
    return KeyLocation{source, path + "[" + std::to_string(index) + "]", m};
}

Error config_error(const KeyLocation &at, std::string_view what) {
    std::string text = at.source;
    if (!at.mark.is_null()) {
        // yaml-cpp counts from 0; editors count from 1.
        text += ":" + std::to_string(at.mark.line + 1) + ":" + std::to_string(at.mark.column + 1);
    }
    text += ": ";
    if (!at.path.empty()) text += at.path + ": ";
    text += what;
    return Error::msg(std::move(text), -EINVAL);
}

std::string describe_node(const YAML::Node &node) {
    switch (node.Type()) {
        case YAML::NodeType::Null: return "nothing";
        case YAML::NodeType::Sequence: return "a list";
        case YAML::NodeType::Map: return "a mapping";
        case YAML::NodeType::Scalar: {
            std::string s = node.Scalar();
            if (s.size() > 60) s = s.substr(0, 57) + "...";
            std::string out = "\"";
            for (unsigned char c : s) {
                if (c < 0x20 || c == 0x7f) {
                    out += "\\x";
                    out += kHexDigits[c >> 4];
                    out += kHexDigits[c & 15];
                } else {
                    out += static_cast<char>(c);
                }
            }
            return out + "\"";
        }
        case YAML::NodeType::Undefined: break;
    }
    return "nothing";
}

}  // namespace rftp::yaml
