#include "middleware/disk/disk_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rftp::middleware::disk {

bool in_memory_file_system(int fd) {
    struct statfs fs {};
    if (::fstatfs(fd, &fs) != 0) return false;
    return fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC;
}

std::unique_ptr<DiskFile> DiskFile::open(int fd, bool writing, bool want_direct, Placement placement) {
    auto f = std::make_unique<DiskFile>();
    f->fd = fd;
    struct stat st {};
    bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    // An O_APPEND descriptor (a shell's >>) writes at its end whatever offset
    // is asked for: to us it is a stream, written in order.
    int fl = ::fcntl(fd, F_GETFL);
    bool own_position = placement == Placement::at_own_position;
    f->seekable = !own_position && ::lseek(fd, 0, SEEK_CUR) >= 0 && fl >= 0 && !(fl & O_APPEND);
    f->regular = regular;
    if (!want_direct) {
        f->buffered_reason = "direct I/O is off";
    } else if (!regular) {
        f->buffered_reason = "not a regular file";
    } else if (!f->seekable) {
        // A direct twin would neither append nor move the caller's offset.
        f->buffered_reason = own_position ? "written in order at the descriptor's position" : "appending: written in order";
    } else {
        // A second open file description on the same inode, through our own
        // descriptor table: nothing is resolved by name, and the caller's
        // descriptor (its flags, its offset) is left untouched.
        std::string self = "/proc/self/fd/" + std::to_string(fd);
        int flags = (writing ? O_WRONLY : O_RDONLY) | O_DIRECT | O_CLOEXEC | O_NOCTTY;
        f->direct = UniqueFd(::open(self.c_str(), flags));
        if (f->direct) f->direct_usable = true;
        else f->buffered_reason = std::string("O_DIRECT refused: ") + std::strerror(errno);
    }
    return f;
}

void DiskFile::refuse_direct(const std::string &why) {
    if (direct_usable.exchange(false)) buffered_reason = why;
}

std::string DiskFile::summary() const {
    std::string s = "direct_bytes=" + std::to_string(direct_bytes.load()) +
                    " buffered_bytes=" + std::to_string(buffered_bytes.load());
    if (!buffered_reason.empty()) s += " buffered_reason=\"" + buffered_reason + "\"";
    if (sendfile_bytes.load() > 0) s += " sendfile_bytes=" + std::to_string(sendfile_bytes.load());
    return s;
}

}  // namespace rftp::middleware::disk
