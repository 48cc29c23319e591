/* Test-only LD_PRELOAD shim for rftpd: unlinkat and renameat of a name that
 * starts with "slow-" wait, as unlinking (or renaming over) a large file
 * does on a real disk, where freeing its blocks happens inside the call.
 * They wait until the file named by $SLOW_UNLINK_GATE exists (the test
 * creates it once the other session was answered), at most 10 seconds, so
 * the order the test sees does not hang on timing. Everything else goes
 * straight to libc. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void maybe_wait(const char *name) {
    const char *leaf = strrchr(name, '/');
    leaf = leaf ? leaf + 1 : name;
    if (strncmp(leaf, "slow-", 5) != 0) return;
    const char *gate = getenv("SLOW_UNLINK_GATE");
    for (int i = 0; i < 1000 && !(gate && access(gate, F_OK) == 0); ++i) usleep(10000);
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
