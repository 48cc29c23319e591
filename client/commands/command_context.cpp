#include "client/commands/command_context.h"

#include "common/log.h"

namespace rftp::client {

void CommandContext::note(const std::string &text) {
    log::info(text);
    summary.notes.push_back(text);
}

}  // namespace rftp::client
