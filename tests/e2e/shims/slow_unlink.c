/* Test-only LD_PRELOAD shim for rftpd: unlinkat and renameat of a name that
 * starts with "slow-" take two seconds, as unlinking (or renaming over) a
 * large file does on a real disk, where freeing its blocks happens inside
 * the call. Everything else goes straight to libc. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

static void maybe_wait(const char *name) {
    const char *leaf = strrchr(name, '/');
    leaf = leaf ? leaf + 1 : name;
    if (strncmp(leaf, "slow-", 5) == 0) sleep(2);
}

int unlinkat(int dirfd, const char *name, int flags) {
    static int (*real)(int, const char *, int);
    if (!real) real = (int (*)(int, const char *, int))dlsym(RTLD_NEXT, "unlinkat");
    maybe_wait(name);
    return real(dirfd, name, flags);
}

int renameat(int from_dir, const char *from, int to_dir, const char *to) {
    static int (*real)(int, const char *, int, const char *);
    if (!real) real = (int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
    maybe_wait(to);
    return real(from_dir, from, to_dir, to);
}
