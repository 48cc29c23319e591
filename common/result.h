// Errors travel as values: every fallible function returns Result<T>, whose
// error carries a negative errno (or -1 for a plain failure) and a message
// with context. Nothing in library code exits or aborts; the one place that
// reports an error is the caller at the top (main, a session, a test).
#pragma once

#include <cerrno>
#include <cstring>
#include <expected>
#include <string>
#include <utility>

namespace rftp {

// What failed, beside the errno. A refusal of the program's own carries its
// kind, so that it is never read as a system error of the same number (an
// upload in progress is not EAGAIN's "no thread now"; a reserved name is
// not the file system's EPERM), nor a system error as such a refusal.
enum class ErrorKind : unsigned char {
    system,         // code is the system's errno (or -1): what the kernel or a library said
    busy,           // someone else holds it right now; the same request may work later
    reserved_name,  // a name the program keeps for its own bookkeeping
    bad_offset,     // a resume point that does not fit the file
};

struct Error {
    int code = -1;          // negative errno, or -1 when no errno applies
    std::string message;    // human sentence with context, no trailing newline
    ErrorKind kind = ErrorKind::system;

    // "open /x: No such file or directory" from the current errno.
    static Error from_errno(const std::string &context, int err = errno) {
        return Error{-err, context + ": " + std::strerror(err)};
    }
    static Error msg(std::string text, int code = -1) { return Error{code, std::move(text)}; }

    // Prefixes more context as the error travels up: "upload a.bin: open ...".
    Error with_context(const std::string &context) const {
        return Error{code, context + ": " + message, kind};
    }
};

// Not an errno: a file whose size differs from the size announced for it
// (it changed at its source meanwhile). Kept apart from ESTALE, which a
// local write on NFS can give.
inline constexpr int kFileChanged = -0x10000;

// A file being sent that ends at byte `at`, before the size announced for
// it: it shrank meanwhile. The file changed; no disk failed.
inline Error file_ended_early(unsigned long long at) {
    return Error{kFileChanged,
                 "the file ended at byte " + std::to_string(at) + " before its announced size (did it shrink while being sent?)"};
}

template <class T>
using Result = std::expected<T, Error>;

// Result<void> reads better as Status at call sites that only succeed or fail.
using Status = std::expected<void, Error>;

inline std::unexpected<Error> fail(Error e) { return std::unexpected<Error>(std::move(e)); }
inline std::unexpected<Error> fail_errno(const std::string &context, int err = errno) {
    return std::unexpected<Error>(Error::from_errno(context, err));
}
inline std::unexpected<Error> fail_msg(std::string text, int code = -1) {
    return std::unexpected<Error>(Error::msg(std::move(text), code));
}

}  // namespace rftp
