// rftpd's configuration: any YAML text overlaid on the embedded default.
// A bad file must come back as an error, never a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "daemon/config/config_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const auto base = rftp::daemon::load_default_config();
    if (!base) std::abort();  // the embedded default must load, or nothing here is tested
    (void)rftp::daemon::apply_config_text(*base, std::string_view(reinterpret_cast<const char *>(data), size), "fuzz");
    return 0;
}
