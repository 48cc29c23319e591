// UserRoot on a real directory tree in /tmp: a secret file sits next to the
// root, and every way of reaching it from inside must fail.
#include "protocol/partial_names.h"
#include "daemon/vfs/user_root.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace rftp::daemon;
namespace fs = std::filesystem;

namespace {

std::string read_all(int fd) {
    std::string out;
    char buf[256];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
}

void write_file(const fs::path &p, const std::string &text) {
    std::ofstream(p, std::ios::binary) << text;
}

class UserRootTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/rftp-user-root-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        base_ = tmpl;
        root_ = base_ / "root";
        fs::create_directories(root_ / "data" / "sub");
        write_file(base_ / "secret", "outside");
        write_file(root_ / "data" / "file.txt", "inside");
        write_file(root_ / "top.txt", "top");
    }
    void TearDown() override { fs::remove_all(base_); }

    UserRoot open_root(bool writable) {
        auto r = UserRoot::open(root_.string(), writable);
        EXPECT_TRUE(r) << r.error().message;
        return std::move(*r);
    }

    fs::path base_;
    fs::path root_;
};

std::string resolve(std::string_view cwd, std::string_view arg) {
    auto r = resolve_virtual_path(cwd, arg);
    return r ? *r : "ERROR " + std::to_string(r.error().code);
}

}  // namespace

TEST(VirtualPath, NormalizesLexicallyAndNeverClimbsAboveRoot) {
    EXPECT_EQ(resolve("/", "a"), "/a");
    EXPECT_EQ(resolve("/data", "run1/a.bin"), "/data/run1/a.bin");
    EXPECT_EQ(resolve("/data", "/x"), "/x");
    EXPECT_EQ(resolve("/data", "."), "/data");
    EXPECT_EQ(resolve("/data", ".."), "/");
    EXPECT_EQ(resolve("/", "//a//./b/"), "/a/b");
    EXPECT_EQ(resolve("/", "../../etc/passwd"), "/etc/passwd");
    EXPECT_EQ(resolve("/data", "/../x"), "/x");
    EXPECT_EQ(resolve("/data", "a/../../.."), "/");
    EXPECT_EQ(resolve("/", "..."), "/...");  // a legal file name, not a parent
}

TEST(VirtualPath, RejectsEmptyNulAndOverlongPaths) {
    EXPECT_EQ(resolve("/", ""), "ERROR " + std::to_string(-EINVAL));
    EXPECT_EQ(resolve("/", std::string_view("a\0b", 3)), "ERROR " + std::to_string(-EINVAL));
    EXPECT_EQ(resolve("/", std::string(256, 'x')), "ERROR " + std::to_string(-ENAMETOOLONG));
    EXPECT_EQ(resolve("/", std::string(255, 'x')), "/" + std::string(255, 'x'));
    std::string long_path;
    while (long_path.size() < 5000) long_path += "/" + std::string(100, 'd');
    EXPECT_EQ(resolve("/", long_path), "ERROR " + std::to_string(-ENAMETOOLONG));
    // Long cwd plus a relative argument also counts as a whole.
    EXPECT_EQ(resolve(long_path.substr(0, 4000), long_path.substr(1, 1000)), "ERROR " + std::to_string(-ENAMETOOLONG));
}

TEST_F(UserRootTest, OpensFilesInside) {
    UserRoot root = open_root(false);
    auto fd = root.open_file("/data/file.txt", O_RDONLY);
    ASSERT_TRUE(fd) << fd.error().message;
    EXPECT_EQ(read_all(fd->get()), "inside");
    // The descriptor is blocking unless asked otherwise.
    EXPECT_EQ(::fcntl(fd->get(), F_GETFL) & O_NONBLOCK, 0);
}

TEST_F(UserRootTest, RawDotDotIsRefusedByTheKernelToo) {
    // Defence in depth: even a path that skipped resolve_virtual_path cannot climb out.
    UserRoot root = open_root(true);
    for (const char *p : {"/../secret", "/data/../../secret", "/data/sub/../../../secret"}) {
        auto fd = root.open_file(p, O_RDONLY);
        ASSERT_FALSE(fd) << p;
        EXPECT_EQ(fd.error().code, -EXDEV) << p;
    }
    auto st = root.stat("/../secret");
    EXPECT_FALSE(st);
}

TEST_F(UserRootTest, TraversalThroughResolveEndsInsideTheRoot) {
    UserRoot root = open_root(false);
    auto vpath = resolve_virtual_path("/data", "../../secret");
    ASSERT_TRUE(vpath);
    EXPECT_EQ(*vpath, "/secret");
    auto fd = root.open_file(*vpath, O_RDONLY);
    ASSERT_FALSE(fd);
    EXPECT_EQ(fd.error().code, -ENOENT);
}

TEST_F(UserRootTest, SymlinksPointingOutsideAreNotFollowed) {
    fs::create_symlink(base_ / "secret", root_ / "abs_link");          // absolute, to outside
    fs::create_symlink("../secret", root_ / "rel_link");               // relative, to outside
    fs::create_symlink("/etc", root_ / "etc_dir");                     // absolute directory
    fs::create_symlink("../..", root_ / "data" / "up");                // directory, climbing out
    fs::create_symlink("/top.txt", root_ / "abs_inside");              // absolute: means host "/"
    UserRoot root = open_root(true);

    for (const char *p : {"/abs_link", "/rel_link", "/etc_dir/passwd", "/data/up/secret", "/abs_inside"}) {
        auto fd = root.open_file(p, O_RDONLY);
        ASSERT_FALSE(fd) << p << " opened";
        EXPECT_EQ(fd.error().code, -EXDEV) << p << ": " << fd.error().message;
        EXPECT_FALSE(root.stat(p)) << p;
    }
    EXPECT_FALSE(root.list("/etc_dir"));
    EXPECT_FALSE(root.open_directory("/data/up"));

    // Writes through such links must not create or change anything outside.
    auto created = root.open_file("/data/up/new-outside", O_WRONLY | O_CREAT | O_TRUNC);
    EXPECT_FALSE(created);
    EXPECT_FALSE(fs::exists(base_ / "new-outside"));
    auto trunc = root.open_file("/rel_link", O_WRONLY | O_TRUNC);
    EXPECT_FALSE(trunc);
    EXPECT_FALSE(root.make_directory("/data/up/evil"));
    EXPECT_FALSE(fs::exists(base_ / "evil"));
    EXPECT_FALSE(root.rename("/top.txt", "/data/up/stolen.txt"));
    EXPECT_TRUE(fs::exists(root_ / "top.txt"));
    EXPECT_FALSE(root.remove_file("/data/up/secret"));

    std::ifstream secret(base_ / "secret");
    std::string text((std::istreambuf_iterator<char>(secret)), {});
    EXPECT_EQ(text, "outside");
}

TEST_F(UserRootTest, SymlinksInsideTheRootWork) {
    fs::create_symlink("data/file.txt", root_ / "link_to_file");
    fs::create_symlink("../top.txt", root_ / "data" / "link_up_inside");
    fs::create_symlink("data", root_ / "data_alias");
    UserRoot root = open_root(false);

    for (const char *p : {"/link_to_file", "/data_alias/file.txt"}) {
        auto fd = root.open_file(p, O_RDONLY);
        ASSERT_TRUE(fd) << p << ": " << fd.error().message;
        EXPECT_EQ(read_all(fd->get()), "inside");
    }
    auto up = root.open_file("/data/link_up_inside", O_RDONLY);
    ASSERT_TRUE(up) << up.error().message;
    EXPECT_EQ(read_all(up->get()), "top");
    auto listing = root.list("/data_alias");
    ASSERT_TRUE(listing) << listing.error().message;
}

TEST(UserRootMagicLinks, ProcStyleLinksAreRefused) {
    // /proc/self/root and /proc/self/cwd are magic links: following them would
    // jump to any directory regardless of RESOLVE_BENEATH's lexical checks.
    // /proc/self is itself a link (to /proc/PID), resolved as rftpd resolves a root at start.
    auto root = UserRoot::open(rftp::daemon::root_as_resolved_at_start("/proc/self"), false);
    ASSERT_TRUE(root) << root.error().message;
    for (const char *p : {"/root/etc/passwd", "/cwd"}) {
        auto fd = root->open_file(p, O_RDONLY);
        ASSERT_FALSE(fd) << p;
        EXPECT_EQ(fd.error().code, -ELOOP) << p << ": " << fd.error().message;
    }
}

TEST(UserRootPath, ALinkOnTheRootsPathCountsOnlyAsResolvedAtStart) {
    auto root = UserRoot::open("/proc/self", false);
    ASSERT_FALSE(root);
    EXPECT_EQ(root.error().code, -ELOOP) << root.error().message;
    EXPECT_EQ(rftp::daemon::root_as_resolved_at_start("/proc/self"), "/proc/" + std::to_string(::getpid()));
    EXPECT_EQ(rftp::daemon::root_as_resolved_at_start("/no/such/root"), "/no/such/root");
    // A root on a mount not there yet: what exists of its path is resolved.
    EXPECT_EQ(rftp::daemon::root_as_resolved_at_start("/proc/self/no/such"),
              "/proc/" + std::to_string(::getpid()) + "/no/such");
}

TEST_F(UserRootTest, NulInsideAVirtualPathIsRefused) {
    UserRoot root = open_root(false);
    auto fd = root.open_file(std::string("/top.txt\0/../x", 14), O_RDONLY);
    ASSERT_FALSE(fd);
    EXPECT_EQ(fd.error().code, -EINVAL);
}

TEST_F(UserRootTest, ReadOnlyRootRefusesEveryChangeBeforeTouchingAnything) {
    UserRoot root = open_root(false);
    EXPECT_FALSE(root.writable());
    auto expect_eacces = [](const auto &r, const char *what) {
        ASSERT_FALSE(r) << what;
        EXPECT_EQ(r.error().code, -EACCES) << what;
    };
    expect_eacces(root.open_file("/new.txt", O_WRONLY | O_CREAT), "create");
    expect_eacces(root.open_file("/top.txt", O_WRONLY), "open for write");
    expect_eacces(root.open_file("/top.txt", O_RDWR), "open read-write");
    expect_eacces(root.open_file("/top.txt", O_RDONLY | O_TRUNC), "truncate");
    expect_eacces(root.open_file("/top.txt", O_WRONLY | O_APPEND), "append");
    expect_eacces(root.make_directory("/newdir"), "mkdir");
    expect_eacces(root.remove_directory("/data/sub"), "rmdir");
    expect_eacces(root.remove_file("/top.txt"), "delete");
    expect_eacces(root.rename("/top.txt", "/moved.txt"), "rename");

    EXPECT_FALSE(fs::exists(root_ / "new.txt"));
    EXPECT_FALSE(fs::exists(root_ / "newdir"));
    EXPECT_FALSE(fs::exists(root_ / "moved.txt"));
    EXPECT_TRUE(fs::exists(root_ / "data" / "sub"));
    EXPECT_EQ(fs::file_size(root_ / "top.txt"), 3u);
}

TEST_F(UserRootTest, WritableRootCreatesRemovesAndRenames) {
    UserRoot root = open_root(true);
    auto fd = root.open_file("/data/new.bin", O_WRONLY | O_CREAT | O_EXCL, 0600);
    ASSERT_TRUE(fd) << fd.error().message;
    ASSERT_EQ(::write(fd->get(), "abc", 3), 3);
    EXPECT_TRUE(fs::exists(root_ / "data" / "new.bin"));

    ASSERT_TRUE(root.make_directory("/data/newdir"));
    EXPECT_TRUE(fs::is_directory(root_ / "data" / "newdir"));
    auto again = root.make_directory("/data/newdir");
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, -EEXIST);

    ASSERT_TRUE(root.remove_directory("/data/newdir"));
    EXPECT_FALSE(fs::exists(root_ / "data" / "newdir"));

    ASSERT_TRUE(root.remove_file("/data/new.bin"));
    EXPECT_FALSE(fs::exists(root_ / "data" / "new.bin"));
    auto missing = root.remove_file("/data/new.bin");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, -ENOENT);

    auto root_itself = root.remove_directory("/");
    EXPECT_FALSE(root_itself);
}

TEST_F(UserRootTest, RenameReplacesTheTargetAtomically) {
    UserRoot root = open_root(true);
    write_file(root_ / "data" / ".a.bin.rftp-part", "new contents");
    write_file(root_ / "data" / "a.bin", "old");
    // Hold the old file open: a reader keeps its complete old version, and the
    // name never points at nothing or at a half file.
    auto old_fd = root.open_file("/data/a.bin", O_RDONLY);
    ASSERT_TRUE(old_fd);

    ASSERT_TRUE(root.rename(rftp::ftp::server_partial_name("/data/a.bin"), "/data/a.bin"));
    EXPECT_FALSE(fs::exists(root_ / "data" / ".a.bin.rftp-part"));
    auto fd = root.open_file("/data/a.bin", O_RDONLY);
    ASSERT_TRUE(fd);
    EXPECT_EQ(read_all(fd->get()), "new contents");
    EXPECT_EQ(read_all(old_fd->get()), "old");

    // Across directories too.
    ASSERT_TRUE(root.rename("/top.txt", "/data/sub/top.txt"));
    EXPECT_TRUE(fs::exists(root_ / "data" / "sub" / "top.txt"));
}

TEST_F(UserRootTest, ListIsSortedAndShowsLinksAsLinks) {
    write_file(root_ / "data" / "b", "");
    write_file(root_ / "data" / "a", "");
    write_file(root_ / "data" / "C", "");
    fs::create_symlink(base_ / "secret", root_ / "data" / "z_link");
    UserRoot root = open_root(false);
    auto entries = root.list("/data");
    ASSERT_TRUE(entries) << entries.error().message;
    std::vector<std::string> names;
    for (const auto &e : *entries) names.push_back(e.name);
    EXPECT_EQ(names, (std::vector<std::string>{"C", "a", "b", "file.txt", "sub", "z_link"}));
    EXPECT_TRUE(S_ISDIR(entries->at(4).st.st_mode));
    EXPECT_TRUE(S_ISLNK(entries->at(5).st.st_mode));
    EXPECT_TRUE(S_ISREG(entries->at(3).st.st_mode));
    EXPECT_EQ(entries->at(3).st.st_size, 6);
}

TEST_F(UserRootTest, StatAndDirectoriesAndNonFiles) {
    UserRoot root = open_root(false);
    auto st = root.stat("/data/file.txt");
    ASSERT_TRUE(st) << st.error().message;
    EXPECT_EQ(st->st_size, 6);
    auto dir_st = root.stat("/");
    ASSERT_TRUE(dir_st);
    EXPECT_TRUE(S_ISDIR(dir_st->st_mode));

    auto dir = root.open_file("/data", O_RDONLY);
    ASSERT_FALSE(dir);
    EXPECT_EQ(dir.error().code, -EISDIR);

    // A FIFO in the tree neither hangs open_file nor gets opened.
    ASSERT_EQ(::mkfifo((root_ / "fifo").c_str(), 0600), 0);
    auto fifo = root.open_file("/fifo", O_RDONLY);
    ASSERT_FALSE(fifo);
    EXPECT_EQ(fifo.error().code, -EINVAL);

    auto not_dir = root.open_directory("/top.txt");
    ASSERT_FALSE(not_dir);
    EXPECT_EQ(not_dir.error().code, -ENOTDIR);
    EXPECT_TRUE(root.open_directory("/"));
}

TEST_F(UserRootTest, OverlongNamesFailCleanly) {
    UserRoot root = open_root(true);
    auto fd = root.open_file("/" + std::string(300, 'n'), O_WRONLY | O_CREAT);
    ASSERT_FALSE(fd);
    EXPECT_EQ(fd.error().code, -ENAMETOOLONG);
}

TEST(UserRootOpen, MissingRootIsAnError) {
    auto r = UserRoot::open("/nonexistent/rftp-root", false);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, -ENOENT);
}
