#include "client/transfer/file_report.h"

#include "common/log.h"

namespace rftp::client {

void FileReport::note(const std::string &text) {
    log::info(text);
    notes.push_back(text);
}

}  // namespace rftp::client
