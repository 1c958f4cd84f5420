// The image root (probes/rootfs.cpp): paths resolved inside it as chroot(2) would.
//
// Roots are built here at test time. The oracles are real programs: the kernel (open(2) on a chain of
// links) and glob(3), where they apply to a root without links that leave it.
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rootfs_support.hpp"
#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/rootfs.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_rootfs {

namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;
using namespace wheelcheck;
using namespace wheelcheck::probe;
using namespace wheelcheck::test;

// Runs `fn` in a child process; when this process is root, the child first becomes "nobody" so that
// permission bits are enforced. The child's exit code, or nullopt when privileges could not be dropped
// (the child exits 99) or permissions turned out not to be enforced (fn returns 97). -1: the child crashed.
std::optional<int> run_unprivileged(const std::function<int()>& fn) {
  const pid_t pid = ::fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) {
    if (::geteuid() == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(99);
    }
    int code = 96;
    try {
      code = fn();
    } catch (...) {
      code = 98;
    }
    ::_exit(code);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return std::nullopt;
  if (!WIFEXITED(status)) return -1;
  const int code = WEXITSTATUS(status);
  if (code == 99 || code == 97) return std::nullopt;
  return code;
}

}  // namespace

// ============================================================================================================
// RootFs
// ============================================================================================================

TEST(RootFs, ConstructorChecksTheRoot) {
  TempDir dir;
  put(dir.file("file"), "x");
  try {
    RootFs bad(dir.file("missing"));
    ADD_FAILURE() << "a missing root was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
  try {
    RootFs bad(dir.file("file"));
    ADD_FAILURE() << "a file was accepted as a root";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
  EXPECT_EQ(RootFs(dir.path() + "///").host_root(), dir.path());
  EXPECT_EQ(RootFs("/").host_root(), "/");
  const auto r = RootFs(dir.path()).resolve("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->image_path, "/");
  EXPECT_EQ(r->host_path, dir.path());
}

TEST(RootFs, AbsoluteLinksAreReRootedNotTheHosts) {
  TempDir dir;
  const std::string root = dir.file("root");
  const std::string passwd = "imageuser:x:4242:4242::/home/imageuser:/bin/false\n";
  put(root + "/etc/passwd", passwd);
  link_at("usr/lib", root + "/lib");                                       // relative, merged /usr
  link_at("/etc/passwd", root + "/usr/lib/x86_64-linux-gnu/passwd-link");  // absolute
  link_at("/lib/x86_64-linux-gnu/passwd-link", root + "/etc/chained");     // absolute through /lib
  link_at("/", root + "/usr/slash");                                       // to the root itself
  RootFs fs(root);

  std::vector<Problem> findings;
  const auto r = fs.resolve("/lib/x86_64-linux-gnu/passwd-link", &findings);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->image_path, "/etc/passwd");
  EXPECT_EQ(r->host_path, root + "/etc/passwd");
  EXPECT_FALSE(r->escaped);
  EXPECT_TRUE(findings.empty()) << describe(findings);

  ASSERT_NE(read_file("/etc/passwd"), passwd) << "the host's passwd happens to equal the test's";
  EXPECT_EQ(fs.read_file("/lib/x86_64-linux-gnu/passwd-link"), passwd);
  EXPECT_EQ(fs.read_file("/etc/chained"), passwd);
  EXPECT_EQ(fs.read_file("/usr/slash/usr/slash/etc/passwd"), passwd);
  EXPECT_EQ(fs.resolve("/usr/slash/lib")->image_path, "/usr/lib");
  EXPECT_EQ(fs.type("/lib"), RootFs::Type::Directory);
  EXPECT_EQ(fs.type("/etc/chained"), RootFs::Type::File);
  EXPECT_EQ(fs.resolve("/lib/./x86_64-linux-gnu/../x86_64-linux-gnu//passwd-link")->image_path, "/etc/passwd");
}

TEST(RootFs, RelativeLinksClimbingAboveRootAreClampedAndReported) {
  TempDir dir;
  const std::string root = dir.file("root");
  const std::string passwd = "inside:x:1:1::/:/bin/false\n";
  put(root + "/etc/passwd", passwd);
  put(dir.file("etc/passwd"), "outside the root\n");  // what a walk that escaped would find
  link_at("../../../../../../../../etc/passwd", root + "/usr/lib/evil");
  link_at("..", root + "/up");
  RootFs fs(root);

  std::vector<Problem> findings;
  const auto r = fs.resolve("/usr/lib/evil", &findings);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->image_path, "/etc/passwd");
  EXPECT_EQ(r->host_path, root + "/etc/passwd");
  EXPECT_TRUE(r->escaped);
  EXPECT_TRUE(has_finding(findings, "escapes-root", "/usr/lib/evil")) << describe(findings);
  EXPECT_EQ(findings.size(), 1u) << describe(findings);
  EXPECT_EQ(fs.read_file("/usr/lib/evil"), passwd);

  findings.clear();
  const auto up = fs.resolve("/up/up/up/etc/passwd", &findings);
  ASSERT_TRUE(up);
  EXPECT_EQ(up->image_path, "/etc/passwd");
  EXPECT_TRUE(up->escaped);
  EXPECT_TRUE(has_finding(findings, "escapes-root", "/up")) << describe(findings);

  // The path itself may climb too.
  findings.clear();
  const auto dotdot = fs.resolve("/../../etc/passwd", &findings);
  ASSERT_TRUE(dotdot);
  EXPECT_EQ(dotdot->image_path, "/etc/passwd");
  EXPECT_TRUE(dotdot->escaped);
  EXPECT_TRUE(has_finding(findings, "escapes-root", "/../../etc/passwd")) << describe(findings);

  // ".." inside the root is no escape.
  findings.clear();
  const auto inside = fs.resolve("/usr/lib/../../etc/passwd", &findings);
  ASSERT_TRUE(inside);
  EXPECT_FALSE(inside->escaped);
  EXPECT_TRUE(findings.empty()) << describe(findings);
}

TEST(RootFs, HostPathsOutsideTheRootAreNeverReached) {
  TempDir dir;
  const std::string root = dir.file("root");
  put(dir.file("secret"), "host secret\n");
  fs::create_directories(root + "/etc");
  link_at(dir.file("secret"), root + "/etc/abs-host");  // an absolute host path: re-rooted, so missing
  link_at("../../secret", root + "/etc/rel-host");      // climbs out: clamped to /secret, missing
  RootFs fs(root);

  std::vector<Problem> findings;
  EXPECT_FALSE(fs.resolve("/etc/abs-host", &findings));
  EXPECT_FALSE(fs.resolve("/etc/rel-host", &findings));
  EXPECT_TRUE(has_finding(findings, "escapes-root", "/etc/rel-host")) << describe(findings);
  EXPECT_TRUE(throws_bad_input([&] { fs.read_file("/etc/abs-host"); }, "/etc/abs-host"));
  EXPECT_TRUE(throws_bad_input([&] { fs.read_file("/etc/rel-host"); }, "/etc/rel-host"));
  EXPECT_EQ(fs.type("/etc/abs-host"), RootFs::Type::Missing);

  // Once the root holds a /secret of its own, that is what both links read.
  put(root + "/secret", "image secret\n");
  put(root + dir.file("secret"), "image copy of the host path\n");
  EXPECT_EQ(fs.read_file("/etc/rel-host"), "image secret\n");
  EXPECT_EQ(fs.read_file("/etc/abs-host"), "image copy of the host path\n");
  for (const char* p : {"/etc/rel-host", "/etc/abs-host"}) {
    const auto r = fs.resolve(p);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->host_path.rfind(root + "/", 0), 0u) << r->host_path;
  }
}

TEST(RootFs, SymlinkLoopsEndWithAFinding) {
  TempDir dir;
  const std::string root = dir.file("root");
  put(root + "/target", "end\n");
  link_at("b", root + "/a");
  link_at("a", root + "/b");
  link_at("self", root + "/self");
  link_at("/loop/x", root + "/loop");
  RootFs fs(root);

  for (const char* p : {"/a", "/self", "/loop", "/a/below"}) {
    std::vector<Problem> findings;
    EXPECT_FALSE(fs.resolve(p, &findings)) << p;
    EXPECT_TRUE(has_finding(findings, "symlink-loop", p)) << p << ": " << describe(findings);
    EXPECT_EQ(fs.type(p), RootFs::Type::Missing);
    EXPECT_TRUE(throws_bad_input([&] { fs.read_file(p); }, "symlink-loop"));
  }

  // The limit is the kernel's: a chain of 40 links resolves, 41 do not. The kernel's own walk of the
  // same chains (all relative, inside the root) must agree.
  for (int n : {40, 41}) {
    const std::string chain = root + "/chain" + std::to_string(n);
    put(chain + "/target", "end\n");
    for (int i = 1; i <= n; ++i) {
      link_at(i == n ? "target" : "l" + std::to_string(i + 1), chain + "/l" + std::to_string(i));
    }
    const std::string first = "/chain" + std::to_string(n) + "/l1";
    const int fd = ::open((root + first).c_str(), O_RDONLY | O_CLOEXEC);
    const bool kernel_ok = fd >= 0;
    if (fd >= 0) ::close(fd);
    std::vector<Problem> findings;
    const auto r = fs.resolve(first, &findings);
    EXPECT_EQ(r.has_value(), kernel_ok) << n << " links: " << describe(findings);
    EXPECT_EQ(r.has_value(), n == 40) << n << " links";
    if (r) EXPECT_EQ(r->image_path, "/chain40/target");
  }
}

TEST(RootFs, MissingComponentsAndTypes) {
  TempDir dir;
  const std::string root = dir.file("root");
  put(root + "/etc/passwd", "x\n");
  fs::create_directories(root + "/var/empty");
  link_at("nowhere", root + "/dangling");
  ASSERT_EQ(::mkfifo((root + "/fifo").c_str(), 0600), 0);
  RootFs fs(root);

  std::vector<Problem> findings;
  EXPECT_FALSE(fs.resolve("/nope", &findings));
  EXPECT_FALSE(fs.resolve("/nope/deeper", &findings));
  EXPECT_FALSE(fs.resolve("/etc/passwd/x", &findings));  // a file is not a folder
  EXPECT_FALSE(fs.resolve("/dangling", &findings));
  EXPECT_TRUE(findings.empty()) << describe(findings);  // missing is not a finding

  EXPECT_EQ(fs.type("/etc/passwd"), RootFs::Type::File);
  EXPECT_EQ(fs.type("/var/empty"), RootFs::Type::Directory);
  EXPECT_EQ(fs.type("/"), RootFs::Type::Directory);
  EXPECT_EQ(fs.type("/fifo"), RootFs::Type::Other);
  EXPECT_EQ(fs.type("/dangling"), RootFs::Type::Missing);
  EXPECT_EQ(fs.type("etc/passwd"), RootFs::Type::File);  // a relative path is taken from "/"
  EXPECT_EQ(fs.type("etc/../../etc/passwd"), RootFs::Type::File);
}

TEST(RootFs, ReadFileChecksTypeAndSizeBeforeReading) {
  TempDir dir;
  const std::string root = dir.file("root");
  const std::string content(1000, 'z');
  put(root + "/data/k", content);
  put(root + "/data/empty", "");
  link_at("k", root + "/data/link");
  ASSERT_EQ(::mkfifo((root + "/data/fifo").c_str(), 0600), 0);
  RootFs fs(root);

  EXPECT_EQ(fs.read_file("/data/k", 1000), content);
  EXPECT_EQ(fs.read_file("/data/link", 1000), content);
  EXPECT_EQ(fs.read_file("/data/empty", 0), "");
  EXPECT_TRUE(throws_bad_input([&] { fs.read_file("/data/k", 999); }, "too-large"));
  EXPECT_TRUE(throws_bad_input([&] { fs.read_file("/data"); }, "/data"));
  EXPECT_TRUE(throws_bad_input([&] { fs.read_file("/data/fifo"); }, "not a regular file"));  // and no hang
  EXPECT_TRUE(throws_bad_input([&] { fs.read_file("/data/missing"); }, "/data/missing"));

  std::vector<Problem> findings;
  EXPECT_FALSE(fs.try_read_file("/data/k", findings, 10));
  EXPECT_TRUE(has_finding(findings, "too-large", "/data/k")) << describe(findings);
  findings.clear();
  EXPECT_FALSE(fs.try_read_file("/data/missing", findings));
  EXPECT_TRUE(findings.empty()) << describe(findings);
  EXPECT_FALSE(fs.try_read_file("/data/fifo", findings));
  EXPECT_TRUE(has_finding(findings, "unreadable", "/data/fifo")) << describe(findings);
  findings.clear();
  EXPECT_EQ(fs.try_read_file("/data/link", findings), content);
  EXPECT_TRUE(findings.empty()) << describe(findings);
}

TEST(RootFs, UnreadableFilesAndFolders) {
  TempDir dir;
  const std::string root = dir.file("root");
  put(root + "/etc/open", "open\n");
  put(root + "/etc/secret", "secret\n");
  put(root + "/locked/inside", "inside\n");
  fs::permissions(root + "/etc/secret", fs::perms::none);
  fs::permissions(root + "/locked", fs::perms::none);
  // "nobody" must be able to walk to the root.
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);

  const auto code = run_unprivileged([&]() -> int {
    if (::access((root + "/etc/open").c_str(), R_OK) != 0) return 97;    // cannot reach the root at all
    if (::access((root + "/etc/secret").c_str(), R_OK) == 0) return 97;  // permissions not enforced
    RootFs fs(root);
    int failures = 0;
    if (fs.read_file("/etc/open") != "open\n") failures |= 1;
    if (!throws_bad_input([&] { fs.read_file("/etc/secret"); }, "unreadable")) failures |= 2;
    std::vector<Problem> findings;
    if (fs.try_read_file("/etc/secret", findings) || !has_finding(findings, "unreadable", "/etc/secret")) {
      failures |= 4;
    }
    findings.clear();
    if (fs.resolve("/locked/inside", &findings) || !has_finding(findings, "unreadable", "/locked/inside")) {
      failures |= 8;
    }
    if (fs.type("/locked/inside") != RootFs::Type::Missing) failures |= 16;
    if (!fs.list_dir("/locked").empty()) failures |= 32;
    if (fs.type("/locked") != RootFs::Type::Directory) failures |= 64;
    return failures;
  });
  if (code) {
    EXPECT_EQ(*code, 0) << "bit mask of failed checks (see the lambda); -1: the child crashed";
  } else {
    // Permissions are not enforced here (root without a way to drop privileges): only no crash, and
    // reading succeeds as it would for the loader.
    RootFs fs(root);
    std::vector<Problem> findings;
    (void)fs.try_read_file("/etc/secret", findings);
    (void)fs.resolve("/locked/inside", &findings);
    (void)fs.list_dir("/locked");
  }
  fs::permissions(root + "/locked", fs::perms::owner_all);
  fs::permissions(root + "/etc/secret", fs::perms::owner_read | fs::perms::owner_write);
}

TEST(RootFs, ListDirAndGlobAreSortedAsGlob3Sorts) {
  TempDir dir;
  const std::string root = dir.file("root");
  for (const char* name : {"b.conf", "a.conf", "c.txt", ".hidden.conf", "A.conf", "10.conf", "9.conf", "z.conf.bak"}) {
    put(root + "/etc/ld.so.conf.d/" + name, "/x\n");
  }
  for (const char* lib : {"/opt/zeta/lib/libz.so.1", "/opt/alpha/lib/liba.so", "/opt/alpha/lib/liba.so.1",
                          "/opt/alpha/doc/readme", "/opt/beta/lib/libb.so.2"}) {
    put(root + lib, "");
  }
  fs::create_directories(root + "/opt/empty/lib");
  RootFs fs(root);

  // glob(3) on the host walks the same tree (no links): it is the oracle.
  auto host_glob = [&](const std::string& pattern) {
    std::vector<std::string> out;
    glob_t g{};
    if (::glob((root + pattern).c_str(), 0, nullptr, &g) == 0) {
      for (std::size_t i = 0; i < g.gl_pathc; ++i) out.push_back(std::string(g.gl_pathv[i]).substr(root.size()));
    }
    ::globfree(&g);
    return out;
  };
  for (const char* pattern :
       {"/etc/ld.so.conf.d/*.conf", "/etc/ld.so.conf.d/*", "/opt/*/lib/*.so*", "/opt/*/lib", "/opt/[ab]*/lib/lib?.so",
        "/etc/ld.so.conf.d/a.conf", "/etc/ld.so.conf.d/missing.conf", "/nothing/*/here", "/opt/*/nope"}) {
    SCOPED_TRACE(pattern);
    EXPECT_EQ(fs.glob(pattern), host_glob(pattern));
  }
  EXPECT_EQ(
      fs.glob("/etc/ld.so.conf.d/*.conf"),
      (std::vector<std::string>{"/etc/ld.so.conf.d/10.conf", "/etc/ld.so.conf.d/9.conf", "/etc/ld.so.conf.d/A.conf",
                                "/etc/ld.so.conf.d/a.conf", "/etc/ld.so.conf.d/b.conf"}));

  EXPECT_EQ(fs.list_dir("/etc/ld.so.conf.d"), (std::vector<std::string>{".hidden.conf", "10.conf", "9.conf", "A.conf",
                                                                        "a.conf", "b.conf", "c.txt", "z.conf.bak"}));
  EXPECT_TRUE(fs.list_dir("/etc/ld.so.conf.d/a.conf").empty());
  EXPECT_TRUE(fs.list_dir("/missing").empty());
  EXPECT_TRUE(fs.list_dir("/opt/empty/lib").empty());

  // Through an absolute link, glob stays in the root (glob(3) on the host would not).
  link_at("/etc/ld.so.conf.d", root + "/etc/conf-link");
  EXPECT_EQ(fs.glob("/etc/conf-link/?.conf"),
            (std::vector<std::string>{"/etc/conf-link/9.conf", "/etc/conf-link/A.conf", "/etc/conf-link/a.conf",
                                      "/etc/conf-link/b.conf"}));
}

}  // namespace unity_test_rootfs
