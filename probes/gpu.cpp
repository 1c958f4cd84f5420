// Stage 6 of the probe, the GPUs of the probing machine itself (`wheelcheck probe --root /`): the NVIDIA
// driver's version and the GPUs' architectures. A root folder other than "/" never comes here: it does
// not show the GPUs of the machines it will run on, and no program inside it is ever run.
//
// The sources, in order:
//   1. `nvidia-smi --query-gpu=driver_version,compute_cap,name --format=csv,noheader`, one line per GPU
//      ("580.65.06, 9.0, NVIDIA H200"). The program is found on PATH (absolute folders only) and run
//      without a shell, its standard input and error on /dev/null, in a process group of its own that is
//      killed when it runs past the timeout (5 s) or writes more than 1 MiB. Its absence or failure is
//      not an error of the probe: it is the reason the facts it would give are unknown.
//   2. The kernel module's /proc/driver/nvidia: version ("NVRM version: NVIDIA UNIX x86_64 Kernel Module
//      580.65.06 ...", or "... Open Kernel Module for x86_64  580.65.06 ...") gives the driver, and
//      gpus/<PCI address>/information ("Model: NVIDIA H200") the GPUs' names, never their compute
//      capability: the architectures stay unknown, and say how many GPUs of which models there are.
// Without either, both facts are unknown: "no NVIDIA driver on this machine".
//
// For tests and for odd machines, two environment variables replace the sources:
//   WHEELCHECK_NVIDIA_SMI    the nvidia-smi program to run (a path; set but empty: as if there were none)
//   WHEELCHECK_PROC_NVIDIA   the folder read in place of /proc/driver/nvidia
//
// What nvidia-smi prints is made facts by facts_from_nvidia_smi, a pure function of the text.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "probes/detail.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

extern char** environ;

namespace wheelcheck::probe {

using image::Fact;
using image::Origin;

namespace {

constexpr std::string_view k_smi_query = "--query-gpu=driver_version,compute_cap,name";
constexpr std::size_t k_proc_file_max = std::size_t{64} << 10;
constexpr std::size_t k_proc_gpus_max = 256;  // GPU folders read at most

std::string plural(std::size_t n, std::string_view one) {
  return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s");
}

// "NVIDIA H200 (sm_90) x2, NVIDIA A100 (sm_80)": equal items counted, in the order they first appear.
std::string counted(const std::vector<std::string>& items) {
  std::vector<std::pair<std::string, std::size_t>> seen;
  for (const auto& i : items) {
    auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == i; });
    if (it == seen.end()) {
      seen.emplace_back(i, 1);
    } else {
      ++it->second;
    }
  }
  std::vector<std::string> parts;
  for (const auto& [item, n] : seen) parts.push_back(n == 1 ? item : fmt::format("{} x{}", item, n));
  return join(parts, ", ");
}

// Untrusted text quoted in a note: one line, printable, at most 80 characters.
std::string quote_line(std::string_view text) {
  std::string line(trim(text.substr(0, text.find('\n'))));
  if (line.size() > 80) line = line.substr(0, 77) + "...";
  return "\"" + printable(line) + "\"";
}

// A file of /proc (whose size stat gives as 0: read_text_file reads to its end), at most `max` bytes;
// nullopt when it cannot be read.
std::optional<std::string> read_small_file(const std::string& path, std::size_t max) {
  try {
    return read_text_file(path, max);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// One GPU line of nvidia-smi, or nullopt when the line is not "driver, compute capability, name".
struct SmiGpu {
  std::string driver;
  std::string cap;  // as printed
  std::string sm;   // "" when the capability is not a number ("[N/A]" from an old driver)
  std::string name;
};

std::optional<SmiGpu> parse_smi_line(std::string_view line) {
  const std::vector<std::string> fields = split(line, ",", true);
  if (fields.size() < 3) return std::nullopt;
  SmiGpu g;
  g.driver = std::string(trim(fields[0]));
  g.cap = std::string(trim(fields[1]));
  std::vector<std::string> rest(fields.begin() + 2, fields.end());  // a name may hold commas
  g.name = printable(trim(join(rest, ",")));
  static const std::regex k_driver(R"([0-9]{1,6}(\.[0-9]{1,6}){1,3})");
  if (!std::regex_match(g.driver, k_driver) || g.name.empty()) return std::nullopt;
  g.sm = sm_of_compute_cap(g.cap);
  if (g.sm.empty() && (g.cap.empty() || g.cap.front() != '[')) return std::nullopt;  // "[N/A]" only
  g.cap = printable(g.cap);
  return g;
}

// "sm_80,sm_90,sm_100": by compute capability, each once.
std::string sorted_archs(const std::vector<SmiGpu>& gpus) {
  std::vector<std::pair<int, std::string>> archs;
  for (const auto& g : gpus) {
    const std::size_t dot = g.cap.find('.');
    archs.emplace_back(std::stoi(g.cap.substr(0, dot)) * 10 + std::stoi(g.cap.substr(dot + 1)), g.sm);
  }
  std::sort(archs.begin(), archs.end());
  archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
  std::vector<std::string> names;
  for (const auto& a : archs) names.push_back(a.second);
  return join(names, ",");
}

// What running nvidia-smi gave: the facts, or why it gave none ("nvidia-smi is absent", ...).
struct SmiResult {
  std::optional<GpuFacts> facts;  // with the driver known
  std::string why_not;
};

SmiResult ask_nvidia_smi(const GpuSources& src) {
  if (src.nvidia_smi.empty()) return {std::nullopt, "nvidia-smi is absent"};
  const ProgramRun r =
      run_bounded({src.nvidia_smi, std::string(k_smi_query), "--format=csv,noheader"}, src.timeout, src.max_output);
  if (!r.started) return {std::nullopt, "nvidia-smi (" + src.nvidia_smi + ") could not be run: " + r.error};
  if (r.timed_out) {
    return {std::nullopt,
            fmt::format("nvidia-smi did not finish within {:g} s", static_cast<double>(src.timeout.count()) / 1000)};
  }
  if (r.too_much) return {std::nullopt, "nvidia-smi wrote more than " + format_size(src.max_output)};
  if (r.exit_code != 0) {
    const std::string status =
        r.exit_code > 0 ? fmt::format("exited with status {}", r.exit_code) : r.error;  // r.error: the signal
    return {std::nullopt, "nvidia-smi " + status + (trim(r.out).empty() ? "" : ": " + quote_line(trim(r.out)))};
  }
  GpuFacts f = facts_from_nvidia_smi(r.out);
  if (!f.driver.known()) return {std::nullopt, f.driver.note};
  return {std::move(f), ""};
}

// What /proc/driver/nvidia says: the kernel module's version and the GPUs' models.
struct ProcNvidia {
  bool present = false;
  std::optional<std::string> version;
  std::vector<std::string> models;  // by PCI address
};

ProcNvidia read_proc_nvidia(const std::string& dir) {
  ProcNvidia p;
  p.present = is_dir(dir);
  if (!p.present) return p;
  if (auto text = read_small_file(dir + "/version", k_proc_file_max)) p.version = kernel_module_version(*text);
  std::error_code ec;
  std::vector<std::string> gpus;
  for (std::filesystem::directory_iterator it(dir + "/gpus", ec), end; !ec && it != end; it.increment(ec)) {
    gpus.push_back(it->path().string());
  }
  std::sort(gpus.begin(), gpus.end());
  if (gpus.size() > k_proc_gpus_max) gpus.resize(k_proc_gpus_max);
  for (const auto& g : gpus) {
    const auto text = read_small_file(g + "/information", k_proc_file_max);
    const std::string model = text ? gpu_model(*text) : "";
    p.models.push_back(model.empty() ? "unnamed GPU" : model);
  }
  return p;
}

}  // namespace

std::string sm_of_compute_cap(std::string_view cap) {
  static const std::regex k_cap(R"(([0-9]{1,2})\.([0-9]))");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(cap.begin(), cap.end(), m, k_cap)) return "";
  const int major = std::stoi(m[1].str());
  if (major == 0) return "";
  return fmt::format("sm_{}{}", major, m[2].str());
}

GpuFacts facts_from_nvidia_smi(std::string_view output) {
  GpuFacts f;
  std::vector<SmiGpu> gpus;
  for (const auto& raw : split(output, "\n", false)) {
    if (trim(raw).empty()) continue;
    auto g = parse_smi_line(raw);
    if (!g) {
      const std::string why =
          "nvidia-smi printed a line that is not \"driver_version, compute_cap, name\": " + quote_line(raw);
      return {Fact::unknown(why, Origin::Probed), Fact::unknown(why, Origin::Probed)};
    }
    gpus.push_back(std::move(*g));
  }
  if (gpus.empty()) {
    const std::string why = "nvidia-smi listed no GPU";
    return {Fact::unknown(why, Origin::Probed), Fact::unknown(why, Origin::Probed)};
  }

  std::vector<std::string> drivers;
  for (const auto& g : gpus) add_unique(drivers, g.driver);
  f.driver = Fact::known_as(drivers.front(),
                            drivers.size() == 1
                                ? "nvidia-smi --query-gpu=driver_version"
                                : "nvidia-smi --query-gpu=driver_version (its GPUs say " + join(drivers, ", ") + ")",
                            Origin::Probed);

  std::vector<std::string> described;
  bool every_cap = true;
  for (const auto& g : gpus) {
    described.push_back(g.name + " (" + (g.sm.empty() ? g.cap : g.sm) + ")");
    every_cap = every_cap && !g.sm.empty();
  }
  const std::string listed = plural(gpus.size(), "GPU") + ": " + counted(described);
  if (every_cap) {
    f.gpu_archs = Fact::known_as(sorted_archs(gpus), "nvidia-smi: " + listed, Origin::Probed);
  } else {
    f.gpu_archs =
        Fact::unknown("nvidia-smi does not give the compute capability of every GPU: " + listed, Origin::Probed);
  }
  return f;
}

std::optional<std::string> kernel_module_version(std::string_view version_file) {
  static const std::regex k_module(R"(Kernel Module(?: for [A-Za-z0-9_]+)?\s+([0-9]+\.[0-9]+(\.[0-9]+)?))");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(version_file.begin(), version_file.end(), m, k_module)) return std::nullopt;
  return m[1].str();
}

std::string gpu_model(std::string_view information) {
  for (const auto& line : split(information, "\n", false)) {
    const std::string_view l = trim(line);
    if (l.substr(0, 6) == "Model:") return printable(trim(l.substr(6)));
  }
  return "";
}

std::string find_on_path(std::string_view name, std::string_view path) {
  for (const auto& dir : split(path, ":", false)) {
    if (dir.empty() || dir.front() != '/') continue;  // never the working folder
    const std::string candidate = join_path(dir, name);
    if (is_file(candidate) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

GpuSources gpu_sources_from_environment() {
  GpuSources s;
  if (const char* smi = std::getenv("WHEELCHECK_NVIDIA_SMI")) {
    s.nvidia_smi = smi;
  } else {
    s.nvidia_smi = find_on_path("nvidia-smi", getenv_or("PATH", ""));
  }
  s.proc_nvidia = getenv_or("WHEELCHECK_PROC_NVIDIA", "/proc/driver/nvidia");
  return s;
}

ProgramRun run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                       std::size_t max_output) {
  using Clock = std::chrono::steady_clock;
  ProgramRun r;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group: a timeout kills what it started too
  posix_spawnattr_setflags(&attr,
                           static_cast<short>(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv.at(0).c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    r.error = std::strerror(rc);
    return r;
  }
  r.started = true;

  const auto deadline = Clock::now() + timeout;
  // Rounded up: a timeout never fires before the deadline (poll's unit is a whole millisecond).
  auto left_ms = [&] {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::max<long long>(0, left));
  };
  char buf[16384];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, left_ms());
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0 && Clock::now() < deadline) continue;
    if (ready <= 0) {
      r.timed_out = true;
      break;
    }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of its output
    r.out.append(buf, static_cast<std::size_t>(n));
    if (r.out.size() > max_output) {
      r.too_much = true;
      r.out.resize(max_output);
      break;
    }
  }
  ::close(fds[0]);

  // It closed its output: it has until the deadline to exit.
  int status = 0;
  bool reaped = false;
  while (!r.timed_out && !r.too_much) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      reaped = true;
      break;
    }
    if (w < 0 && errno != EINTR) break;
    if (left_ms() == 0) {
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!reaped) {
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.exit_code = -1;
    r.error = fmt::format("was killed by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
  }
  return r;
}

GpuFacts this_machine_gpus(const GpuSources& src) {
  const SmiResult smi = ask_nvidia_smi(src);
  if (smi.facts) return *smi.facts;

  const ProcNvidia proc = read_proc_nvidia(src.proc_nvidia);
  GpuFacts f;
  if (!proc.present) {
    const std::string why = src.nvidia_smi.empty()
                                ? "no NVIDIA driver on this machine: no nvidia-smi, no " + src.proc_nvidia
                                : smi.why_not + "; no " + src.proc_nvidia;
    f.driver = Fact::unknown(why, Origin::Probed);
    f.gpu_archs = Fact::unknown(why, Origin::Probed);
    return f;
  }
  if (proc.version) {
    f.driver =
        Fact::known_as(*proc.version, "the kernel module's version in " + src.proc_nvidia + "/version", Origin::Probed);
  } else {
    f.driver = Fact::unknown(
        smi.why_not + "; " + src.proc_nvidia + "/version does not name the kernel module's version", Origin::Probed);
  }
  const std::string gpus = proc.models.empty()
                               ? "names no GPU"
                               : fmt::format("names {} ({}) but not {} architecture", plural(proc.models.size(), "GPU"),
                                             counted(proc.models), proc.models.size() == 1 ? "its" : "their");
  f.gpu_archs = Fact::unknown(smi.why_not + "; " + src.proc_nvidia + " " + gpus, Origin::Probed);
  return f;
}

}  // namespace wheelcheck::probe
