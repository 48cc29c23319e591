#include "daemon/listing/list_format.h"

#include <cstdio>

#include "protocol/time_val.h"

namespace rftp::daemon {
namespace {

char type_char(mode_t m) {
    if (S_ISDIR(m)) return 'd';
    if (S_ISLNK(m)) return 'l';
    if (S_ISCHR(m)) return 'c';
    if (S_ISBLK(m)) return 'b';
    if (S_ISFIFO(m)) return 'p';
    if (S_ISSOCK(m)) return 's';
    return '-';
}

}  // namespace

std::string format_list_line(const struct stat &st, std::string_view name, std::time_t now) {
    char perms[11];
    perms[0] = type_char(st.st_mode);
    const char *rwx = "rwxrwxrwx";
    for (int i = 0; i < 9; ++i) perms[i + 1] = (st.st_mode & (0400 >> i)) ? rwx[i] : '-';
    perms[10] = '\0';
    std::tm tm{};
    gmtime_r(&st.st_mtime, &tm);
    char date[32];
    // Like ls: files older than six months (or in the future) show the year.
    bool recent = st.st_mtime <= now + 3600 && now - st.st_mtime < 183L * 24 * 3600;
    std::strftime(date, sizeof date, recent ? "%b %e %H:%M" : "%b %e  %Y", &tm);
    char head[128];
    std::snprintf(head, sizeof head, "%s %3lu ftp      ftp      %12lld %s ", perms,
                  static_cast<unsigned long>(st.st_nlink), static_cast<long long>(st.st_size), date);
    return std::string(head) + std::string(name);
}

std::string format_mlsx_line(const struct stat &st, std::string_view name, bool writable, bool is_cdir,
                             std::string_view extra_facts) {
    std::string facts;
    if (S_ISDIR(st.st_mode)) {
        facts = is_cdir ? "type=cdir;" : "type=dir;";
        facts += std::string("perm=el") + (writable ? "cmpf" : "") + ";";
    } else if (S_ISREG(st.st_mode)) {
        facts = "type=file;size=" + std::to_string(st.st_size) + ";";
        facts += std::string("perm=r") + (writable ? "wadf" : "") + ";";
    } else {
        facts = "type=OS.unix=other;";
    }
    facts += "modify=" + ftp::format_time_val(st.st_mtime) + ";";
    facts += "UNIX.mode=0" + [&] {
        char b[8];
        std::snprintf(b, sizeof b, "%o", st.st_mode & 07777);
        return std::string(b);
    }() + ";";
    return facts + std::string(extra_facts) + " " + std::string(name);
}

}  // namespace rftp::daemon
