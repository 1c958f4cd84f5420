// ZIP64 wheels through the wheelcheck executable, written at test time by tests/tools/big_wheel.py: a wheel
// of more than 4 GiB (a stored member of 4.2 GiB of zeros, written sparsely, and a real library after it, at
// an offset past 4 GiB), one of 70,000 members (the count needs the zip64 end record), one whose every
// member has zip64 extra fields, and damaged ZIP64 records. Each is inspected within the memory bound of
// docs/internals.md ("Archives"), measured as the peak RSS of the wheelcheck process alone (GNU time's
// figure; without /usr/bin/time, wait4's, which also counts the forked test process: only ever more). A
// damaged record is an integrity error naming what disagrees and both values (exit 2), never a crash.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "wheelcheck/bytes.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/wheel.hpp"

namespace unity_test_zip64_cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace wheelcheck::test;

// docs/internals.md ("Archives"): with two worker threads (-j 2; each further one adds a libzip handle of
// the central directory) an inspection holds at most 256 MiB, whatever the wheel's size or member count.
constexpr long k_bound_kb = 256L * 1024;

// A sanitized build (CI's clang lane) keeps shadow memory and a quarantine of freed blocks: its peak is not
// the program's (the 70,000-member read peaks near 700 MiB there). It is held to eight times the bound, which
// still catches a wheel read into memory (4.2 GiB), and the plain build to the bound itself.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool k_zip64_sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool k_zip64_sanitized = true;
#else
constexpr bool k_zip64_sanitized = false;
#endif
#else
constexpr bool k_zip64_sanitized = false;
#endif
long zip64_bound_kb() {
  return k_zip64_sanitized ? 8 * k_bound_kb : k_bound_kb;
}

struct Ran {
  int exit_code = -1;
  std::string out, err;
  long max_rss_kb = 0;
};

// Runs wheelcheck with `args` (no shell), stdout and stderr to files in `dir`, measuring its peak RSS.
Ran run_measured(const TempDir& dir, const std::vector<std::string>& args) {
  const bool gnu_time = fs::exists("/usr/bin/time");
  const std::string rss = dir.file("rss"), out = dir.file("out"), err = dir.file("err");
  std::vector<std::string> argv_s;
  if (gnu_time) argv_s = {"/usr/bin/time", "-f", "%M", "-o", rss};
  argv_s.push_back(binary_path());
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) ::_exit(126);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::setenv("WHEELCHECK_OFFLINE", "1", 1);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  Ran r;
  int status = 0;
  rusage usage{};
  if (pid < 0 || ::wait4(pid, &status, 0, &usage) != pid) return r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = read_file(out);
  r.err = read_file(err);
  r.max_rss_kb = usage.ru_maxrss;
  if (gnu_time) {
    std::string text = read_file(rss);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    const auto nl = text.find_last_of('\n');
    const std::string last = nl == std::string::npos ? text : text.substr(nl + 1);
    if (!last.empty() && last.find_first_not_of("0123456789") == std::string::npos) r.max_rss_kb = std::stol(last);
    if (text.find("Command terminated by signal") != std::string::npos) r.exit_code = -1;
  }
  return r;
}

// tests/tools/big_wheel.py OUT ARGS...: the wheel's path, or "" with the reason in `skip` (exit 77: no space).
std::string big_wheel(const TempDir& dir, const std::string& name, const std::vector<std::string>& args,
                      std::string& skip) {
  const std::string out = dir.file(name);
  std::string cmd = "python3 " + shell_quote(source_dir() + "/tests/tools/big_wheel.py") + " " + shell_quote(out);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  const auto r = run(cmd);
  if (r.exit_code == 77) skip = r.err;
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 77) << cmd << "\n" << r.err;
  return r.exit_code == 0 ? out : "";
}

// A small library that needs libm, built here: the member whose ELF the inspection must read.
std::string build_library(const TempDir& dir) {
  std::string error;
  const auto so = build_shared(dir, "libz64.so", "z64.c",
                               "#include <math.h>\ndouble z64_pow(double a, double b) { return pow(a, b); }\n", "-lm",
                               "gcc", &error);
  EXPECT_TRUE(so.has_value()) << error;
  return so.value_or("");
}

const json* member(const json& doc, const std::string& path) {
  for (const auto& m : doc.at("members")) {
    if (m.value("path", "") == path) return &m;
  }
  return nullptr;
}

bool needs_libm(const json& m) {
  for (const auto& n : m.at("elf").at("needed")) {
    if (n == "libm.so.6") return true;
  }
  return false;
}

}  // namespace

// 70,000 members and a library: the count needs the zip64 end record (more than 65,535). Read in full
// (the wheel is under 32 MiB), every local header checked, RECORD verified, within the bound.
TEST(Zip64, SeventyThousandMembersInBoundedMemory) {
  TempDir dir;
  const auto so = build_library(dir);
  ASSERT_FALSE(so.empty());
  std::string skip;
  const auto wheel = big_wheel(dir, "many-1.0-cp312-cp312-linux_x86_64.whl",
                               {"--many", "70000", "--file", "many/libz64.so=" + so}, skip);
  if (wheel.empty()) GTEST_SKIP() << skip;
  const auto r = run_measured(dir, {"inspect", "--json", "--no-cache", "--threads", "2", wheel});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = json::parse(r.out);
  EXPECT_EQ(doc.value("member_count", 0), 70004) << r.out.substr(0, 400);
  EXPECT_EQ(doc.value("integrity", ""), "full");
  EXPECT_TRUE(doc.at("record").value("verified", false));
  const auto* lib = member(doc, "many/libz64.so");
  ASSERT_NE(lib, nullptr);
  EXPECT_TRUE(needs_libm(*lib)) << lib->dump();
  EXPECT_LT(r.max_rss_kb, zip64_bound_kb()) << "peak RSS " << r.max_rss_kb << " KiB";
}

// A wheel of 4.2 GiB: a stored member of zeros whose sizes need zip64, then a library whose local header
// lies past 4 GiB (its offset in the central zip64 extra field), read headers-only: the library's ELF is
// read there, every local header checked. The full read (hashing and CRC-checking all 4.2 GiB) took 79 s
// here, so it is measured by bench/zip64.sh instead; the full reads of ZIP64 wheels here are the 70,000
// members' and ForcedZip64FieldsReadInFull's.
TEST(Zip64, WheelOverFourGiBInBoundedMemory) {
  TempDir dir;
  const auto so = build_library(dir);
  ASSERT_FALSE(so.empty());
  std::string skip;
  const auto wheel = big_wheel(dir, "big-1.0-cp312-cp312-linux_x86_64.whl",
                               {"--zeros", "big/zeros.bin=4.2G", "--file", "big/libz64.so=" + so}, skip);
  if (wheel.empty()) GTEST_SKIP() << skip;
  ASSERT_GT(fs::file_size(wheel), std::uintmax_t{4} << 30);
  const auto r = run_measured(dir, {"inspect", "--json", "--no-cache", "--threads", "2", "--verify", "headers", wheel});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = json::parse(r.out);
  EXPECT_EQ(doc.value("integrity", ""), "headers-only");
  EXPECT_TRUE(doc.at("problems").empty()) << doc.at("problems").dump();
  const auto* lib = member(doc, "big/libz64.so");
  ASSERT_NE(lib, nullptr);
  EXPECT_TRUE(needs_libm(*lib)) << lib->dump();
  EXPECT_LT(r.max_rss_kb, zip64_bound_kb()) << "peak RSS " << r.max_rss_kb << " KiB";
  // The check (headers-only: a local file is otherwise read whole): a verdict, not an integrity error.
  const auto c = run_measured(dir, {"check", "--no-cache", "--verify", "headers", wheel, "--image", "debian12"});
  EXPECT_NE(c.exit_code, 2) << c.out << c.err;
  EXPECT_NE(c.exit_code, -1) << c.out << c.err;
  EXPECT_LT(c.max_rss_kb, zip64_bound_kb()) << "peak RSS " << c.max_rss_kb << " KiB";
}

// Every member with zip64 extra fields in both headers (as zipfile's force_zip64 writes them), and the
// zip64 end records though nothing needs them: read in full, nothing to report.
TEST(Zip64, ForcedZip64FieldsReadInFull) {
  TempDir dir;
  const auto so = build_library(dir);
  ASSERT_FALSE(so.empty());
  std::string skip;
  const auto wheel = big_wheel(dir, "forced-1.0-cp312-cp312-linux_x86_64.whl",
                               {"--force-zip64", "--file", "forced/libz64.so=" + so}, skip);
  if (wheel.empty()) GTEST_SKIP() << skip;
  const auto r = run_measured(dir, {"inspect", "--json", "--no-cache", "--threads", "2", wheel});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto doc = json::parse(r.out);
  EXPECT_TRUE(doc.at("record").value("verified", false));
  EXPECT_TRUE(doc.at("problems").empty()) << doc.at("problems").dump();
}

// Each damaged ZIP64 record: exit 2 through inspect and the check, the message naming the record or the
// member and both values.
TEST(Zip64, BrokenRecordsAreIntegrityErrors) {
  TempDir dir;
  const auto so = build_library(dir);
  ASSERT_FALSE(so.empty());
  const auto so_size = std::to_string(fs::file_size(so));
  struct Case {
    std::string kind;
    std::vector<std::string> extra;
    std::vector<std::string> expect;
  };
  const std::vector<Case> cases = {
      {"locator",
       {},
       {"zip64 end of central directory locator says the zip64 end record lies at offset", "but it lies at"}},
      {"count", {}, {"the zip64 end record says 5 members, but the central directory holds 4"}},
      {"count16",
       {"--many", "70000"},
       {"the end of central directory record says a member count of 4476, the zip64 end record 70004"}},
      {"local-zip64",
       {},
       {"its local header (zip64 extra field) says size " + std::to_string(std::stoull(so_size) + 1000) +
        ", the central directory " + so_size}},
      {"offset",
       {"--file", "broken/second.so=" + so},
       {"its local header names it 'broken/libz64.so', the central directory 'broken/second.so'"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.kind);
    std::string skip;
    std::vector<std::string> args = {"--force-zip64", "--file", "broken/libz64.so=" + so, "--break", c.kind};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    const auto wheel = big_wheel(dir, "broken-1.0-cp312-cp312-linux_x86_64.whl", args, skip);
    if (wheel.empty()) GTEST_SKIP() << skip;
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"inspect", "--no-cache", "--threads", "2", wheel},
          std::vector<std::string>{"check", "--no-cache", wheel, "--image", "debian12"}}) {
      const auto r = run_measured(dir, command);
      EXPECT_EQ(r.exit_code, 2) << command[0] << "\n" << r.out << r.err;
      for (const auto& words : c.expect) {
        EXPECT_NE((r.out + r.err).find(words), std::string::npos) << command[0] << ": " << words << "\n"
                                                                  << r.out << r.err;
      }
      EXPECT_LT(r.max_rss_kb, zip64_bound_kb());
    }
  }
}

// Data descriptors, as Python's zipfile writes a wheel to a stream it cannot seek (sizes and CRC-32 after
// each member's data, zeros in its local header): read as agreeing; the same wheel with one descriptor's
// CRC-32 changed is a header-mismatch naming both values (the central directory alone never showed it).
TEST(Zip64, DataDescriptorsAreCompared) {
  TempDir dir;
  const std::string script = dir.write("stream.py", R"PY(
import base64, hashlib, io, sys, zipfile
class NoSeek(io.RawIOBase):
    def __init__(self): self.b = bytearray()
    def writable(self): return True
    def write(self, d): self.b += d; return len(d)
    def seekable(self): return False
def digest(d): return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
files = {"dd/__init__.py": b"X = 1\n" * 100, "dd-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: dd\nVersion: 1.0\n",
         "dd-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
files["dd-1.0.dist-info/RECORD"] = ("".join(f"{k},{digest(v)},{len(v)}\n" for k, v in files.items()) + "dd-1.0.dist-info/RECORD,,\n").encode()
s = NoSeek()
with zipfile.ZipFile(s, "w", zipfile.ZIP_DEFLATED) as z:
    for k, v in files.items():
        with z.open(k, "w") as f: f.write(v)
open(sys.argv[1], "wb").write(bytes(s.b))
b = bytearray(s.b); at = b.index(b"PK\x07\x08"); b[at + 4] ^= 0xFF
open(sys.argv[2], "wb").write(bytes(b))
)PY");
  const std::string good = dir.file("dd-1.0-py3-none-any.whl"), bad = dir.file("bad/dd-1.0-py3-none-any.whl");
  fs::create_directories(dir.file("bad"));
  const auto made = run("python3 " + shell_quote(script) + " " + shell_quote(good) + " " + shell_quote(bad));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const auto ok = run_measured(dir, {"inspect", "--json", "--no-cache", good});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_TRUE(json::parse(ok.out).at("record").value("verified", false));
  const auto r = run_measured(dir, {"inspect", "--json", "--no-cache", bad});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto problems = json::parse(r.out).at("problems");
  ASSERT_EQ(problems.size(), 1U) << problems.dump();
  EXPECT_EQ(problems[0].value("kind", ""), "header-mismatch");
  EXPECT_EQ(problems[0].value("path", ""), "dd/__init__.py");
  EXPECT_NE(problems[0].value("detail", "").find("its data descriptor says CRC-32 0x"), std::string::npos)
      << problems[0].dump();
  EXPECT_NE(problems[0].value("detail", "").find(", the central directory 0x"), std::string::npos)
      << problems[0].dump();
}

// Headers-only through a RandomAccess (a URL's read) checks no local header at open, but each member's as
// it is read: the damaged one is refused then, naming both values; the others still read.
TEST(Zip64, HeadersOnlyChecksTheLocalHeaderOfEachMemberRead) {
  TempDir dir;
  const auto so = build_library(dir);
  ASSERT_FALSE(so.empty());
  std::string skip;
  const auto wheel = big_wheel(dir, "lazy-1.0-cp312-cp312-linux_x86_64.whl",
                               {"--force-zip64", "--file", "lazy/libz64.so=" + so, "--break", "local-zip64"}, skip);
  if (wheel.empty()) GTEST_SKIP() << skip;
  const auto file = std::make_shared<wheelcheck::FileRandomAccess>(wheel);
  const auto archive = wheelcheck::wheel::ZipArchive::open(file, {}, false);
  EXPECT_TRUE(archive->problems().empty());
  const auto index = archive->find("lazy/libz64.so");
  ASSERT_TRUE(index.has_value());
  try {
    archive->random_member(*index);
    ADD_FAILURE() << "the damaged member was read";
  } catch (const wheelcheck::Error& e) {
    const auto size = fs::file_size(so);
    EXPECT_NE(
        std::string(e.what()).find("member lazy/libz64.so: its local header (zip64 extra field) says size " +
                                   std::to_string(size + 1000) + ", the central directory " + std::to_string(size)),
        std::string::npos)
        << e.what();
  }
  EXPECT_NE(archive->read_small(*archive->find("lazy-1.0.dist-info/WHEEL")).find("Wheel-Version"), std::string::npos);
  // Opened checking every local header (a local file), the same disagreement is a problem at once.
  const auto strict = wheelcheck::wheel::ZipArchive::open(wheel);
  ASSERT_EQ(strict->problems().size(), 1U);
  EXPECT_EQ(strict->problems()[0].kind, "header-mismatch");
  EXPECT_EQ(strict->problems()[0].path, "lazy/libz64.so");
}

}  // namespace unity_test_zip64_cli
