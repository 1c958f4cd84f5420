// Bad input through the command line: hostile wheels and malformed ELF members. Each must end in a clear
// error or finding, exit code 2, within bounded time and memory, and write nothing outside the profile cache.
//
// The archives come from tests/tools/hostile_zip.py (one defect each, in an otherwise proper wheel); the ELF
// members are a small shared library built here with gcc and damaged byte by byte (ELF64 little-endian
// offsets read from its own headers). Every case is checked three ways: the library (inspect_wheel or
// read_elf) for the precise outcome, the command line for its exit code and message, and the command line
// again in a sandbox (its own working folder, HOME, TMPDIR and --cache-dir) to see what it wrote.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "support.hpp"
#include "wheelcheck/bytes.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/wheel.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_bad_input_cli {

namespace {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using wheelcheck::test::run;  // not the namespace wheelcheck::run (a unity batch may have its header)

// --- helpers: outcomes ------------------------------------------------------------------------------------

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs `fn`, which must throw wheelcheck::Error of kind BadInput whose message contains every part.
template <class Fn>
testing::AssertionResult throws_bad_input(Fn&& fn, const std::vector<std::string>& parts) {
  try {
    fn();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) {
      return testing::AssertionFailure() << "threw Error of kind " << static_cast<int>(e.kind())
                                         << " (not BadInput): " << e.what();
    }
    for (const auto& p : parts) {
      if (!contains(e.what(), p)) {
        return testing::AssertionFailure() << "message \"" << e.what() << "\" lacks \"" << p << "\"";
      }
    }
    return testing::AssertionSuccess() << e.what();
  } catch (const std::exception& e) {
    return testing::AssertionFailure() << "threw a non-wheelcheck exception: " << e.what();
  }
  return testing::AssertionFailure() << "did not throw";
}

std::string describe(const std::vector<wheel::Problem>& problems) {
  std::string out;
  for (const auto& p : problems) out += "\n  " + p.kind + " " + p.path + ": " + p.detail;
  return out.empty() ? " (none)" : out;
}

// The profile's problem of this kind at this path, if any.
const wheel::Problem* find_problem(const WheelProfile& p, const std::string& kind, const std::string& path) {
  for (const auto& pr : p.problems) {
    if (pr.kind == kind && pr.path == path) return &pr;
  }
  return nullptr;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// --- helpers: the command line ----------------------------------------------------------------------------

struct CliResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
  double seconds = 0;
};

struct CliEnv {
  std::string cwd;
  std::vector<std::pair<std::string, std::optional<std::string>>> env;  // nullopt: unset
  unsigned timeout_s = 120;  // SIGALRM: a hang fails the test instead of stalling the suite
};

// The peak resident memory of wheelcheck itself, in KiB, measured by GNU time (a fork of this test
// process would carry the test's own high-water mark into its rusage). nullopt, with a note, when
// /usr/bin/time is absent.
std::optional<long> peak_rss_kb(const std::vector<std::string>& args) {
  if (!std::filesystem::exists("/usr/bin/time")) {
    std::cout << "[   NOTE   ] /usr/bin/time absent (scripts/install-deps.sh installs it): memory not measured\n";
    return std::nullopt;
  }
  TempDir io;
  std::string cmd = "/usr/bin/time -f %M -o " + shell_quote(io.file("rss")) + " " + shell_quote(binary_path());
  for (const auto& a : args) cmd += " " + shell_quote(a);
  run(cmd + " >/dev/null 2>&1");
  // "Command exited with non-zero status 2" comes first when it did; the figure is the last line.
  std::string text = read_file(io.file("rss"));
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const auto nl = text.find_last_of('\n');
  const std::string last = nl == std::string::npos ? text : text.substr(nl + 1);
  if (last.empty() || last.find_first_not_of("0123456789") != std::string::npos) {
    ADD_FAILURE() << "GNU time wrote: " << text;
    return std::nullopt;
  }
  return std::stol(last);
}

// Runs the wheelcheck executable directly (fork + exec, no shell), so that wait4() reports its own peak
// memory and the alarm reaches it rather than a shell.
CliResult run_cli(const std::vector<std::string>& args, const CliEnv& cli_env = {}) {
  TempDir io;
  const std::string out_path = io.file("out"), err_path = io.file("err");
  std::vector<std::string> argv_strings{binary_path()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (!cli_env.cwd.empty() && ::chdir(cli_env.cwd.c_str()) != 0) ::_exit(126);
    for (const auto& [name, value] : cli_env.env) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
    ::alarm(cli_env.timeout_s);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("wait4 failed");
  }
  CliResult r;
  r.seconds = seconds_since(start);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

std::string show(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + (r.signal != 0 ? " (signal " + std::to_string(r.signal) + ")" : "") +
         "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

// `wheelcheck inspect --no-cache -q [extra] WHEEL` fails with exit code 2 and one line on stderr:
// "wheelcheck: error: ..." naming the wheel and containing `part`.
void expect_cli_error(const std::string& wheel, const std::string& part, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"inspect", "--no-cache", "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(wheel);
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << show(r);
  EXPECT_EQ(r.err.rfind("wheelcheck: error: ", 0), 0U) << show(r);
  EXPECT_TRUE(contains(r.err, part)) << "stderr lacks \"" << part << "\"\n" << show(r);
  EXPECT_TRUE(contains(r.err, fs::path(wheel).filename().string())) << "stderr does not name the wheel\n" << show(r);
  EXPECT_FALSE(r.err.empty() || r.err.back() != '\n' || r.err.find('\n') != r.err.size() - 1)
      << "stderr is not exactly one line\n"
      << show(r);
}

// The same command reads the wheel and exits 2 because of a finding: the report on stdout carries the line
// "KIND PATH: ..." (with `part` in the detail), and stderr holds at most one line.
void expect_cli_finding(const std::string& wheel, const std::string& kind, const std::string& path,
                        const std::string& part, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"inspect", "--no-cache", "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(wheel);
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << show(r);
  const std::string line = kind + " " + path + ": ";
  const auto at = r.out.find(line);
  ASSERT_NE(at, std::string::npos) << "the report lacks \"" << line << "\"\n" << show(r);
  const auto from = at + line.size();
  const std::string detail = r.out.substr(from, r.out.find('\n', from) - from);
  EXPECT_TRUE(contains(detail, part)) << "finding \"" << line << detail << "\" lacks \"" << part << "\"";
  EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 1) << show(r);
}

// Runs `wheelcheck inspect --cache-dir ROOT/cache -q [extra] WHEEL` with its working folder ROOT/work/a/b
// (so that "../../x" would land inside ROOT), HOME=ROOT/home and TMPDIR=ROOT/tmp, then checks that every
// file it left lies under ROOT/cache and that no file named `forbidden` (e.g. passwd) appeared anywhere.
// Returns how many files the cache holds.
std::size_t expect_writes_only_cache(const std::string& wheel, int expected_exit,
                                     const std::vector<std::string>& extra = {},
                                     const std::string& forbidden = "passwd") {
  TempDir root;
  const fs::path base(root.path());
  const std::set<fs::path> made{base / "home", base / "tmp", base / "work", base / "work/a", base / "work/a/b"};
  for (const auto& d : made) fs::create_directories(d);
  std::vector<std::string> args{"inspect", "--cache-dir", (base / "cache").string(), "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(wheel);
  CliEnv env;
  env.cwd = (base / "work/a/b").string();
  env.env = {{"HOME", (base / "home").string()},
             {"TMPDIR", (base / "tmp").string()},
             {"XDG_CACHE_HOME", std::nullopt},
             {"WHEELCHECK_CACHE_DIR", std::nullopt}};
  const auto r = run_cli(args, env);
  EXPECT_EQ(r.exit_code, expected_exit) << show(r);
  const fs::path cache = base / "cache";
  std::size_t cached = 0;
  for (auto it = fs::recursive_directory_iterator(base); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path p = it->path();
    const auto rel = p.lexically_relative(cache).string();
    const bool in_cache = rel == "." || rel.rfind("..", 0) != 0;
    if (p.filename() == forbidden) ADD_FAILURE() << "a file named " << forbidden << " appeared: " << p;
    if (in_cache) {
      if (it->is_regular_file()) ++cached;
      continue;
    }
    if (made.count(p) == 0) ADD_FAILURE() << "wrote outside the cache: " << p;
  }
  return cached;
}

// --- helpers: building hostile input ----------------------------------------------------------------------

#define REQUIRE_PYTHON()                                                                  \
  do {                                                                                    \
    if (!have_program("python3")) GTEST_SKIP() << "python3 is needed for hostile_zip.py"; \
  } while (0)

// tests/tools/hostile_zip.py KIND OUT ARGS: NAME-1.0-py3-none-any.whl. NAME is neutral ("sample"), so that
// a message naming the wheel or member cannot pass for one that names the defect.
std::string hostile(const TempDir& dir, const std::string& kind, const std::vector<std::string>& args = {},
                    const std::string& name = "sample") {
  const std::string out = dir.file(name + "-1.0-py3-none-any.whl");
  std::string cmd = "python3 " + shell_quote(source_dir() + "/tests/tools/hostile_zip.py") + " " + shell_quote(kind) +
                    " " + shell_quote(out);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  const auto r = run(cmd);
  if (r.exit_code != 0) throw std::runtime_error("hostile_zip.py " + kind + " failed: " + r.err);
  return out;
}

// --- archive tests ----------------------------------------------------------------------------------------

// The control: hostile_zip.py's writer, with no defect, makes a wheel that passes every check. So each
// failure below comes from its one defect, not from the writer.
TEST(BadInput, HostileZipControlIsClean) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "valid");
  const auto p = inspect_wheel(wheel);
  EXPECT_FALSE(p.has_problems()) << describe(p.problems) << describe(p.record_problems);
  EXPECT_TRUE(p.record_verified);
  EXPECT_EQ(p.member_count, 4U);
  const auto r = run_cli({"inspect", "--no-cache", "-q", wheel});
  EXPECT_EQ(r.exit_code, 0) << show(r);
  // The sandbox check sees the cache being written (so --cache-dir is honoured) and nothing else.
  EXPECT_GT(expect_writes_only_cache(wheel, 0), 0U);
}

// A valid wheel cut in half loses its end of central directory record: libzip finds no zip there, and the
// error must say so rather than report an empty wheel.
TEST(BadInput, TruncatedWheel) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "truncated");
  EXPECT_TRUE(throws_bad_input([&] { inspect_wheel(wheel); }, {"not a zip archive", wheel}));
  expect_cli_error(wheel, "not a zip archive");
  expect_writes_only_cache(wheel, 2);
}

// A zero-byte file named like a wheel: the extreme truncation. It must be rejected as not a zip, rather
// than read as an empty archive (which would surface only as a missing .dist-info).
TEST(BadInput, EmptyWheelFile) {
  TempDir dir;
  const auto wheel = dir.write("empty-1.0-py3-none-any.whl", "");
  EXPECT_TRUE(throws_bad_input([&] { inspect_wheel(wheel); }, {"not a zip archive"}));
  expect_cli_error(wheel, "not a zip archive");
  expect_writes_only_cache(wheel, 2);
}

// Random text with a wheel's name: no zip signature anywhere.
TEST(BadInput, NotAZipFile) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "notzip");
  EXPECT_TRUE(throws_bad_input([&] { inspect_wheel(wheel); }, {"not a zip archive", wheel}));
  expect_cli_error(wheel, "not a zip archive");
  expect_writes_only_cache(wheel, 2);
}

// A zip bomb: about 1 KB of raw deflate that honestly declares 1 MiB of zeros, against a 512 KiB member
// limit. The declared size alone condemns it ("member-too-large"); it must never be inflated.
TEST(BadInput, ZipBombPastMemberLimit) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "bomb", {"1M"});
  ASSERT_LT(fs::file_size(wheel), 4096U) << "the bomb should be about 1 KB compressed";
  InspectOptions options;
  options.limits.max_member_size = 512 << 10;
  const auto p = inspect_wheel(wheel, options);
  const auto* pr = find_problem(p, "member-too-large", "sample/bomb.bin");
  ASSERT_NE(pr, nullptr) << describe(p.problems);
  EXPECT_TRUE(contains(pr->detail, "--max-member-size")) << pr->detail;
  expect_cli_finding(wheel, "member-too-large", "sample/bomb.bin", "over the limit", {"--max-member-size", "512K"});
  expect_writes_only_cache(wheel, 2, {"--max-member-size", "512K"});
}

// The same at scale: 64 KiB of deflate declaring 64 MiB of zeros, limit 1 MiB. Skipped unread, so the
// library and the command line both finish at once and the process stays small.
TEST(BadInput, LargeZipBombIsNeverInflated) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "bomb", {"64M"});
  ASSERT_LT(fs::file_size(wheel), 256U << 10);
  InspectOptions options;
  options.limits.max_member_size = 1 << 20;
  const auto start = std::chrono::steady_clock::now();
  const auto p = inspect_wheel(wheel, options);
  EXPECT_LT(seconds_since(start), 60.0);  // a hang guard, not a speed target (bench/ has those)
  ASSERT_NE(find_problem(p, "member-too-large", "sample/bomb.bin"), nullptr) << describe(p.problems);
  const auto r = run_cli({"inspect", "--no-cache", "-q", "--max-member-size", "1M", wheel});
  EXPECT_EQ(r.exit_code, 2) << show(r);
  EXPECT_LT(r.seconds, 60.0);  // a hang guard
  // Inflating the 64 MiB member would take the process 64 MiB past what the same binary needs for the same
  // wheel with a 4 KiB member (its baseline: about 23 MiB here, 70 MiB under AddressSanitizer).
  const auto control = hostile(dir, "bomb", {"4K"}, "control");
  const auto baseline = peak_rss_kb({"inspect", "--no-cache", "-q", "--max-member-size", "1M", control});
  if (auto rss = peak_rss_kb({"inspect", "--no-cache", "-q", "--max-member-size", "1M", wheel}); rss && baseline) {
    EXPECT_LT(*rss, *baseline + (32L << 10)) << "peak memory in KiB, against " << *baseline << " KiB for 4 KiB";
  }
  expect_cli_finding(wheel, "member-too-large", "sample/bomb.bin", "64.0 MiB", {"--max-member-size", "1M"});
  expect_writes_only_cache(wheel, 2, {"--max-member-size", "1M"});
}

// The bomb against the total limit instead: members declaring more than --max-total-size make the whole
// wheel unreadable, a thrown BadInput naming the option.
TEST(BadInput, ZipBombPastTotalLimit) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "bomb", {"64M"});
  InspectOptions options;
  options.limits.max_total_size = 1 << 20;
  EXPECT_TRUE(throws_bad_input([&] { inspect_wheel(wheel, options); }, {"--max-total-size"}));
  expect_cli_error(wheel, "--max-total-size", {"--max-total-size", "1M"});
  expect_writes_only_cache(wheel, 2, {"--max-total-size", "1M"});
}

// A member whose local and central headers both declare 1000 bytes while its deflate stream (with the
// matching CRC) holds 64 KiB: the reader must stop one byte past the declared size with an error.
TEST(BadInput, LyingSizeStopsAtDeclaredSize) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "lying-size");
  const auto p = inspect_wheel(wheel);
  const auto* pr = find_problem(p, "corrupt-member", "sample/data.bin");
  ASSERT_NE(pr, nullptr) << describe(p.problems);
  EXPECT_TRUE(contains(pr->detail, "declared size")) << pr->detail;
  expect_cli_finding(wheel, "corrupt-member", "sample/data.bin", "declared size");
  expect_writes_only_cache(wheel, 2);
}

// A lying size used as a bomb: 256 MiB of zeros declared as 1 KiB, so no limit sees it coming. The
// stream must stop at the declared size: quickly, and without the memory to hold what it would inflate to.
TEST(BadInput, LyingSizeBombStopsEarly) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "lying-size", {"256M", "1K"});
  const auto start = std::chrono::steady_clock::now();
  const auto p = inspect_wheel(wheel);
  EXPECT_LT(seconds_since(start), 60.0);  // a hang guard, not a speed target (bench/ has those)
  const auto* pr = find_problem(p, "corrupt-member", "sample/data.bin");
  ASSERT_NE(pr, nullptr) << describe(p.problems);
  EXPECT_TRUE(contains(pr->detail, "declared size of 1024 bytes")) << pr->detail;
  const auto r = run_cli({"inspect", "--no-cache", "-q", wheel});
  EXPECT_EQ(r.exit_code, 2) << show(r);
  EXPECT_LT(r.seconds, 60.0);  // a hang guard
  // Against the same lie over 4 KiB (the binary's own baseline, far larger under AddressSanitizer).
  const auto control = hostile(dir, "lying-size", {"4K", "1K"}, "control");
  const auto baseline = peak_rss_kb({"inspect", "--no-cache", "-q", control});
  if (auto rss = peak_rss_kb({"inspect", "--no-cache", "-q", wheel}); rss && baseline)
    EXPECT_LT(*rss, *baseline + (96L << 10)) << "peak memory in KiB, against " << *baseline << " KiB for 4 KiB";
  expect_writes_only_cache(wheel, 2);
}

// The opposite lie: the headers declare 1000 bytes more than the deflate stream holds. The stream ends
// early, and the error gives both numbers.
TEST(BadInput, ShortSizeIsReported) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "short-size");
  const auto p = inspect_wheel(wheel);
  const auto* pr = find_problem(p, "corrupt-member", "sample/data.bin");
  ASSERT_NE(pr, nullptr) << describe(p.problems);
  EXPECT_TRUE(contains(pr->detail, "4096") && contains(pr->detail, "declares 5096")) << pr->detail;
  expect_cli_finding(wheel, "corrupt-member", "sample/data.bin", "declares 5096");
  expect_writes_only_cache(wheel, 2);
}

// Sizes right, data intact, CRC-32 wrong in both headers: the check at the end of the stream catches it.
TEST(BadInput, BadCrcIsReported) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "bad-crc");
  const auto p = inspect_wheel(wheel);
  const auto* pr = find_problem(p, "corrupt-member", "sample/data.bin");
  ASSERT_NE(pr, nullptr) << describe(p.problems);
  EXPECT_TRUE(contains(pr->detail, "CRC")) << pr->detail;
  expect_cli_finding(wheel, "corrupt-member", "sample/data.bin", "CRC");
  expect_writes_only_cache(wheel, 2);
}

// Members named ../../etc/passwd and /etc/passwd: each is an "unsafe-path" finding, and nothing is ever
// extracted: no passwd file appears under the working folder, HOME, TMPDIR or the cache, and the real
// /etc/passwd is untouched.
TEST(BadInput, TraversalNamesAreReportedNotExtracted) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "traversal");
  const auto p = inspect_wheel(wheel);
  const auto* dotdot = find_problem(p, "unsafe-path", "../../etc/passwd");
  const auto* absolute = find_problem(p, "unsafe-path", "/etc/passwd");
  ASSERT_NE(dotdot, nullptr) << describe(p.problems);
  ASSERT_NE(absolute, nullptr) << describe(p.problems);
  EXPECT_TRUE(contains(dotdot->detail, "..")) << dotdot->detail;
  EXPECT_TRUE(contains(absolute->detail, "absolute")) << absolute->detail;
  expect_cli_finding(wheel, "unsafe-path", "../../etc/passwd", "traversal");
  expect_cli_finding(wheel, "unsafe-path", "/etc/passwd", "absolute");
  struct stat before {
  }, after{};
  const bool had_passwd = ::stat("/etc/passwd", &before) == 0;
  expect_writes_only_cache(wheel, 2);
  if (had_passwd) {
    ASSERT_EQ(::stat("/etc/passwd", &after), 0);
    EXPECT_EQ(before.st_size, after.st_size);
    EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
    EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
  }
  EXPECT_FALSE(fs::exists("/tmp/etc/passwd"));
}

// The same name twice (two different contents for NAME/__init__.py): which one is "the" file is up to the
// reader, so it must be called out, as a "duplicate-name" finding or an error that says "duplicate".
TEST(BadInput, DuplicateNamesAreReported) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "duplicate");
  std::optional<WheelProfile> p;
  std::string error;
  try {
    p = inspect_wheel(wheel);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    error = e.what();
  }
  if (p) {
    EXPECT_NE(find_problem(*p, "duplicate-name", "sample/__init__.py"), nullptr) << describe(p->problems);
  } else {
    EXPECT_TRUE(contains(error, "duplicate")) << "the error does not say what is wrong: " << error;
  }
  const auto r = run_cli({"inspect", "--no-cache", "-q", wheel});
  EXPECT_EQ(r.exit_code, 2) << show(r);
  EXPECT_TRUE(contains(r.out + r.err, "duplicate")) << "neither report nor error mentions the duplicate\n" << show(r);
  EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 1) << show(r);
  expect_writes_only_cache(wheel, 2);
}

// A member encrypted with traditional PKWARE encryption (bit 0 of the flags, a 12-byte encryption header
// before the data): it cannot be read, so it is an "encrypted-member" finding and is never inflated.
TEST(BadInput, EncryptedMemberIsReported) {
  REQUIRE_PYTHON();
  TempDir dir;
  const auto wheel = hostile(dir, "encrypted");
  const auto p = inspect_wheel(wheel);
  ASSERT_NE(find_problem(p, "encrypted-member", "sample/secret.py"), nullptr) << describe(p.problems);
  EXPECT_EQ(find_problem(p, "corrupt-member", "sample/secret.py"), nullptr) << describe(p.problems);
  expect_cli_finding(wheel, "encrypted-member", "sample/secret.py", "encrypted");
  expect_writes_only_cache(wheel, 2);
}

// --- malformed ELF ----------------------------------------------------------------------------------------

std::uint64_t get_le(const std::string& b, std::size_t off, int n) {
  if (off + static_cast<std::size_t>(n) > b.size()) throw std::runtime_error("ELF fixture: read past the end");
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[off + static_cast<std::size_t>(i)]);
  return v;
}

void put_le(std::string& b, std::size_t off, int n, std::uint64_t v) {
  if (off + static_cast<std::size_t>(n) > b.size()) throw std::runtime_error("ELF fixture: write past the end");
  for (int i = 0; i < n; ++i) b[off + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// ELF64 little-endian offsets: e_phoff 32, e_shoff 40, e_phentsize 54, e_phnum 56, e_shnum 60;
// Elf64_Phdr: p_type 0, p_offset 8, p_filesz 32; Elf64_Dyn: d_tag 0, d_val 8 (16 bytes).
constexpr std::size_t k_e_phoff = 32, k_e_phentsize = 54, k_e_phnum = 56;
constexpr std::uint32_t k_pt_dynamic = 2;
constexpr std::uint64_t k_dt_strsz = 10;

// The file offset of PT_DYNAMIC's program header.
std::size_t dynamic_phdr(const std::string& elf) {
  const auto phoff = get_le(elf, k_e_phoff, 8), phentsize = get_le(elf, k_e_phentsize, 2);
  const auto phnum = get_le(elf, k_e_phnum, 2);
  for (std::uint64_t i = 0; i < phnum; ++i) {
    const auto at = static_cast<std::size_t>(phoff + i * phentsize);
    if (get_le(elf, at, 4) == k_pt_dynamic) return at;
  }
  throw std::runtime_error("ELF fixture: no PT_DYNAMIC");
}

// The file offset of the DT_STRSZ entry's value, walking the PT_DYNAMIC entries.
std::size_t strsz_entry(const std::string& elf) {
  const auto ph = dynamic_phdr(elf);
  const auto offset = get_le(elf, ph + 8, 8), filesz = get_le(elf, ph + 32, 8);
  for (std::uint64_t at = offset; at + 16 <= offset + filesz; at += 16) {
    const auto tag = get_le(elf, static_cast<std::size_t>(at), 8);
    if (tag == 0) break;
    if (tag == k_dt_strsz) return static_cast<std::size_t>(at + 8);
  }
  throw std::runtime_error("ELF fixture: no DT_STRSZ");
}

// A small, real shared library (SONAME, a DT_NEEDED on libc, versioned imports), built once per run.
struct ElfFixture {
  TempDir dir;
  std::string path;
  std::string bytes;
  std::string skip_reason;
};

const ElfFixture& elf_fixture() {
  static const std::unique_ptr<ElfFixture> fixture = [] {
    auto f = std::make_unique<ElfFixture>();
    if (!have_program("gcc") || !have_program("python3")) {
      f->skip_reason = "gcc (to build the ELF fixture) and python3 (make_wheel.py) are needed";
      return f;
    }
    const std::string source =
        "#include <stdio.h>\n"
        "#include <string.h>\n"
        "int wc_answer(void) { return 42; }\n"
        "void wc_hello(const char* who) { printf(\"hello %s (%zu)\\n\", who, strlen(who)); }\n";
    std::string error;
    const auto built =
        build_shared(f->dir, "libwcbad.so", "wcbad.c", source, "-O1 -Wl,-soname,libwcbad.so.1", "gcc", &error);
    if (!built) throw std::runtime_error("gcc failed to build the ELF fixture: " + error);
    f->path = *built;
    f->bytes = read_file(f->path);
    if (f->bytes.size() < 64 || f->bytes[4] != 2 || f->bytes[5] != 1) {
      f->skip_reason = "the host gcc does not produce ELF64 little-endian, which these byte patches assume";
    }
    return f;
  }();
  return *fixture;
}

#define REQUIRE_ELF_FIXTURE()                                                          \
  do {                                                                                 \
    if (!elf_fixture().skip_reason.empty()) GTEST_SKIP() << elf_fixture().skip_reason; \
  } while (0)

std::vector<std::byte> as_bytes(const std::string& s) {
  std::vector<std::byte> out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());
  return out;
}

// A BufferSource that counts how often it is streamed: the fast reader makes one pass per open(), so the
// count proves its passes are bounded. Past 16 opens it throws, failing the test instead of hanging it.
class CountingSource final : public ByteSource {
 public:
  CountingSource(const std::string& bytes, std::string name) : m_inner(as_bytes(bytes), std::move(name)) {}
  std::uint64_t size() const override { return m_inner.size(); }
  std::string name() const override { return m_inner.name(); }
  std::unique_ptr<ByteStream> open() const override {
    if (++m_opens > 16) throw std::runtime_error("the reader keeps reopening its source: unbounded passes");
    return m_inner.open();
  }
  int opens() const { return m_opens; }

 private:
  BufferSource m_inner;
  mutable int m_opens = 0;
};

elf::ReaderLimits tiny_limits() {
  elf::ReaderLimits limits;
  limits.speculative_prefix = 64;
  return limits;
}

// Every way to read a damaged ELF fails the same clear way: read_elf with the default and with tiny limits
// (bounded passes), read_elf_file, inspect_wheel on a wheel carrying it ("malformed-elf", default and tiny
// limits), and the command line (exit 2, the finding in its report, nothing written outside the cache).
void expect_malformed_elf(const std::string& damaged, const std::string& part) {
  {
    CountingSource source(damaged, "libwcbad.so");
    EXPECT_TRUE(throws_bad_input([&] { elf::read_elf(source); }, {part})) << "read_elf, default limits";
    EXPECT_LE(source.opens(), elf::ReaderLimits{}.max_passes);
  }
  {
    CountingSource source(damaged, "libwcbad.so");
    const auto limits = tiny_limits();
    EXPECT_TRUE(throws_bad_input([&] { elf::read_elf(source, elf::ReaderKind::Fast, limits); }, {part}))
        << "read_elf, speculative_prefix 64";
    EXPECT_LE(source.opens(), limits.max_passes);
  }
  TempDir dir;
  const auto file = dir.write("lib/libwcbad.so", damaged);
  EXPECT_TRUE(throws_bad_input([&] { elf::read_elf_file(file); }, {part})) << "read_elf_file";
  EXPECT_TRUE(throws_bad_input([&] { elf::read_elf_file(file, tiny_limits()); }, {part})) << "read_elf_file, tiny";

  const auto wheel = make_wheel(dir, "badelf-1.0-cp312-cp312-linux_x86_64.whl", {{"badelf/libwcbad.so", file}});
  for (const bool tiny : {false, true}) {
    InspectOptions options;
    if (tiny) options.elf_limits = tiny_limits();
    const auto p = inspect_wheel(wheel, options);
    const auto* pr = find_problem(p, "malformed-elf", "badelf/libwcbad.so");
    ASSERT_NE(pr, nullptr) << (tiny ? "tiny limits" : "default limits") << describe(p.problems);
    EXPECT_TRUE(contains(pr->detail, part)) << pr->detail;
    ASSERT_EQ(p.members.size(), 1U);
    EXPECT_FALSE(p.members[0].elf.has_value());
    EXPECT_EQ(p.members[0].error, pr->detail);
  }
  expect_cli_finding(wheel, "malformed-elf", "badelf/libwcbad.so", part);
  expect_writes_only_cache(wheel, 2);
}

// The control: the undamaged library reads cleanly by every path, so each failure below is its damage's.
TEST(BadInput, ElfControlReadsCleanly) {
  REQUIRE_ELF_FIXTURE();
  const auto& f = elf_fixture();
  for (const auto& limits : {elf::ReaderLimits{}, tiny_limits()}) {
    CountingSource source(f.bytes, "libwcbad.so");
    const auto b = elf::read_elf(source, elf::ReaderKind::Fast, limits);
    EXPECT_EQ(b.soname, std::optional<std::string>("libwcbad.so.1"));
    EXPECT_TRUE(b.has_dynamic);
    EXPECT_LE(source.opens(), limits.max_passes);
  }
  EXPECT_EQ(elf::read_elf_file(f.path).soname, std::optional<std::string>("libwcbad.so.1"));
  TempDir dir;
  const auto wheel = make_wheel(dir, "badelf-1.0-cp312-cp312-linux_x86_64.whl", {{"badelf/libwcbad.so", f.path}});
  const auto p = inspect_wheel(wheel);
  EXPECT_FALSE(p.has_problems()) << describe(p.problems) << describe(p.record_problems);
  ASSERT_EQ(p.members.size(), 1U);
  EXPECT_TRUE(p.members[0].elf.has_value()) << p.members[0].error;
  const auto r = run_cli({"inspect", "--no-cache", "-q", wheel});
  EXPECT_EQ(r.exit_code, 0) << show(r);
}

// The damage, one function each (the tests below say why each must fail), on a copy of the fixture.

// The file cut after 40 bytes: the ELF magic is there, so it is taken for an ELF, but the 64-byte header is not.
std::string cut_after_40_bytes(std::string elf) {
  return elf.substr(0, 40);
}

// e_phoff pointing 4 KiB past the end of the file.
std::string phoff_past_end(std::string elf) {
  put_le(elf, k_e_phoff, 8, elf.size() + 4096);
  return elf;
}

// e_phnum = 0xffff: 65535 program headers of 56 bytes (3.5 MiB) in a file of a few KiB.
std::string phnum_max(std::string elf) {
  put_le(elf, k_e_phnum, 2, 0xffff);
  return elf;
}

// PT_DYNAMIC's p_offset moved 4 KiB past the end of the file.
std::string dynamic_offset_outside(std::string elf) {
  put_le(elf, dynamic_phdr(elf) + 8, 8, elf.size() + 4096);
  return elf;
}

// PT_DYNAMIC's p_filesz grown to 1 GiB.
std::string dynamic_size_outside(std::string elf) {
  put_le(elf, dynamic_phdr(elf) + 32, 8, std::uint64_t{1} << 30);
  return elf;
}

// DT_STRSZ one byte short: .dynstr then ends inside its last string, which loses its terminating NUL.
std::string dynstr_unterminated(std::string elf) {
  const auto at = strsz_entry(elf);
  put_le(elf, at, 8, get_le(elf, at, 8) - 1);
  return elf;
}

// e_ident[EI_CLASS] = 7.
std::string unknown_class(std::string elf) {
  elf[4] = 7;
  return elf;
}

// The header is not all there: every read of it must be refused, not read past the buffer.
TEST(BadInput, ElfCutAfter40Bytes) {
  REQUIRE_ELF_FIXTURE();
  expect_malformed_elf(cut_after_40_bytes(elf_fixture().bytes), "outside the file");
}

// The program header table is not in the file: its offset must be checked before it is read.
TEST(BadInput, ElfProgramHeadersPastEnd) {
  REQUIRE_ELF_FIXTURE();
  expect_malformed_elf(phoff_past_end(elf_fixture().bytes), "outside the file");
}

// A count far beyond the file: checked against the file size before anything is allocated or parsed.
TEST(BadInput, ElfProgramHeaderCountTooLarge) {
  REQUIRE_ELF_FIXTURE();
  expect_malformed_elf(phnum_max(elf_fixture().bytes), "outside the file");
}

// The dynamic section is nowhere in the file.
TEST(BadInput, ElfDynamicOffsetOutsideFile) {
  REQUIRE_ELF_FIXTURE();
  expect_malformed_elf(dynamic_offset_outside(elf_fixture().bytes), "outside the file");
}

// The dynamic section would run far past the end of the file: refused, not clipped or allocated.
TEST(BadInput, ElfDynamicSizeOutsideFile) {
  REQUIRE_ELF_FIXTURE();
  expect_malformed_elf(dynamic_size_outside(elf_fixture().bytes), "outside the file");
}

// The last .dynstr string is a version name that .gnu.version_r refers to, so the reader must meet the
// unterminated string, and must stop at DT_STRSZ rather than read on to a NUL beyond the table.
TEST(BadInput, ElfDynstrWithoutTerminatingNul) {
  REQUIRE_ELF_FIXTURE();
  expect_malformed_elf(dynstr_unterminated(elf_fixture().bytes), "no terminating NUL");
}

// Neither ELF32 (1) nor ELF64 (2): no field offset can be trusted, so nothing past e_ident is read.
TEST(BadInput, ElfUnknownClass) {
  REQUIRE_ELF_FIXTURE();
  expect_malformed_elf(unknown_class(elf_fixture().bytes), "unknown class 7");
}

// The reference reader (--elf-reader lief) on the same damage: it words its errors its own way, but must
// reach the same verdict, a "malformed-elf" finding and exit code 2, never a crash or a clean profile. One
// exception, documented at the top of inspector/elf/lief_reader.cpp: LIEF bounds no string by DT_STRSZ, so
// it reads the unterminated string on to the NUL past the table. There it need only not crash.
TEST(BadInput, LiefReaderRejectsMalformedElf) {
  REQUIRE_ELF_FIXTURE();
  struct Case {
    std::string name;
    std::string (*damage)(std::string);
    bool rejected;
  };
  const std::vector<Case> cases{{"cut after 40 bytes", cut_after_40_bytes, true},
                                {"e_phoff past the end", phoff_past_end, true},
                                {"e_phnum 0xffff", phnum_max, true},
                                {"PT_DYNAMIC offset outside", dynamic_offset_outside, true},
                                {"PT_DYNAMIC size outside", dynamic_size_outside, true},
                                {"DT_STRSZ one short", dynstr_unterminated, false},
                                {"e_ident class 7", unknown_class, true}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    const auto file = dir.write("lib/libwcbad.so", c.damage(elf_fixture().bytes));
    const auto wheel = make_wheel(dir, "badelf-1.0-cp312-cp312-linux_x86_64.whl", {{"badelf/libwcbad.so", file}});
    InspectOptions lief;
    lief.reader = elf::ReaderKind::Lief;
    const auto p = inspect_wheel(wheel, lief);
    if (c.rejected) {
      EXPECT_NE(find_problem(p, "malformed-elf", "badelf/libwcbad.so"), nullptr) << describe(p.problems);
      expect_cli_finding(wheel, "malformed-elf", "badelf/libwcbad.so", "", {"--elf-reader", "lief"});
    } else {
      const auto r = run_cli({"inspect", "--no-cache", "-q", "--elf-reader", "lief", wheel});
      EXPECT_EQ(r.signal, 0) << show(r);
      EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << show(r);
    }
  }
}

}  // namespace

// Found by the image fuzz target: nlohmann/json reports a number too large for a double as out_of_range,
// not parse_error. An image description or a rules file holding one is bad input (exit 2), not a crash
// or an internal error (exit 70).
TEST(BadInput, JsonNumberOverflowInADescriptionOrRulesIsBadInput) {
  TempDir dir;
  const std::string file = dir.file("overflow.json");
  write_binary(file, "{\"schema\": 1e99999}\n");
  const auto show = run(shell_quote(binary_path()) + " image show " + shell_quote(file));
  EXPECT_EQ(show.exit_code, 2) << show.err;
  EXPECT_NE(show.err.find("not valid JSON"), std::string::npos) << show.err;
  EXPECT_NE(show.err.find("number overflow"), std::string::npos) << show.err;
  const auto rules =
      run(shell_quote(binary_path()) + " gates --image cuda13.0 --rules " + shell_quote(file) + " " +
          shell_quote(wheelcheck::test::build_samples_dir() + "/flagos/flagtree-0.6.1-cp312-cp312-linux_x86_64.whl"));
  EXPECT_EQ(rules.exit_code, 2) << rules.err;
  EXPECT_NE(rules.err.find("not valid JSON"), std::string::npos) << rules.err;
}

}  // namespace unity_test_bad_input_cli
