// The image root and the loader's configuration read from it (probes/rootfs.cpp, probes/ldconfig.cpp).
//
// Roots are built here at test time from this machine's real libraries (libc, libm, libstdc++, copied
// through realpath) and small libraries compiled from a few lines of C. The oracles are real programs:
//   - ld.so.cache: this machine's ldconfig builds it (`ldconfig -r ROOT -c old|compat|new`) and prints it
//     (`ldconfig -p -C FILE`); the parser must give the same entries, word for word;
//   - ld.so.conf: `ldconfig -r ROOT -v -N -X` lists the folders it took from the configuration;
//   - path resolution: the kernel (open(2) on a chain of links) and glob(3), where they apply to a root
//     without links that leave it.
// Malformed caches are every prefix of a real cache, targeted corruptions of its fields, and random bytes.
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/rootfs.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;
using namespace wheelcheck;
using namespace wheelcheck::probe;
using namespace wheelcheck::test;

// --- helpers: building roots ------------------------------------------------------------------------------

void put(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  write_binary(path, content);
}

void link_at(const std::string& target, const std::string& link_path) {
  fs::create_directories(fs::path(link_path).parent_path());
  fs::create_symlink(target, link_path);
}

// Copies a real file of this machine, following its links, under its real name; returns that name.
std::string copy_real(const std::string& host_path, const std::string& dest_dir) {
  const fs::path real = fs::canonical(host_path);
  fs::create_directories(dest_dir);
  fs::copy_file(real, fs::path(dest_dir) / real.filename(), fs::copy_options::overwrite_existing);
  return real.filename().string();
}

bool has_finding(const std::vector<Finding>& findings, const std::string& kind, const std::string& path) {
  return std::any_of(findings.begin(), findings.end(),
                     [&](const Finding& f) { return f.kind == kind && f.path == path; });
}

std::string describe(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings) out += "[" + f.kind + " " + f.path + ": " + f.detail + "] ";
  return out;
}

// Runs `fn`, which must throw wheelcheck::Error of kind BadInput whose message contains `part`.
template <class Fn>
testing::AssertionResult throws_bad_input(Fn&& fn, const std::string& part = "") {
  try {
    fn();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) {
      return testing::AssertionFailure() << "Error of kind " << static_cast<int>(e.kind()) << ": " << e.what();
    }
    if (std::string(e.what()).find(part) == std::string::npos) {
      return testing::AssertionFailure() << "message \"" << e.what() << "\" lacks \"" << part << "\"";
    }
    return testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return testing::AssertionFailure() << "threw something else: " << e.what();
  }
  return testing::AssertionFailure() << "did not throw";
}

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

// --- helpers: ldconfig ------------------------------------------------------------------------------------

bool have_ldconfig() {
  return have_program("ldconfig") || fs::exists("/sbin/ldconfig") || fs::exists("/usr/sbin/ldconfig");
}
std::string ldconfig() {
  if (have_program("ldconfig")) return "ldconfig";
  return fs::exists("/sbin/ldconfig") ? "/sbin/ldconfig" : "/usr/sbin/ldconfig";
}

// One line of `ldconfig -p`: "\tlibm.so.6 (libc6,x86-64, hwcap: \"x86-64-v3\") => /usr/lib/.../libm.so.6".
struct Printed {
  std::string soname, arch, hwcaps, path;
};
struct PrintedCache {
  long count = -1;  // from "N libs found in cache"
  std::vector<Printed> entries;
  std::string generator;
};

PrintedCache ldconfig_print(const std::string& cache_file) {
  const auto r = run(ldconfig() + " -p -C " + shell_quote(cache_file));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  PrintedCache out;
  std::size_t pos = 0;
  const std::string& text = r.out;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (line.find(" libs found in cache ") != std::string::npos) {
      out.count = std::stol(line);
      continue;
    }
    const std::string gen = "Cache generated by: ";
    if (line.rfind(gen, 0) == 0) {
      out.generator = line.substr(gen.size());
      continue;
    }
    if (line.empty() || line[0] != '\t') continue;
    line.erase(0, 1);
    const std::size_t arrow = line.rfind(") => ");
    const std::size_t open = line.find(" (");
    if (arrow == std::string::npos || open == std::string::npos || open > arrow) {
      ADD_FAILURE() << "unexpected ldconfig -p line: " << line;
      continue;
    }
    Printed p;
    p.soname = line.substr(0, open);
    p.path = line.substr(arrow + 5);
    std::string inner = line.substr(open + 2, arrow - open - 2);
    const std::string quoted = ", hwcap: \"";
    if (const auto q = inner.find(quoted); q != std::string::npos) {
      p.hwcaps = inner.substr(q + quoted.size());
      if (!p.hwcaps.empty() && p.hwcaps.back() == '"') p.hwcaps.pop_back();
      inner.resize(q);
    }
    for (const char* tail : {", hwcap: ", ", OS ABI: "}) {
      if (const auto t = inner.find(tail); t != std::string::npos) inner.resize(t);
    }
    p.arch = inner;
    out.entries.push_back(p);
  }
  return out;
}

void expect_same_as_ldconfig(const LdSoCache& parsed, const PrintedCache& printed) {
  ASSERT_EQ(printed.count, static_cast<long>(printed.entries.size()));
  ASSERT_EQ(parsed.entries.size(), printed.entries.size());
  for (std::size_t i = 0; i < parsed.entries.size(); ++i) {
    SCOPED_TRACE("entry " + std::to_string(i) + ": " + printed.entries[i].soname);
    EXPECT_EQ(parsed.entries[i].soname, printed.entries[i].soname);
    EXPECT_EQ(parsed.entries[i].arch, printed.entries[i].arch);
    EXPECT_EQ(parsed.entries[i].hwcaps, printed.entries[i].hwcaps);
    EXPECT_EQ(parsed.entries[i].path, printed.entries[i].path);
  }
  EXPECT_EQ(parsed.generator, printed.generator);
}

// A root as a distribution lays it out (merged /usr, ld.so.conf.d, a glibc-hwcaps subfolder), with real
// libraries and two built here. Its ld.so.conf reaches /opt/beta/lib through a relative include, which
// `ldconfig -r` accepts only when it can chroot(2) (as root), so that include is left out otherwise.
struct CacheRoot {
  std::string root;
  bool relative_include = false;
};

CacheRoot build_cache_root(const TempDir& dir) {
  CacheRoot out;
  out.root = dir.file("root");
  const std::string lib = out.root + "/usr/lib/x86_64-linux-gnu";
  copy_real("/lib/x86_64-linux-gnu/libc.so.6", lib);
  copy_real("/lib/x86_64-linux-gnu/libm.so.6", lib);
  if (fs::exists("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")) {
    copy_real("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", lib);
  }
  copy_real("/lib/x86_64-linux-gnu/libm.so.6", lib + "/glibc-hwcaps/x86-64-v3");
  link_at("usr/lib", out.root + "/lib");

  std::string error;
  const auto alpha = build_shared(dir, "build/libalpha.so.1.2", "alpha.c", "int alpha(void) { return 1; }\n",
                                  "-Wl,-soname,libalpha.so.1", "gcc", &error);
  EXPECT_TRUE(alpha) << error;
  const auto beta = build_shared(dir, "build/libbeta.so.3", "beta.c", "int beta(void) { return 3; }\n",
                                 "-Wl,-soname,libbeta.so.3", "gcc", &error);
  EXPECT_TRUE(beta) << error;
  if (alpha) copy_real(*alpha, out.root + "/opt/alpha/lib");
  if (beta) copy_real(*beta, out.root + "/opt/beta/lib");

  out.relative_include = ::geteuid() == 0;
  put(out.root + "/etc/ld.so.conf", std::string("# the distribution's folders\ninclude /etc/ld.so.conf.d/*.conf\n") +
                                        (out.relative_include ? "include extra/*.conf\n" : ""));
  put(out.root + "/etc/ld.so.conf.d/alpha.conf", "/opt/alpha/lib\n");
  put(out.root + (out.relative_include ? "/etc/extra/beta.conf" : "/etc/ld.so.conf.d/beta.conf"), "/opt/beta/lib\n");
  return out;
}

// The caches `ldconfig -r ROOT -c FORMAT` writes, by format; a format this ldconfig refuses is left out.
std::map<std::string, std::string> real_caches(const CacheRoot& root) {
  std::map<std::string, std::string> out;
  for (const char* format : {"old", "compat", "new"}) {
    const std::string cache = root.root + "/etc/ld.so.cache";
    fs::remove(cache);
    const auto r = run(ldconfig() + " -r " + shell_quote(root.root) + " -c " + format);
    if (r.exit_code != 0 || !fs::exists(cache)) {
      ADD_FAILURE() << "ldconfig -c " << format << " failed: " << r.err;
      continue;
    }
    out[format] = read_file(cache);
  }
  return out;
}

// --- helpers: writing caches by hand ----------------------------------------------------------------------

void put_u32(std::string& b, std::size_t off, std::uint32_t v, bool big = false) {
  for (std::size_t i = 0; i < 4; ++i) {
    b[off + i] = static_cast<char>((v >> (8 * (big ? 3 - i : i))) & 0xffu);
  }
}
std::uint32_t get_u32(const std::string& b, std::size_t off) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i)
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(b[off + i])) << (8 * i);
  return v;
}
// The length an old-format cache needs: up to the NUL of the string its entries reach furthest. (Its
// string table may end with a string no old entry uses, such as a glibc-hwcaps name.)
std::size_t old_cache_needed_size(const std::string& b) {
  const std::size_t n = get_u32(b, 12);
  const std::size_t strings = 16 + 12 * n;
  std::size_t needed = strings;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t field : {4, 8}) {
      const std::size_t nul = b.find('\0', strings + get_u32(b, 16 + 12 * i + field));
      needed = std::max(needed, nul + 1);
    }
  }
  return needed;
}

void swap_bytes(std::string& b, std::size_t off, std::size_t len) {
  std::reverse(b.begin() + static_cast<std::ptrdiff_t>(off), b.begin() + static_cast<std::ptrdiff_t>(off + len));
}

// A new-format cache with one entry per flags value ("libN.so" => "/p/libN.so"), without extensions.
std::string new_cache_with_flags(const std::vector<std::int32_t>& flags) {
  const std::size_t n = flags.size();
  const std::size_t strings = 48 + 24 * n;
  std::string table;
  std::string out(strings, '\0');
  std::memcpy(out.data(), "glibc-ld.so.cache1.1", 20);
  put_u32(out, 20, static_cast<std::uint32_t>(n));
  out[28] = 2;  // little-endian
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t e = 48 + 24 * i;
    put_u32(out, e, static_cast<std::uint32_t>(flags[i]));
    put_u32(out, e + 4, static_cast<std::uint32_t>(strings + table.size()));
    table += "lib" + std::to_string(i) + ".so" + '\0';
    put_u32(out, e + 8, static_cast<std::uint32_t>(strings + table.size()));
    table += "/p/lib" + std::to_string(i) + ".so" + '\0';
  }
  put_u32(out, 24, static_cast<std::uint32_t>(table.size()));
  return out + table;
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

  std::vector<Finding> findings;
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

  std::vector<Finding> findings;
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

  std::vector<Finding> findings;
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
    std::vector<Finding> findings;
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
    std::vector<Finding> findings;
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

  std::vector<Finding> findings;
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

  std::vector<Finding> findings;
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
    std::vector<Finding> findings;
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
    std::vector<Finding> findings;
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

// ============================================================================================================
// ld.so.conf
// ============================================================================================================

TEST(LdSoConf, ReadsWhatLdconfigReads) {
  if (!have_ldconfig()) GTEST_SKIP() << "ldconfig is not installed";
  TempDir dir;
  const std::string root = dir.file("root");
  for (const char* d : {"/opt/a", "/opt/b", "/opt/c", "/opt/d", "/opt/e f", "/opt/g", "/usr/lib/x86_64-linux-gnu"}) {
    fs::create_directories(root + d);
  }
  link_at("usr/lib", root + "/lib");
  const bool relative = ::geteuid() == 0;  // `ldconfig -r` follows a relative include only after chroot(2)
  put(root + "/etc/ld.so.conf",
      "# comment line\n"
      "/opt/a\n"
      "include /etc/ld.so.conf.d/*.conf\n"
      "   /opt/b/   # trailing slash, comment\n"
      "\t/opt/c=libc6\n"
      "/opt/e f\n"
      "/\n"
      "hwcap 1 nosegneg\n"
      "/opt/missing\n"
      "/opt/a\n" +
          std::string(relative ? "include sub/*.conf\n" : "") + "/opt/g");  // no final newline
  put(root + "/etc/ld.so.conf.d/10-d.conf", "/opt/d\n/lib/x86_64-linux-gnu\n");
  put(root + "/etc/ld.so.conf.d/20-dup.conf", "/usr/lib/x86_64-linux-gnu\n/opt/a/\n");
  put(root + "/etc/ld.so.conf.d/ignored.txt", "/opt/never\n");
  put(root + "/etc/sub/x.conf", "/opt/sub-missing\n");
  RootFs fs(root);

  std::vector<Finding> findings;
  const auto conf = read_ld_so_conf(fs, findings);
  EXPECT_TRUE(findings.empty()) << describe(findings);
  std::vector<std::string> expected = {"/opt/a", "/opt/d",   "/lib/x86_64-linux-gnu", "/opt/b",
                                       "/opt/c", "/opt/e f", "/opt/missing"};
  if (relative) expected.push_back("/opt/sub-missing");
  expected.push_back("/opt/g");
  EXPECT_EQ(conf.dirs, expected);
  std::vector<std::string> files = {"/etc/ld.so.conf", "/etc/ld.so.conf.d/10-d.conf", "/etc/ld.so.conf.d/20-dup.conf"};
  if (relative) files.push_back("/etc/sub/x.conf");
  EXPECT_EQ(conf.files, files);

  // ldconfig's own list: the folders it took from the files (not its built-in ones), in order. It skips
  // folders that do not exist; so does the comparison.
  const auto r = run(ldconfig() + " -r " + shell_quote(root) + " -v -N -X");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> from_ldconfig;
  std::size_t pos = 0;
  while (pos < r.out.size()) {
    const std::size_t nl = r.out.find('\n', pos);
    const std::string line = r.out.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? r.out.size() : nl + 1;
    const std::size_t from = line.find(": (from ");
    if (line.empty() || line[0] == '\t' || from == std::string::npos) continue;
    if (line.find("(from <builtin>") != std::string::npos) continue;
    from_ldconfig.push_back(line.substr(0, from));
  }
  std::vector<std::string> existing;
  for (const auto& d : conf.dirs) {
    if (fs.type(d) == RootFs::Type::Directory) existing.push_back(d);
  }
  EXPECT_EQ(existing, from_ldconfig) << r.out;
}

TEST(LdSoConf, IncludeLoopsTerminateWithAFinding) {
  TempDir dir;
  const std::string root = dir.file("root");
  put(root + "/etc/ld.so.conf", "/opt/top\ninclude /etc/ld.so.conf\ninclude /etc/loop/*.conf\n/opt/after\n");
  put(root + "/etc/loop/a.conf", "/opt/a\ninclude b.conf\n");
  put(root + "/etc/loop/b.conf", "/opt/b\ninclude /etc/loop/a.conf\n");
  RootFs fs(root);

  std::vector<Finding> findings;
  const auto conf = read_ld_so_conf(fs, findings);
  EXPECT_EQ(conf.dirs, (std::vector<std::string>{"/opt/top", "/opt/a", "/opt/b", "/opt/after"}));
  EXPECT_TRUE(has_finding(findings, "malformed-conf", "/etc/ld.so.conf")) << describe(findings);
  EXPECT_TRUE(has_finding(findings, "malformed-conf", "/etc/loop/a.conf")) << describe(findings);
  // a.conf and b.conf are each read twice (once from the glob, once from the other), never in a cycle.
  EXPECT_EQ(std::count(conf.files.begin(), conf.files.end(), "/etc/ld.so.conf"), 1);

  // A chain deeper than the limit stops with a finding instead of recursing further.
  TempDir deep_dir;
  const std::string deep = deep_dir.file("root");
  put(deep + "/etc/ld.so.conf", "include /etc/d/1.conf\n");
  for (int i = 1; i <= 40; ++i) {
    put(deep + "/etc/d/" + std::to_string(i) + ".conf",
        "/opt/d" + std::to_string(i) + "\ninclude /etc/d/" + std::to_string(i + 1) + ".conf\n");
  }
  findings.clear();
  const auto deep_conf = read_ld_so_conf(RootFs(deep), findings);
  EXPECT_FALSE(deep_conf.dirs.empty());
  EXPECT_LT(deep_conf.dirs.size(), 40u);
  EXPECT_TRUE(std::any_of(findings.begin(), findings.end(), [](const Finding& f) {
    return f.kind == "malformed-conf" && f.detail.find("deeper") != std::string::npos;
  })) << describe(findings);
}

TEST(LdSoConf, MissingFilesLinksAndOddLines) {
  TempDir dir;
  const std::string root = dir.file("root");
  fs::create_directories(root + "/etc");
  RootFs fs(root);
  std::vector<Finding> findings;
  auto conf = read_ld_so_conf(fs, findings);
  EXPECT_TRUE(conf.dirs.empty());
  EXPECT_TRUE(conf.files.empty());
  EXPECT_TRUE(findings.empty()) << describe(findings);

  // Includes that match nothing are skipped; the conf.d folder is reached through an absolute link that
  // must be re-rooted; words of an include are separated by blanks; odd lines are read as ldconfig does.
  put(root + "/etc/ld.so.conf",
      "include /etc/none/*.conf /etc/conf.d/*.conf\n"
      "include /etc/missing.conf\n"
      "/opt/x:/opt/y\n"  // one folder named so, as glibc reads it
      "HWCAP\t0 x\n"     // ignored, in any case
      "include\n"        // no blank after it: a (relative) folder named "include"
      "relative/dir\n"
      "/opt/crlf\r\n"        // '\r' is white space: stripped
      "/opt/nul\0ignored\n"  // ldconfig reads C strings
      "/opt/last"s);
  put(root + "/alt/conf.d/1.conf", "/opt/one\n");
  link_at("/alt/conf.d", root + "/etc/conf.d");
  findings.clear();
  conf = read_ld_so_conf(fs, findings);
  EXPECT_EQ(conf.dirs, (std::vector<std::string>{"/opt/one", "/opt/x:/opt/y", "/opt/crlf", "/opt/nul", "/opt/last"}));
  EXPECT_EQ(conf.files, (std::vector<std::string>{"/etc/ld.so.conf", "/etc/conf.d/1.conf"}));
  EXPECT_EQ(findings.size(), 2u) << describe(findings);  // "include" and "relative/dir"
  EXPECT_TRUE(has_finding(findings, "malformed-conf", "/etc/ld.so.conf")) << describe(findings);

  // Another conf path, and one that is a folder.
  put(root + "/etc/other.conf", "/opt/other\n");
  findings.clear();
  EXPECT_EQ(read_ld_so_conf(fs, findings, "/etc/other.conf").dirs, (std::vector<std::string>{"/opt/other"}));
  findings.clear();
  EXPECT_TRUE(read_ld_so_conf(fs, findings, "/etc").dirs.empty());
  EXPECT_TRUE(has_finding(findings, "unreadable", "/etc")) << describe(findings);
}

// ============================================================================================================
// ld.so.cache
// ============================================================================================================

TEST(LdSoCache, ParsesWhatLdconfigWritesInEveryFormat) {
  if (!have_ldconfig()) GTEST_SKIP() << "ldconfig is not installed";
  TempDir dir;
  const auto root = build_cache_root(dir);
  const auto caches = real_caches(root);
  ASSERT_EQ(caches.size(), 3u);
  const std::map<std::string, std::string> expected_format = {{"old", "old"}, {"compat", "compat"}, {"new", "new"}};

  for (const auto& [format, bytes] : caches) {
    SCOPED_TRACE("ldconfig -c " + format);
    const std::string file = dir.file("cache-" + format);
    write_binary(file, bytes);
    const auto parsed = parse_ld_so_cache(bytes);
    EXPECT_EQ(parsed.format, expected_format.at(format));
    expect_same_as_ldconfig(parsed, ldconfig_print(file));

    // What the root holds is there, with ldconfig's words for this machine.
    auto find = [&](const std::string& soname, const std::string& hwcaps) -> const CacheEntry* {
      for (const auto& e : parsed.entries) {
        if (e.soname == soname && e.hwcaps == hwcaps) return &e;
      }
      return nullptr;
    };
    const CacheEntry* libc = find("libc.so.6", "");
    ASSERT_NE(libc, nullptr);
    EXPECT_EQ(libc->arch, "libc6,x86-64");
    EXPECT_EQ(libc->flags, 0x0303);
    EXPECT_EQ(fs::path(libc->path).filename().string(), "libc.so.6");
    const CacheEntry* alpha = find("libalpha.so.1", "");
    ASSERT_NE(alpha, nullptr);
    EXPECT_EQ(alpha->path, "/opt/alpha/lib/libalpha.so.1");
    EXPECT_NE(find("libbeta.so.3", ""), nullptr);
    if (format == "new") {
      const CacheEntry* v3 = find("libm.so.6", "x86-64-v3");
      ASSERT_NE(v3, nullptr);
      const std::string tail = "/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libm.so.6";
      ASSERT_GE(v3->path.size(), tail.size());
      EXPECT_EQ(v3->path.substr(v3->path.size() - tail.size()), tail) << v3->path;
      EXPECT_EQ(v3->hwcap >> 62, 1u);
    }
    if (format != "old") EXPECT_NE(parsed.generator.find("ldconfig"), std::string::npos);

    // Read from the root, through RootFs.
    put(root.root + "/etc/ld.so.cache", bytes);
    std::vector<Finding> findings;
    const auto from_root = read_ld_so_cache(RootFs(root.root), findings);
    EXPECT_TRUE(findings.empty()) << describe(findings);
    EXPECT_EQ(from_root.format, parsed.format);
    EXPECT_EQ(from_root.entries, parsed.entries);
    EXPECT_EQ(from_root.generator, parsed.generator);
  }
}

TEST(LdSoCache, FlagWordsAreLdconfigs) {
  EXPECT_EQ(cache_flags_name(0x0303), "libc6,x86-64");
  EXPECT_EQ(cache_flags_name(0x0a03), "libc6,AArch64");
  EXPECT_EQ(cache_flags_name(0x0003), "libc6");
  EXPECT_EQ(cache_flags_name(0x0001), "ELF");
  EXPECT_EQ(cache_flags_name(0x0503), "libc6,64bit");
  EXPECT_EQ(cache_flags_name(0x1003), "libc6,double-float");
  EXPECT_EQ(cache_flags_name(0x0903), "libc6,hard-float");
  EXPECT_EQ(cache_flags_name(0x1103), "libc6,soft-float");    // LoongArch
  EXPECT_EQ(cache_flags_name(0x1203), "libc6,double-float");  // LoongArch

  if (!have_ldconfig()) GTEST_SKIP() << "ldconfig is not installed";
  std::vector<std::int32_t> flags;
  for (std::int32_t abi = 0; abi <= 0x1400; abi += 0x100) {
    for (std::int32_t type = 0; type <= 4; ++type) flags.push_back(abi | type);
  }
  for (std::int32_t f : {0xff00, 0x7f03, -1, 0x10003, std::int32_t(0x80000303u)}) flags.push_back(f);
  TempDir dir;
  const std::string file = dir.file("flags.cache");
  const std::string bytes = new_cache_with_flags(flags);
  write_binary(file, bytes);
  const auto printed = ldconfig_print(file);
  const auto parsed = parse_ld_so_cache(bytes);
  ASSERT_EQ(printed.entries.size(), flags.size());
  ASSERT_EQ(parsed.entries.size(), flags.size());
  for (std::size_t i = 0; i < flags.size(); ++i) {
    SCOPED_TRACE("flags " + std::to_string(flags[i]));
    EXPECT_EQ(parsed.entries[i].flags, flags[i]);
    EXPECT_EQ(parsed.entries[i].arch, cache_flags_name(flags[i]));
    const int abi = flags[i] & 0xff00;
    if (abi == 0x1100 || abi == 0x1200) {
      // LoongArch: glibc 2.36's ldconfig prints the number; a later one may print words.
      const std::string number = "," + std::to_string(abi);
      const std::string& ours = parsed.entries[i].arch;
      const std::string theirs = printed.entries[i].arch;
      EXPECT_TRUE(theirs == ours || theirs.substr(theirs.find(',')) == number) << theirs << " vs " << ours;
    } else {
      EXPECT_EQ(parsed.entries[i].arch, printed.entries[i].arch);
    }
  }
}

TEST(LdSoCache, EveryTruncationIsBadInput) {
  if (!have_ldconfig()) GTEST_SKIP() << "ldconfig is not installed";
  TempDir dir;
  const auto root = build_cache_root(dir);
  const auto caches = real_caches(root);
  ASSERT_EQ(caches.size(), 3u);
  for (const auto& [format, bytes] : caches) {
    SCOPED_TRACE(format);
    ASSERT_NO_THROW(parse_ld_so_cache(bytes));
    // Every byte of a new or compat cache is needed (the extension directory reaches the end).
    const std::size_t needed = format == "old" ? old_cache_needed_size(bytes) : bytes.size();
    ASSERT_LE(needed, bytes.size());
    for (std::size_t n = 0; n < needed; ++n) {
      EXPECT_TRUE(throws_bad_input([&] { parse_ld_so_cache(std::string_view(bytes).substr(0, n)); }, "ld.so.cache"))
          << "prefix of " << n << " bytes";
    }
    // In a root, a truncated cache is a finding and no entries.
    put(root.root + "/etc/ld.so.cache", bytes.substr(0, bytes.size() / 2));
    std::vector<Finding> findings;
    const auto cache = read_ld_so_cache(RootFs(root.root), findings);
    EXPECT_EQ(cache.format, "none");
    EXPECT_TRUE(cache.entries.empty());
    EXPECT_TRUE(has_finding(findings, "malformed-cache", "/etc/ld.so.cache")) << describe(findings);
  }
}

TEST(LdSoCache, CorruptFieldsAreBadInput) {
  if (!have_ldconfig()) GTEST_SKIP() << "ldconfig is not installed";
  TempDir dir;
  const auto root = build_cache_root(dir);
  const auto caches = real_caches(root);
  ASSERT_EQ(caches.count("new"), 1u);
  ASSERT_EQ(caches.count("old"), 1u);
  const std::string good = caches.at("new");
  const std::string old = caches.at("old");
  const std::size_t old_needed = old_cache_needed_size(old);
  const auto size = static_cast<std::uint32_t>(good.size());
  const std::uint32_t ext = get_u32(good, 32);
  ASSERT_NE(ext, 0u);
  ASSERT_LT(ext + 24, size);

  auto mutated = [&](const std::function<void(std::string&)>& change) {
    std::string b = good;
    change(b);
    return b;
  };
  struct Case {
    const char* name;
    std::string bytes;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"bad magic", mutated([](std::string& b) { b[0] = 'X'; }), "not a cache file"},
      {"unknown version", mutated([](std::string& b) { b[19] = '0'; }), "version"},
      {"nlibs huge", mutated([](std::string& b) { put_u32(b, 20, 0xffffffffu); }), "nlibs"},
      {"nlibs one too many", mutated([&](std::string& b) { put_u32(b, 20, (size - 48) / 24 + 1); }), "nlibs"},
      {"key out of bounds", mutated([&](std::string& b) { put_u32(b, 48 + 4, size); }), "outside"},
      {"value far out of bounds", mutated([](std::string& b) { put_u32(b, 48 + 8, 0xffffffffu); }), "outside"},
      {"unterminated string", mutated([&](std::string& b) { put_u32(b, 48 + 4, size - 3); }), "not terminated"},
      {"marked invalid", mutated([](std::string& b) { b[28] = 1; }), "invalid"},
      {"extension misaligned", mutated([&](std::string& b) { put_u32(b, 32, ext + 2); }), "aligned"},
      {"extension beyond the end", mutated([&](std::string& b) { put_u32(b, 32, size + 4); }), "extension"},
      {"extension magic", mutated([&](std::string& b) { put_u32(b, ext, 0); }), "extension directory"},
      {"extension count huge", mutated([&](std::string& b) { put_u32(b, ext + 4, 0xffffffffu); }), "extension"},
      {"section beyond the end", mutated([&](std::string& b) { put_u32(b, ext + 8 + 12, 0xfffffff0u); }),
       "extension section"},
      {"old: nlibs huge", old.substr(0, 12) + std::string("\xff\xff\xff\x7f", 4) + old.substr(16), "nlibs"},
      {"old: last string unterminated", old.substr(0, old_needed - 1) + "x", "not terminated"},
      {"old: key out of bounds", old.substr(0, 20) + std::string("\xff\xff\xff\x0f", 4) + old.substr(24), "outside"},
      {"empty", "", "empty"},
      {"magic alone", "glibc-ld.so.cache", "version"},
      {"old magic alone", "ld.so-1.7.0", "old-format header"},
  };
  for (const auto& c : cases) {
    EXPECT_TRUE(throws_bad_input([&] { parse_ld_so_cache(c.bytes); }, c.message)) << c.name;
  }
}

TEST(LdSoCache, BigEndianCachesAreRead) {
  if (!have_ldconfig()) GTEST_SKIP() << "ldconfig is not installed";
  TempDir dir;
  const auto root = build_cache_root(dir);
  const auto caches = real_caches(root);
  ASSERT_EQ(caches.count("new"), 1u);
  const std::string little = caches.at("new");
  const auto expected = parse_ld_so_cache(little);

  // The same cache as a big-endian ldconfig (s390x) writes it: every integer swapped, flag 3.
  std::string big = little;
  const std::uint32_t nlibs = get_u32(little, 20);
  const std::uint32_t ext = get_u32(little, 32);
  for (std::size_t off : {20, 24, 32}) swap_bytes(big, off, 4);
  big[28] = 3;
  for (std::uint32_t i = 0; i < nlibs; ++i) {
    const std::size_t e = 48 + 24 * std::size_t{i};
    for (std::size_t f : {0, 4, 8, 12}) swap_bytes(big, e + f, 4);
    swap_bytes(big, e + 16, 8);
  }
  const std::uint32_t count = get_u32(little, ext + 4);
  swap_bytes(big, ext, 4);
  swap_bytes(big, ext + 4, 4);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t s = ext + 8 + 16 * std::size_t{i};
    const std::uint32_t tag = get_u32(little, s);
    const std::uint32_t offset = get_u32(little, s + 8);
    const std::uint32_t length = get_u32(little, s + 12);
    for (std::size_t f : {0, 4, 8, 12}) swap_bytes(big, s + f, 4);
    if (tag == 1) {
      for (std::uint32_t j = 0; j < length / 4; ++j) swap_bytes(big, offset + 4 * std::size_t{j}, 4);
    }
  }
  const auto parsed = parse_ld_so_cache(big);
  EXPECT_EQ(parsed.format, "new");
  EXPECT_EQ(parsed.entries, expected.entries);
  EXPECT_EQ(parsed.generator, expected.generator);

  // Without the flag (an ldconfig older than 2.33), the byte order is found from the count.
  big[28] = 0;
  EXPECT_EQ(parse_ld_so_cache(big).entries, expected.entries);
}

TEST(LdSoCache, RandomBytesNeverCrash) {
  std::mt19937 rng(20240611);
  auto random_bytes = [&](std::size_t n) {
    std::string b(n, '\0');
    for (auto& c : b) c = static_cast<char>(rng() & 0xffu);
    return b;
  };
  // Without a magic: always rejected.
  for (int i = 0; i < 2000; ++i) {
    std::string b = random_bytes(rng() % 600);
    if (b.rfind("ld.so-1.7.0", 0) == 0 || b.rfind("glibc-ld.so.cache", 0) == 0) continue;
    EXPECT_TRUE(throws_bad_input([&] { parse_ld_so_cache(b); }, "ld.so.cache")) << i;
  }
  // With a magic and random rest, and a real-looking cache with random damage: parsed or BadInput.
  const std::string base = new_cache_with_flags({0x0303, 0x0a03, 0x0003, 0x0303});
  for (int i = 0; i < 3000; ++i) {
    std::string b;
    switch (i % 3) {
      case 0: b = "glibc-ld.so.cache1.1" + random_bytes(rng() % 400); break;
      case 1: b = std::string("ld.so-1.7.0\0", 12) + random_bytes(rng() % 400); break;
      default:
        b = base;
        for (int k = 0, n = 1 + static_cast<int>(rng() % 8); k < n; ++k) {
          b[rng() % b.size()] = static_cast<char>(rng() & 0xffu);
        }
        break;
    }
    try {
      const auto parsed = parse_ld_so_cache(b);
      for (const auto& e : parsed.entries) EXPECT_LE(e.soname.size() + e.path.size(), b.size());
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    }
  }
}

TEST(LdSoCache, ReadFromRootReportsWhatItCannotUse) {
  TempDir dir;
  const std::string root = dir.file("root");
  fs::create_directories(root + "/etc");
  RootFs fs(root);
  std::vector<Finding> findings;
  EXPECT_EQ(read_ld_so_cache(fs, findings).format, "none");  // no cache: no finding
  EXPECT_TRUE(findings.empty()) << describe(findings);

  put(root + "/etc/ld.so.cache", "");
  EXPECT_EQ(read_ld_so_cache(fs, findings).format, "none");
  EXPECT_TRUE(has_finding(findings, "malformed-cache", "/etc/ld.so.cache")) << describe(findings);

  fs::remove(root + "/etc/ld.so.cache");
  fs::create_directories(root + "/etc/ld.so.cache");
  findings.clear();
  EXPECT_EQ(read_ld_so_cache(fs, findings).format, "none");
  EXPECT_TRUE(has_finding(findings, "unreadable", "/etc/ld.so.cache")) << describe(findings);

  // Through an absolute link, as some distributions keep it under /var.
  fs::remove(root + "/etc/ld.so.cache");
  const std::string bytes = new_cache_with_flags({0x0303, 0x0003});
  put(root + "/var/cache/ld.so.cache", bytes);
  link_at("/var/cache/ld.so.cache", root + "/etc/ld.so.cache");
  findings.clear();
  const auto cache = read_ld_so_cache(fs, findings);
  EXPECT_TRUE(findings.empty()) << describe(findings);
  EXPECT_EQ(cache.format, "new");
  ASSERT_EQ(cache.entries.size(), 2u);
  EXPECT_EQ(cache.entries[0].soname, "lib0.so");
  EXPECT_EQ(cache.entries[0].path, "/p/lib0.so");
  EXPECT_EQ(cache.entries[1].arch, "libc6");
}
