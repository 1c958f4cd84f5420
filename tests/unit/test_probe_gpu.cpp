// The probe of the machine's own GPUs (probes/gpu.cpp), without a GPU: what nvidia-smi prints made facts
// (a pure function, fed the lines real nvidia-smi prints), then fake nvidia-smi programs written here as
// shell scripts (one GPU, two kinds, garbage, a failure, a hang, endless output) and fake
// /proc/driver/nvidia folders in the format the kernel module writes, through the stage itself and
// through `wheelcheck probe --root /` with WHEELCHECK_NVIDIA_SMI and WHEELCHECK_PROC_NVIDIA.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "probes/detail.hpp"
#include "support.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_probe_gpu {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using probe::GpuSources;

namespace {

constexpr const char* k_h200 = "580.65.06, 9.0, NVIDIA H200\n";
constexpr const char* k_smi_failed =
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
    "NVIDIA driver is installed and running.\n";

// An executable shell script.
std::string script(const TempDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir.write(name, "#!/bin/sh\n" + body);
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

// A script that prints `text` exactly (printf's format is fixed; the text is its argument).
std::string printing(const TempDir& dir, const std::string& name, const std::string& text, int status = 0) {
  return script(dir, name, "printf '%s' " + shell_quote(text) + "\nexit " + std::to_string(status) + "\n");
}

// A /proc/driver/nvidia as the kernel module writes it: version and gpus/<PCI address>/information.
std::string fake_proc(const TempDir& dir, const std::string& version, const std::vector<std::string>& models,
                      const std::string& name = "proc-nvidia") {
  const std::string p = dir.file(name);
  fs::create_directories(p + "/gpus");
  if (!version.empty()) write_binary(p + "/version", version);
  for (std::size_t i = 0; i < models.size(); ++i) {
    const std::string gpu = p + "/gpus/0000:" + std::to_string(18 + i) + ":00.0";
    fs::create_directories(gpu);
    write_binary(gpu + "/information", "Model: \t\t " + models[i] +
                                           "\nIRQ:   \t\t 16\nGPU UUID: \t GPU-00000000\nBus Type: \t PCIe\n"
                                           "Device Minor: \t " +
                                           std::to_string(i) + "\nGPU Excluded:\t No\n");
  }
  return p;
}

constexpr const char* k_proprietary_version =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 19:50:15 UTC 2024\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
constexpr const char* k_open_version =
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  "
    "(dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 07:09:57 UTC 2025\nGCC version:  gcc version 13.3.0\n";

GpuSources sources(const std::string& smi, const std::string& proc) {
  GpuSources s;
  s.nvidia_smi = smi;
  s.proc_nvidia = proc;
  return s;
}

void expect_fact(const image::Fact& f, const std::optional<std::string>& value, const std::string& note) {
  EXPECT_TRUE(f.set);
  EXPECT_EQ(f.value, value);
  EXPECT_EQ(f.note, note);
  EXPECT_EQ(f.origin, image::Origin::Probed);
}

}  // namespace

// --- nvidia-smi's text made facts -------------------------------------------------------------------

TEST(ProbeGpu, ComputeCapabilityNamedAsNvccNamesIt) {
  EXPECT_EQ(probe::sm_of_compute_cap("9.0"), "sm_90");
  EXPECT_EQ(probe::sm_of_compute_cap("8.6"), "sm_86");
  EXPECT_EQ(probe::sm_of_compute_cap("10.0"), "sm_100");
  EXPECT_EQ(probe::sm_of_compute_cap("12.1"), "sm_121");
  for (const char* bad : {"", "9", "9.", ".0", "9.10", "0.0", "123.0", "[N/A]", "sm_90", " 9.0", "9.0a", "9,0"}) {
    EXPECT_EQ(probe::sm_of_compute_cap(bad), "") << bad;
  }
}

TEST(ProbeGpu, OneGpu) {
  const auto f = probe::facts_from_nvidia_smi(k_h200);
  expect_fact(f.driver, "580.65.06", "nvidia-smi --query-gpu=driver_version");
  expect_fact(f.gpu_archs, "sm_90", "nvidia-smi: 1 GPU: NVIDIA H200 (sm_90)");
}

TEST(ProbeGpu, EightEqualGpusAreCounted) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += k_h200;
  const auto f = probe::facts_from_nvidia_smi(out);
  expect_fact(f.driver, "580.65.06", "nvidia-smi --query-gpu=driver_version");
  expect_fact(f.gpu_archs, "sm_90", "nvidia-smi: 8 GPUs: NVIDIA H200 (sm_90) x8");
}

// Architectures sorted by compute capability (sm_100 after sm_90), each once; the GPUs in nvidia-smi's
// order; CRLF, blank lines and a name with a comma are read as they are.
TEST(ProbeGpu, DifferentGpusSortedByCapability) {
  const auto f = probe::facts_from_nvidia_smi(
      "580.65.06, 10.0, NVIDIA B200\r\n\n580.65.06, 8.0, NVIDIA A100-SXM4-80GB\r\n"
      "580.65.06, 9.0, NVIDIA H100 80GB HBM3\n580.65.06, 8.0, NVIDIA A100-SXM4-80GB\n"
      "580.65.06, 8.6, NVIDIA RTX A6000, rev. 2\n");
  expect_fact(f.driver, "580.65.06", "nvidia-smi --query-gpu=driver_version");
  expect_fact(f.gpu_archs, "sm_80,sm_86,sm_90,sm_100",
              "nvidia-smi: 5 GPUs: NVIDIA B200 (sm_100), NVIDIA A100-SXM4-80GB (sm_80) x2, NVIDIA H100 80GB HBM3 "
              "(sm_90), NVIDIA RTX A6000, rev. 2 (sm_86)");
}

// An old driver prints "[N/A]" for a capability it cannot query: the driver is known, the architectures
// are not (a partial list would claim too little).
TEST(ProbeGpu, CapabilityNotAvailableLeavesArchitecturesUnknown) {
  const auto f = probe::facts_from_nvidia_smi("470.256.02, 8.0, NVIDIA A100-PCIE-40GB\n470.256.02, [N/A], Tesla K80\n");
  expect_fact(f.driver, "470.256.02", "nvidia-smi --query-gpu=driver_version");
  expect_fact(f.gpu_archs, std::nullopt,
              "nvidia-smi does not give the compute capability of every GPU: 2 GPUs: NVIDIA A100-PCIE-40GB (sm_80), "
              "Tesla K80 ([N/A])");
}

// A name is untrusted text: control characters are written as \xNN.
TEST(ProbeGpu, NameWithControlCharactersIsMadePrintable) {
  const auto f = probe::facts_from_nvidia_smi("580.65.06, 9.0, NVIDIA \x1b[2JH200\n");
  expect_fact(f.gpu_archs, "sm_90", "nvidia-smi: 1 GPU: NVIDIA \\x1b[2JH200 (sm_90)");
}

TEST(ProbeGpu, GpusThatDisagreeOnTheDriverAreNamed) {
  const auto f = probe::facts_from_nvidia_smi("580.65.06, 9.0, NVIDIA H200\n580.82.07, 9.0, NVIDIA H200\n");
  expect_fact(f.driver, "580.65.06", "nvidia-smi --query-gpu=driver_version (its GPUs say 580.65.06, 580.82.07)");
}

TEST(ProbeGpu, OutputThatIsNotGpuLinesGivesNothing) {
  const std::string lead = "nvidia-smi printed a line that is not \"driver_version, compute_cap, name\": ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"No devices were found\n", "\"No devices were found\""},
      {"Field \"compute_cap\" is not a valid field to query.\n\n",
       "\"Field \"compute_cap\" is not a valid field to query.\""},
      {std::string(k_h200) + "NVIDIA H200, 9.0, 580.65.06\n", "\"NVIDIA H200, 9.0, 580.65.06\""},
      {"580.65.06, 9.0\n", "\"580.65.06, 9.0\""},
      {"580.65.06, 9.0, \n", "\"580.65.06, 9.0,\""},
      {"580.65.06, nine, NVIDIA H200\n", "\"580.65.06, nine, NVIDIA H200\""},
      {"\x1b[2J No devices\n", "\"\\x1b[2J No devices\""},
      {std::string(200, 'x'), "\"" + std::string(77, 'x') + "...\""},
  };
  for (const auto& [out, shown] : cases) {
    const auto f = probe::facts_from_nvidia_smi(out);
    expect_fact(f.driver, std::nullopt, lead + shown);
    expect_fact(f.gpu_archs, std::nullopt, lead + shown);
  }
  const auto none = probe::facts_from_nvidia_smi("\n \n");
  expect_fact(none.driver, std::nullopt, "nvidia-smi listed no GPU");
  expect_fact(none.gpu_archs, std::nullopt, "nvidia-smi listed no GPU");
}

TEST(ProbeGpu, ProcFilesRead) {
  EXPECT_EQ(probe::kernel_module_version(k_proprietary_version), "550.54.15");
  EXPECT_EQ(probe::kernel_module_version(k_open_version), "580.65.06");
  EXPECT_EQ(probe::kernel_module_version("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  "
                                         "Release Build"),
            "570.86.15");
  EXPECT_EQ(probe::kernel_module_version("GCC version: 12\n"), std::nullopt);
  EXPECT_EQ(probe::kernel_module_version(""), std::nullopt);
  EXPECT_EQ(probe::gpu_model("Model: \t\t NVIDIA H200\nIRQ:   \t\t 16\n"), "NVIDIA H200");
  EXPECT_EQ(probe::gpu_model("IRQ: 16\n"), "");
}

TEST(ProbeGpu, FindOnPathTakesTheFirstExecutableInAbsoluteFolders) {
  TempDir d;
  fs::create_directories(d.file("a"));
  fs::create_directories(d.file("b"));
  fs::create_directories(d.file("c"));
  d.write("a/nvidia-smi", "not executable\n");
  script(d, "b/nvidia-smi", "exit 0\n");
  script(d, "c/nvidia-smi", "exit 0\n");
  EXPECT_EQ(probe::find_on_path("nvidia-smi", d.file("a") + ":" + d.file("b") + ":" + d.file("c")),
            d.file("b/nvidia-smi"));
  EXPECT_EQ(probe::find_on_path("nvidia-smi", d.file("a")), "");
  EXPECT_EQ(probe::find_on_path("nvidia-smi", ""), "");
  // A relative folder (the working folder, when empty) is never searched.
  const fs::path before = fs::current_path();
  fs::current_path(d.file("c"));
  EXPECT_EQ(probe::find_on_path("nvidia-smi", ":.:c"), "");
  fs::current_path(before);
}

// --- The program run ---------------------------------------------------------------------------------

TEST(ProbeGpu, RunBoundedKillsAHangAndWhatItStarted) {
  TempDir d;
  const std::string pid_file = d.file("child.pid");
  const std::string hang = script(d, "hang", "sleep 30 &\necho $! > " + shell_quote(pid_file) + "\nwait\n");
  const auto start = std::chrono::steady_clock::now();
  // Long enough for the shell to have started its child on a loaded machine (the sanitized suite runs
  // beside others), short enough to show the hang is cut.
  const auto r = probe::run_bounded({hang}, std::chrono::milliseconds(1500), 1 << 20);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_GE(took, std::chrono::milliseconds(1500));
  // The sleep it started in the background is gone too (or a zombie waiting for init to reap it).
  const std::string child = std::string(trim(read_file(pid_file)));
  ASSERT_FALSE(child.empty());
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::ifstream stat("/proc/" + child + "/stat");
    std::string pid, comm, state;
    gone = !(stat >> pid >> comm >> state) || state == "Z";
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the background sleep " << child << " survived the timeout";
}

TEST(ProbeGpu, RunBoundedStopsEndlessOutputAtTheLimit) {
  TempDir d;
  const std::string endless = script(d, "endless", "yes '580.65.06, 9.0, NVIDIA H200'\n");
  const auto start = std::chrono::steady_clock::now();
  const auto r = probe::run_bounded({endless}, std::chrono::seconds(20), 100000);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_TRUE(r.too_much);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out.size(), 100000U);
}

TEST(ProbeGpu, RunBoundedReportsStatusArgumentsAndWhatCannotStart) {
  TempDir d;
  const std::string echo = script(d, "echo", "printf '%s|' \"$@\"\nread x && exit 7\necho err >&2\nexit 3\n");
  const auto r = probe::run_bounded({echo, "a b", "--x=*"}, std::chrono::seconds(10), 1000);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3) << "standard input is /dev/null: read fails";
  EXPECT_EQ(r.out, "a b|--x=*|") << "arguments are passed as they are, without a shell; stderr is not captured";
  const auto missing = probe::run_bounded({d.file("missing")}, std::chrono::seconds(10), 1000);
  EXPECT_FALSE(missing.started);
  EXPECT_EQ(missing.error, "No such file or directory");
  const auto killed = probe::run_bounded({script(d, "kill", "kill -9 $$\n")}, std::chrono::seconds(10), 1000);
  EXPECT_EQ(killed.exit_code, -1);
  EXPECT_EQ(killed.error, "was killed by signal 9 (Killed)");
}

// --- This machine's GPUs from the sources ----------------------------------------------------------

TEST(ProbeGpu, FakeNvidiaSmiOneGpu) {
  TempDir d;
  const std::string args = d.file("args");
  const std::string smi = script(
      d, "nvidia-smi",
      "echo \"$@\" > " + shell_quote(args) + "\nprintf '" + std::string("580.65.06, 9.0, NVIDIA H200") + "\\n'\n");
  const auto f = probe::this_machine_gpus(sources(smi, fake_proc(d, k_proprietary_version, {"NVIDIA H200"})));
  EXPECT_EQ(read_file(args), "--query-gpu=driver_version,compute_cap,name --format=csv,noheader\n");
  // nvidia-smi wins over the kernel module's folder.
  expect_fact(f.driver, "580.65.06", "nvidia-smi --query-gpu=driver_version");
  expect_fact(f.gpu_archs, "sm_90", "nvidia-smi: 1 GPU: NVIDIA H200 (sm_90)");
}

TEST(ProbeGpu, FakeNvidiaSmiTwoKindsOfGpu) {
  TempDir d;
  const std::string smi = printing(d, "nvidia-smi",
                                   "580.65.06, 9.0, NVIDIA H200\n580.65.06, 9.0, NVIDIA H200\n"
                                   "580.65.06, 8.0, NVIDIA A100-SXM4-80GB\n");
  const auto f = probe::this_machine_gpus(sources(smi, d.file("no-proc")));
  expect_fact(f.driver, "580.65.06", "nvidia-smi --query-gpu=driver_version");
  expect_fact(f.gpu_archs, "sm_80,sm_90", "nvidia-smi: 3 GPUs: NVIDIA H200 (sm_90) x2, NVIDIA A100-SXM4-80GB (sm_80)");
}

TEST(ProbeGpu, GarbageFromNvidiaSmiFallsBackToProc) {
  TempDir d;
  const std::string smi = printing(d, "nvidia-smi", "No devices were found\n");
  const std::string proc = fake_proc(d, k_open_version, {"NVIDIA H200", "NVIDIA H200"});
  const auto f = probe::this_machine_gpus(sources(smi, proc));
  expect_fact(f.driver, "580.65.06", "the kernel module's version in " + proc + "/version");
  expect_fact(
      f.gpu_archs, std::nullopt,
      "nvidia-smi printed a line that is not \"driver_version, compute_cap, name\": \"No devices were found\"; " +
          proc + " names 2 GPUs (NVIDIA H200 x2) but not their architecture");
}

TEST(ProbeGpu, FailingNvidiaSmiWithoutProc) {
  TempDir d;
  const std::string smi = printing(d, "nvidia-smi", k_smi_failed, 9);
  const auto f = probe::this_machine_gpus(sources(smi, d.file("no-proc")));
  const std::string why =
      "nvidia-smi exited with status 9: \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
      "driver....\"; no " +
      d.file("no-proc");
  expect_fact(f.driver, std::nullopt, why);
  expect_fact(f.gpu_archs, std::nullopt, why);
  // Exit 0 with the same message is garbage, not a GPU.
  const auto g = probe::this_machine_gpus(sources(printing(d, "smi0", k_smi_failed), d.file("no-proc")));
  EXPECT_FALSE(g.driver.known());
}

TEST(ProbeGpu, HangingNvidiaSmiIsCutAtTheTimeout) {
  TempDir d;
  const std::string smi = script(d, "nvidia-smi", "sleep 30\n");
  GpuSources s = sources(smi, fake_proc(d, "", {"NVIDIA GH200 480GB"}));
  s.timeout = std::chrono::milliseconds(400);
  const auto start = std::chrono::steady_clock::now();
  const auto f = probe::this_machine_gpus(s);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  expect_fact(f.driver, std::nullopt,
              "nvidia-smi did not finish within 0.4 s; " + s.proc_nvidia +
                  "/version does not name the kernel module's version");
  expect_fact(f.gpu_archs, std::nullopt,
              "nvidia-smi did not finish within 0.4 s; " + s.proc_nvidia +
                  " names 1 GPU (NVIDIA GH200 480GB) but not its architecture");
}

TEST(ProbeGpu, HugeOutputFromNvidiaSmiIsCut) {
  TempDir d;
  const std::string smi = script(d, "nvidia-smi", "yes '580.65.06, 9.0, NVIDIA H200'\n");
  const auto start = std::chrono::steady_clock::now();
  const auto f = probe::this_machine_gpus(sources(smi, d.file("no-proc")));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4)) << "cut by size, not by the timeout";
  expect_fact(f.gpu_archs, std::nullopt, "nvidia-smi wrote more than 1.0 MiB; no " + d.file("no-proc"));
}

TEST(ProbeGpu, NoNvidiaSmiButProc) {
  TempDir d;
  const std::string proc = fake_proc(d, k_proprietary_version, {"NVIDIA A100-SXM4-80GB", "NVIDIA H200", "NVIDIA H200"});
  const auto f = probe::this_machine_gpus(sources("", proc));
  expect_fact(f.driver, "550.54.15", "the kernel module's version in " + proc + "/version");
  expect_fact(f.gpu_archs, std::nullopt,
              "nvidia-smi is absent; " + proc +
                  " names 3 GPUs (NVIDIA A100-SXM4-80GB, NVIDIA H200 x2) but not their architecture");
  // A driver loaded without GPUs (or its folder only).
  const std::string bare = fake_proc(d, "", {}, "bare");
  const auto empty = probe::this_machine_gpus(sources("", bare));
  expect_fact(empty.driver, std::nullopt,
              "nvidia-smi is absent; " + bare + "/version does not name the kernel module's version");
  expect_fact(empty.gpu_archs, std::nullopt, "nvidia-smi is absent; " + bare + " names no GPU");
}

TEST(ProbeGpu, NoDriverAtAll) {
  TempDir d;
  const auto f = probe::this_machine_gpus(sources("", d.file("none")));
  const std::string why = "no NVIDIA driver on this machine: no nvidia-smi, no " + d.file("none");
  expect_fact(f.driver, std::nullopt, why);
  expect_fact(f.gpu_archs, std::nullopt, why);
  // A program named that is not one.
  d.write("not-a-program", "580.65.06, 9.0, NVIDIA H200\n");
  const auto g = probe::this_machine_gpus(sources(d.file("not-a-program"), d.file("none")));
  expect_fact(g.driver, std::nullopt,
              "nvidia-smi (" + d.file("not-a-program") + ") could not be run: Permission denied; no " + d.file("none"));
}

// --- Through `wheelcheck probe` --------------------------------------------------------------------

namespace {

nlohmann::json probe_json(const std::string& env, const std::string& root) {
  const auto r =
      run(env + " " + shell_quote(binary_path()) + " probe --root " + shell_quote(root) + " --json --no-exports -q");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST(ProbeGpu, ProbeOfSlashRecordsTheFakeGpus) {
  TempDir d;
  const std::string smi = printing(d, "nvidia-smi", "580.65.06, 9.0, NVIDIA H200\n580.65.06, 10.0, NVIDIA B200\n");
  const auto j = probe_json("WHEELCHECK_NVIDIA_SMI=" + shell_quote(smi), "/");
  EXPECT_EQ(j["driver"], (nlohmann::json{{"value", "580.65.06"}, {"note", "nvidia-smi --query-gpu=driver_version"}}));
  EXPECT_EQ(j["gpu_archs"], (nlohmann::json{{"value", "sm_90,sm_100"},
                                            {"note",
                                             "nvidia-smi: 2 GPUs: NVIDIA H200 (sm_90), NVIDIA B200 "
                                             "(sm_100)"}}));
  const auto none = probe_json("WHEELCHECK_NVIDIA_SMI= WHEELCHECK_PROC_NVIDIA=" + shell_quote(d.file("none")), "/");
  const std::string why = "no NVIDIA driver on this machine: no nvidia-smi, no " + d.file("none");
  EXPECT_EQ(none["driver"], (nlohmann::json{{"value", "unknown"}, {"note", why}}));
  EXPECT_EQ(none["gpu_archs"], (nlohmann::json{{"value", "unknown"}, {"note", why}}));
}

// The description of "/" with GPUs, and without, is one the schema accepts.
TEST(ProbeGpu, ProbeOfSlashValidates) {
  SKIP_WITHOUT_JSONSCHEMA();
  TempDir d;
  const std::string smi = printing(d, "nvidia-smi", "580.65.06, 9.0, NVIDIA H200\n");
  const std::vector<std::string> files{
      d.write("gpu.json", probe_json("WHEELCHECK_NVIDIA_SMI=" + shell_quote(smi), "/").dump()),
      d.write("none.json", probe_json("WHEELCHECK_NVIDIA_SMI= WHEELCHECK_PROC_NVIDIA=/nonexistent", "/").dump())};
  const auto v = validate_json(source_dir() + "/docs/image.schema.json", files);
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

// This machine as it is: its GPUs, or why there are none, and never a silent gap.
TEST(ProbeGpu, ProbeOfThisMachineSaysWhy) {
  const auto j = probe_json("env -u WHEELCHECK_NVIDIA_SMI -u WHEELCHECK_PROC_NVIDIA", "/");
  ASSERT_TRUE(j.contains("driver"));
  ASSERT_TRUE(j.contains("gpu_archs"));
  EXPECT_FALSE(j["gpu_archs"]["note"].get<std::string>().empty());
  if (!probe::find_on_path("nvidia-smi", getenv_or("PATH", "")).empty() || fs::exists("/proc/driver/nvidia")) {
    GTEST_SKIP() << "this machine has an NVIDIA driver: the no-driver wording is checked with fakes above";
  }
  const std::string why = "no NVIDIA driver on this machine: no nvidia-smi, no /proc/driver/nvidia";
  EXPECT_EQ(j["driver"], (nlohmann::json{{"value", "unknown"}, {"note", why}}));
  EXPECT_EQ(j["gpu_archs"], (nlohmann::json{{"value", "unknown"}, {"note", why}}));
}

// Another root: its GPUs are those of the machines it will run on, and nothing in it, or named by the
// variable, is ever run.
TEST(ProbeGpu, AnotherRootRunsNothing) {
  TempDir d;
  const std::string marker = d.file("ran");
  const std::string smi = script(d, "nvidia-smi", "touch " + shell_quote(marker) + "\necho '580.65.06, 9.0, X'\n");
  fs::create_directories(d.file("root/usr/bin"));
  fs::copy_file(smi, d.file("root/usr/bin/nvidia-smi"));
  const auto j = probe_json("PATH=" + shell_quote(d.file("root/usr/bin") + ":/usr/bin:/bin") +
                                " WHEELCHECK_NVIDIA_SMI=" + shell_quote(smi) +
                                " WHEELCHECK_PROC_NVIDIA=" + shell_quote(fake_proc(d, k_open_version, {"NVIDIA H200"})),
                            d.file("root"));
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_FALSE(j.contains("driver"));
  EXPECT_FALSE(j.contains("gpu_archs"));
}

}  // namespace unity_test_probe_gpu
