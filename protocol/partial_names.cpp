#include "protocol/partial_names.h"

namespace rftp::ftp {

std::string server_partial_name(std::string_view path) {
    const std::size_t name_start = path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1;
    std::string out(path.substr(0, name_start));
    out += '.';
    out += path.substr(name_start);
    out += kPartialSuffix;
    return out;
}

std::string server_journal_name(std::string_view partial_path) {
    std::string out(partial_path.ends_with(kPartialSuffix)
                        ? partial_path.substr(0, partial_path.size() - kPartialSuffix.size())
                        : partial_path);
    return out + std::string(kJournalSuffix);
}

std::string client_partial_name(std::string_view path) { return std::string(path) + std::string(kPartialSuffix); }

std::string client_journal_name(std::string_view path) { return std::string(path) + std::string(kJournalSuffix); }

bool is_transfer_bookkeeping(std::string_view path) {
    return path.ends_with(kPartialSuffix) || path.ends_with(kJournalSuffix);
}

}  // namespace rftp::ftp
