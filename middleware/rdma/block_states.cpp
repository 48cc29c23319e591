#include "middleware/rdma/block_states.h"

namespace rftp::middleware::rdma {

const char *to_string(SourceBlock s) {
    switch (s) {
        case SourceBlock::free: return "free";
        case SourceBlock::loading: return "loading";
        case SourceBlock::ready: return "ready";
        case SourceBlock::posted: return "posted";
        case SourceBlock::zeros: return "zeros";
    }
    return "?";
}

const char *to_string(SinkBlock s) {
    switch (s) {
        case SinkBlock::free: return "free";
        case SinkBlock::lending: return "lending";
        case SinkBlock::granted: return "granted";
        case SinkBlock::filled: return "filled";
        case SinkBlock::writing: return "writing";
    }
    return "?";
}

}  // namespace rftp::middleware::rdma
