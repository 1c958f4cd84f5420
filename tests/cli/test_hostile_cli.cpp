// Every hostile input of tests/hostile/make_hostile.py through the wheelcheck executable: wheels (hostile
// archives and damaged ELF members) through `inspect` and the verdict, image roots through `probe --root`,
// index faults of tests/net/server.py through `scan`. Each must be refused cleanly: exit code 2, a message
// containing the manifest's expected words (the limit or defect by name), within the case's time bound and
// 1 GiB of memory, and nothing written outside the cache, report and state folders it was given.
//
// The case list is the generator's own manifest (`make_hostile.py --list`, read once when the tests are
// registered), so each case and command is one test named after it, e.g.
// Cases/Hostile.Run/elf_vn_next_loop__inspect. The inputs themselves are written once per build folder and
// version of the generators (shared_inputs), beside the build's samples, and so is the manifest.
//
// Each command runs in a sandbox: an empty working folder, HOME, XDG_CACHE_HOME and TMPDIR of its own, and
// --cache-dir (and for scan --state and --report) inside it. Afterwards the working folder, HOME and TMPDIR
// must be empty, no file named passwd may exist anywhere in the sandbox, and the hostile inputs themselves
// must be unchanged. Memory is GNU time's figure for wheelcheck alone (/usr/bin/time, from
// scripts/install-deps.sh), else wait4's, which also counts the forked test process.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "net_server.hpp"
#include "support.hpp"
#include "wheelcheck/util.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_hostile_cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace wheelcheck::test;

constexpr long k_max_rss_kb = 1024L * 1024;  // 1 GiB

std::string make_hostile_script() {
  return source_dir() + "/tests/hostile/make_hostile.py";
}

// One command on one case: the test parameter.
struct HostileRun {
  json spec;  // the manifest entry
  std::string command;
  std::string name() const { return spec.at("name").get<std::string>(); }
};

// gtest prints a failing parameter with this, instead of its bytes.
void PrintTo(const HostileRun& r, std::ostream* os) {
  *os << r.name() << " (" << r.command << ")";
}

// The generators' version: a digest of their sources, naming the inputs and the manifest made from them.
std::string generators_digest() {
  wheelcheck::Hasher h;
  for (const auto* file : {"/tests/hostile/make_hostile.py", "/tests/tools/hostile_zip.py", "/tests/tools/big_wheel.py",
                           "/tests/net/server.py"}) {
    const std::string text = read_file(source_dir() + file);
    h.update(text.data(), text.size());
  }
  return wheelcheck::to_hex(h.finish()).substr(0, 16);
}

// The manifest without writing any input, at test registration. Under ctest every test is its own process
// and registers every case, so the manifest is made once per build folder and version of the generators
// and kept beside the inputs (written to a private name, then renamed). Empty (and the ManifestLists test
// fails) when python3 cannot run the generator.
std::vector<HostileRun> hostile_runs() {
  std::vector<HostileRun> runs;
  const fs::path kept = fs::path(wheelcheck::test::build_samples_dir()).parent_path() /
                        ("hostile-manifest-" + generators_digest() + ".json");
  std::string text;
  if (fs::exists(kept)) {
    text = read_file(kept.string());
  } else {
    const auto r = run("python3 " + shell_quote(make_hostile_script()) + " --list /nonexistent/hostile");
    if (r.exit_code != 0) return runs;
    text = r.out;
    const std::string fresh = kept.string() + ".tmp" + std::to_string(::getpid());
    std::error_code ec;
    fs::create_directories(kept.parent_path(), ec);
    if (FILE* f = std::fopen(fresh.c_str(), "wb")) {
      const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
      if (std::fclose(f) == 0 && written) fs::rename(fresh, kept, ec);
      fs::remove(fresh, ec);
    }
  }
  for (const auto& spec : json::parse(text, nullptr, false)) {
    if (!spec.is_object()) continue;
    for (const auto& command : spec.at("commands")) runs.push_back({spec, command.get<std::string>()});
  }
  return runs;
}

std::string run_name(const testing::TestParamInfo<HostileRun>& info) {
  std::string out = info.param.name() + "__" + info.param.command;
  for (auto& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return out;
}

// Every path below `dir`, relative to it (symbolic links are listed, not followed).
std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    out.insert(it->path().lexically_relative(dir).string());
  }
  return out;
}

struct Outcome {
  int exit_code = -1;  // -1: killed by a signal
  int signal = 0;
  double seconds = 0;
  long max_rss_kb = -1;
  bool timed_out = false;
  std::string out, err;
};

// Runs argv (argv[0] the wheelcheck executable) in `cwd` with the environment changes, under GNU time when
// present; kills its process group after `limit_s` seconds.
Outcome run_sandboxed(const std::vector<std::string>& args, const std::string& cwd,
                      const std::vector<std::pair<std::string, std::string>>& env, const std::string& io_dir,
                      double limit_s) {
  const bool gnu_time = fs::exists("/usr/bin/time");
  const std::string rss_file = io_dir + "/rss", out_file = io_dir + "/out", err_file = io_dir + "/err";
  std::vector<std::string> argv_strings;
  if (gnu_time) argv_strings = {"/usr/bin/time", "-f", "%M", "-o", rss_file};
  argv_strings.push_back(binary_path());
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    for (const auto& [k, v] : env) {
      if (v.empty())
        ::unsetenv(k.c_str());
      else
        ::setenv(k.c_str(), v.c_str(), 1);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  Outcome o;
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit_s) {
      o.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  o.out = read_file(out_file);
  o.err = read_file(err_file);
  o.max_rss_kb = usage.ru_maxrss;
  if (gnu_time) {
    // GNU time reports its child's exit ("Command exited with non-zero status 2") and the figure last.
    std::string text = read_file(rss_file);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    const auto nl = text.find_last_of('\n');
    const std::string last = nl == std::string::npos ? text : text.substr(nl + 1);
    if (!last.empty() && last.find_first_not_of("0123456789") == std::string::npos) o.max_rss_kb = std::stol(last);
    // GNU time exits with its child's status; a child killed by a signal shows as "Command terminated".
    if (text.find("Command terminated by signal") != std::string::npos) o.exit_code = -1;
  }
  return o;
}

// The inputs are generated once per build folder and version of the generators, and shared: under ctest
// every test is its own process, and generating them (about 6 s) for each would dominate the suite. They
// are written to a private sibling and renamed into place, so two processes racing both end with one
// complete folder; the tests check that no command changed them.
std::string shared_inputs(std::string& error) {
  const fs::path dir =
      fs::path(wheelcheck::test::build_samples_dir()).parent_path() / ("hostile-inputs-" + generators_digest());
  if (fs::exists(dir / "manifest.json")) return dir.string();
  const std::string fresh = dir.string() + ".tmp" + std::to_string(::getpid());
  fs::remove_all(fresh);
  const auto r = run("python3 " + shell_quote(make_hostile_script()) + " " + shell_quote(fresh));
  if (r.exit_code != 0) {
    error = "make_hostile.py failed (exit " + std::to_string(r.exit_code) + "): " + r.out + r.err;
    fs::remove_all(fresh);
    return "";
  }
  std::error_code ec;
  fs::rename(fresh, dir, ec);  // a folder already there (another process won) keeps its place
  if (ec) fs::remove_all(fresh);
  return dir.string();
}

class Hostile : public testing::TestWithParam<HostileRun> {
 public:
  static void SetUpTestSuite() {
    s_inputs = shared_inputs(s_setup_error);
    if (s_inputs.empty()) return;
    s_listing = listing(s_inputs);
    try {
      s_server = std::make_unique<NetServer>(NetServer::index_server(s_inputs + "/index"));
    } catch (const std::exception& e) {
      s_setup_error = std::string("tests/net/server.py did not start: ") + e.what();
    }
  }
  static void TearDownTestSuite() { s_server.reset(); }

 protected:
  static std::unique_ptr<NetServer> s_server;
  static std::string s_inputs;
  static std::string s_setup_error;
  static std::set<std::string> s_listing;
};

std::unique_ptr<NetServer> Hostile::s_server;
std::string Hostile::s_inputs;
std::string Hostile::s_setup_error;
std::set<std::string> Hostile::s_listing;

// The text with every occurrence of `part` removed: the case's own name must not satisfy its expectation.
std::string without(std::string text, const std::string& part) {
  if (part.empty()) return text;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at)) text.erase(at, part.size());
  return text;
}

TEST_P(Hostile, Run) {
  ASSERT_TRUE(s_setup_error.empty()) << s_setup_error;
  const HostileRun& hr = GetParam();
  const json& spec = hr.spec;
  const std::string name = hr.name();
  SCOPED_TRACE(name + " (" + hr.command + "): " + spec.at("why").get<std::string>());

  TempDir sandbox;
  const fs::path base(sandbox.path());
  for (const char* d : {"cwd", "home", "xdg", "tmp", "cache", "io"}) fs::create_directories(base / d);
  std::vector<std::string> args;
  const std::string cache = (base / "cache").string();
  const std::string input = spec.contains("path") ? s_inputs + "/" + spec.at("path").get<std::string>() : "";
  if (hr.command == "inspect") {
    args = {"inspect", "-q", "--cache-dir", cache};
  } else if (hr.command == "check") {
    // The default command, the verdict; the wheel before --image, which takes several values.
    args = {"-q", "--cache-dir", cache, input, "--image", "cuda13.0"};
  } else if (hr.command == "probe") {
    args = {"probe", "-q", "--root", input};
  } else if (hr.command == "scan") {
    ASSERT_TRUE(s_server);
    s_server->clear_faults();
    s_server->add_faults(spec.at("fault"));
    const auto url = s_server->url("/" + spec.at("index").get<std::string>() + "/simple/");
    args = {"scan",        "-q",
            "--index",     url,
            "--project",   spec.at("project").get<std::string>(),
            "--image",     "cuda13.0",
            "--cache-dir", cache,
            "--state",     (base / "cache/state").string(),
            "--report",    (base / "cache/report").string()};
  } else {
    FAIL() << "unknown command in the manifest: " << hr.command;
  }
  for (const auto& o : spec.at("options")) args.push_back(o.get<std::string>());
  if (hr.command == "inspect") args.push_back(input);

  const double bound = spec.at("timeout_s").get<double>();
  const std::vector<std::pair<std::string, std::string>> env = {
      {"HOME", (base / "home").string()},  {"XDG_CACHE_HOME", (base / "xdg").string()},
      {"TMPDIR", (base / "tmp").string()}, {"WHEELCHECK_CACHE_DIR", ""},
      {"no_proxy", "127.0.0.1,localhost"}, {"NO_PROXY", "127.0.0.1,localhost"},
      {"NETRC", "/nonexistent/netrc"},     {"PIP_INDEX_URL", ""},
      {"PIP_EXTRA_INDEX_URL", ""}};
  const auto o = run_sandboxed(args, (base / "cwd").string(), env, (base / "io").string(), bound + 15);
  if (s_server && hr.command == "scan") s_server->clear_faults();

  std::string shown = "wheelcheck";
  for (const auto& a : args) shown += " " + a;
  const std::string report = shown + "\nexit " + std::to_string(o.exit_code) +
                             (o.signal ? " (signal " + std::to_string(o.signal) + ")" : "") + " after " +
                             std::to_string(o.seconds) + " s, " + std::to_string(o.max_rss_kb) + " KiB\n--- stdout\n" +
                             o.out.substr(0, 3000) + "\n--- stderr\n" + o.err.substr(0, 3000);

  EXPECT_FALSE(o.timed_out) << "killed after " << bound + 15 << " s\n" << report;
  EXPECT_EQ(o.exit_code, 2) << report;
  // The message names the defect or the limit: the case's own name and paths removed first.
  std::string message = o.out + o.err;
  message = without(message, input);
  message = without(message, name);
  std::string underscored = name;
  for (auto& c : underscored) c = c == '-' ? '_' : c;
  message = without(message, underscored);
  const auto expect = spec.at("expect").get<std::string>();
  EXPECT_NE(message.find(expect), std::string::npos) << "the message lacks \"" << expect << "\"\n" << report;
  EXPECT_EQ(message.find("internal error"), std::string::npos) << report;
  // A usage error also exits 2, and would echo an option the case expects: the command must be understood.
  EXPECT_EQ(o.err.find("unknown option"), std::string::npos) << report;
  EXPECT_EQ(o.err.find("usage:"), std::string::npos) << report;
  EXPECT_LT(o.seconds, bound) << report;
  EXPECT_LT(o.max_rss_kb, k_max_rss_kb) << "peak memory " << o.max_rss_kb << " KiB\n" << report;

  // Nothing written outside the cache: the working folder, HOME, XDG_CACHE_HOME and TMPDIR stay empty
  // (the cache and report folders were named on the command line), no passwd anywhere, inputs unchanged.
  for (const char* d : {"cwd", "home", "xdg", "tmp"}) {
    const auto left = listing(base / d);
    EXPECT_TRUE(left.empty()) << d << " holds " << left.size() << " entries, first " << *left.begin() << "\n" << report;
  }
  for (const auto& p : listing(base)) {
    EXPECT_NE(fs::path(p).filename().string(), "passwd") << "a file named passwd appeared: " << p;
  }
  EXPECT_EQ(listing(s_inputs), s_listing) << "the hostile inputs changed\n" << report;
}

INSTANTIATE_TEST_SUITE_P(Cases, Hostile, testing::ValuesIn(hostile_runs()), run_name);

// The manifest lists every kind of case, so an empty or broken generator cannot pass by running nothing.
TEST(HostileManifest, ListsEveryKind) {
  const auto runs = hostile_runs();
  std::set<std::string> kinds, commands;
  for (const auto& r : runs) {
    kinds.insert(r.spec.at("kind").get<std::string>());
    commands.insert(r.command);
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"wheel", "root", "index"}));
  EXPECT_EQ(commands, (std::set<std::string>{"inspect", "check", "probe", "scan"}));
  EXPECT_GE(runs.size(), 60U);
}

}  // namespace

}  // namespace unity_test_hostile_cli
