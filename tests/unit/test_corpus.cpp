// Over the downloaded corpus of real third-party binaries (../shared/corpus/fetch-real-binaries.sh and
// make-real-wheels.sh; $WHEELCHECK_CORPUS, default ~/.cache/wheelcheck-corpus). Each test skips with a
// message when its part of the corpus is absent: the default suite never depends on it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include "net_server.hpp"
#include "readelf.hpp"
#include "support.hpp"
#include "wheelcheck/cuda.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/remote.hpp"
#include "wheelcheck/verdict.hpp"

#include <set>
#include <sstream>

using namespace wheelcheck;
using namespace wheelcheck::test;
namespace fs = std::filesystem;

namespace {

bool is_elf_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char head[4] = {};
  f.read(head, 4);
  return f.gcount() == 4 && elf::has_elf_magic(head, 4);
}

}  // namespace

namespace {
std::string missing_message() {
  return "corpus absent at " + corpus_dir() + ": run ../shared/corpus/fetch-real-binaries.sh and make-real-wheels.sh";
}
}  // namespace

// Every shared library in the corpus (PyTorch 1.13/2.6/2.14 for x86_64 and aarch64, the CUDA 12 runtime,
// glibc 2.41) and the CUDA 13.0 libraries of this machine: the fast reader equals LIEF and readelf.
TEST(Corpus, ReadersAgreeOnEveryLibrary) {
  std::vector<std::string> libs;
  for (const auto& f : find_files(corpus_dir() + "/debs", "")) {
    if (f.find(".so") != std::string::npos && !fs::is_symlink(f) && is_elf_file(f)) libs.push_back(f);
  }
  if (libs.empty()) GTEST_SKIP() << missing_message();
  for (const auto& f : find_files("/usr/local/cuda-13.0/lib", "")) {
    if (f.find(".so") != std::string::npos && !fs::is_symlink(f) && is_elf_file(f) &&
        fs::file_size(f) < (std::uintmax_t{200} << 20)) {
      libs.push_back(f);
    }
  }
  for (const auto& lib : libs) {
    SCOPED_TRACE(lib);
    const auto fast = elf::read_elf_file(lib);
    if (fs::file_size(lib) < (std::uintmax_t{700} << 20)) {  // LIEF copies the whole file: keep memory sane
      EXPECT_EQ(elf::read_elf(FileSource(lib), elf::ReaderKind::Lief), fast);
    }
    EXPECT_EQ(elf::read_elf(FileSource(lib), elf::ReaderKind::Fast), fast);
    expect_agrees_with_readelf(fast, lib);
  }
}

// The corpus wheels, inspected from the zip, equal the same libraries read from disk.
TEST(Corpus, WheelsMatchTheirLibrariesOnDisk) {
  const auto wheels = find_files(corpus_dir() + "/wheels", ".whl");
  if (wheels.empty()) GTEST_SKIP() << missing_message();
  for (const auto& w : wheels) {
    SCOPED_TRACE(w);
    const auto p = inspect_wheel(w);
    EXPECT_TRUE(p.record_verified);
    EXPECT_TRUE(p.problems.empty());
    EXPECT_FALSE(p.members.empty());
    for (const auto& m : p.members) {
      ASSERT_TRUE(m.elf) << m.error;
      EXPECT_FALSE(m.elf->symbols.empty()) << m.path;
    }
    // Headers-only (the 1.2 GB libtorch_cuda's dynamic section comes from its decoded end) reads the same,
    // except the GPU code in the middle of a compressed member: named, with its size, and left unread.
    InspectOptions headers;
    headers.verify = Verify::Headers;
    const auto h = inspect_wheel(w, headers);
    ASSERT_EQ(h.members.size(), p.members.size());
    for (std::size_t i = 0; i < p.members.size(); ++i) {
      const auto& full = p.members[i].cuda;
      const auto& head = h.members[i].cuda;
      ASSERT_EQ(head.has_value(), full.has_value()) << p.members[i].path;
      if (full) {
        EXPECT_EQ(full->unread, "") << p.members[i].path;
        EXPECT_GT(full->entries, 0U) << p.members[i].path;
        EXPECT_NE(head->unread.find("headers-only"), std::string::npos) << p.members[i].path;
        EXPECT_EQ(head->section_size, full->section_size) << p.members[i].path;
      }
      EXPECT_EQ(*h.members[i].elf, *p.members[i].elf) << p.members[i].path;
    }
  }
}

// Debian's libc10 2.6 needs GLIBC_2.38 (the README's corpus facts): the version need is read.
// Every corpus wheel read remotely, headers-only, on the loopback server: the same profile as the full
// read member by member (the GPU code in a compressed member's middle aside, as above), under 5% of the
// bytes of each large wheel (cuBLAS's dynamic section lies 114 MB before its member's end: a piece of the
// middle is decoded and placed), and one request for a wheel under 512 KiB (the first, suffix, request).
TEST(Corpus, RemoteHeadersOnlyReadsAPieceAndAgreesWithTheFullRead) {
  const auto wheels = find_files(corpus_dir() + "/wheels", ".whl");
  if (wheels.empty()) GTEST_SKIP() << missing_message();
  TempDir root;
  fs::create_directories(root.file("idx/corpus"));
  for (const auto& w : wheels) fs::create_symlink(w, root.file("idx/corpus/" + w.substr(w.rfind('/') + 1)));
  NetServer server(NetServer::index_server(root.path()));
  net::ClientOptions o;
  o.netrc_file = "/nonexistent/netrc";
  net::Client client(o);
  for (const auto& w : wheels) {
    SCOPED_TRACE(w);
    const std::string path = "/idx/files/corpus/" + w.substr(w.rfind('/') + 1);
    server.clear_stats();
    const auto remote = remote::inspect_url(server.url(path), {}, {}, nullptr, client).profile;
    std::size_t requests = 0;
    std::uint64_t bytes = 0;
    for (const auto& q : server.stats()) {
      if (q.value("path", "") != path) continue;
      ++requests;
      bytes += q.value("bytes_sent", std::uint64_t{0});
    }
    const auto size = fs::file_size(w);
    if (size < 512 * 1024) EXPECT_EQ(requests, 1U);
    if (size > (std::uint64_t{100} << 20))
      EXPECT_LT(bytes * 20, size) << bytes << " bytes in " << requests << " requests";
    const auto full = inspect_wheel(w);
    ASSERT_EQ(remote.members.size(), full.members.size());
    for (std::size_t i = 0; i < full.members.size(); ++i) {
      ASSERT_TRUE(remote.members[i].elf && full.members[i].elf) << full.members[i].path;
      EXPECT_EQ(remote.members[i].cuda.has_value(), full.members[i].cuda.has_value()) << full.members[i].path;
      EXPECT_EQ(*remote.members[i].elf, *full.members[i].elf) << full.members[i].path;
    }
  }
}

TEST(Corpus, Libc10NeedsGlibc238) {
  const std::string lib = corpus_dir() + "/debs/libtorch2.6/usr/lib/x86_64-linux-gnu/libc10.so.2.6";
  if (!fs::exists(lib)) GTEST_SKIP() << missing_message();
  const auto b = elf::read_elf_file(lib);
  bool found = false;
  for (const auto& n : b.version_needs) {
    for (const auto& v : n.versions) found |= n.file == "libc.so.6" && v.name == "GLIBC_2.38";
  }
  EXPECT_TRUE(found);
}

// A root made of Debian 13's glibc 2.41 and PyTorch 2.14 laid out as pip installs it: the probe reports
// glibc 2.41, Python 3.13, torch 2.14 with its libraries, and libc10's exports exactly as nm lists them.
TEST(CorpusProbe, Glibc241AndTorch214Root) {
  const std::string libc6 = corpus_dir() + "/debs/libc6/usr/lib/x86_64-linux-gnu";
  const std::string torch = corpus_dir() + "/debs/libtorch2.14/usr/lib/x86_64-linux-gnu";
  if (!fs::exists(libc6 + "/libc.so.6") || !fs::exists(torch)) GTEST_SKIP() << missing_message();
  TempDir t;
  const std::string root = t.file("root");
  const std::string lib = root + "/usr/lib/x86_64-linux-gnu";
  const std::string site = root + "/usr/lib/python3.13/site-packages";
  ASSERT_EQ(run("mkdir -p " + shell_quote(lib) + " " + shell_quote(site + "/torch/lib") + " " +
                shell_quote(site + "/torch-2.14.1.dist-info") + " " + shell_quote(root + "/usr/bin") + " " +
                shell_quote(root + "/etc") + " && ln -s usr/lib " + shell_quote(root + "/lib") + " && cp -a " +
                shell_quote(libc6) + "/*.so* " + shell_quote(lib) + "/")
                .exit_code,
            0);
  write_binary(root + "/etc/ld.so.conf", "/usr/lib/x86_64-linux-gnu\n");
  write_binary(root + "/usr/bin/python3.13", "");
  const std::string c10 = fs::canonical(torch + "/libc10.so.2.14").string();
  fs::copy_file(c10, site + "/torch/lib/libc10.so");
  write_binary(site + "/torch-2.14.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.14.1\n");
  write_binary(site + "/torch-2.14.1.dist-info/RECORD", "torch/lib/libc10.so,,\n");
  ASSERT_EQ(run("ldconfig -X -r " + shell_quote(root)).exit_code, 0);
  TempDir out;
  const auto cmd = run(shell_quote(binary_path()) + " probe -q --root " + shell_quote(root) + " -o " +
                       shell_quote(out.file("d.json")));
  ASSERT_EQ(cmd.exit_code, 0) << cmd.err;
  const auto im = image::load_file(out.file("d.json"));
  EXPECT_EQ(im.libc_version.text(), "2.41");
  ASSERT_EQ(im.pythons.size(), 1U);
  EXPECT_EQ(im.pythons[0].version, "3.13");
  const auto* d = im.distribution("torch");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->version, "2.14.1");
  ASSERT_EQ(d->libraries.size(), 1U);
  EXPECT_EQ(d->libraries[0].soname, "libc10.so.2.14");
  // nm's view, parsed here independently of wheelcheck.
  std::set<std::string> nm, ours;
  std::stringstream ss(run("nm -D --defined-only " + shell_quote(c10)).out);
  for (std::string line; std::getline(ss, line);) nm.insert(line.substr(line.find_last_of(' ') + 1));
  const auto table = exports::load_table(d->libraries[0].exports_file);
  for (const auto& e : table.symbols()) {
    ours.insert(std::string(e.name) + (e.version.empty() ? "" : (e.hidden ? "@" : "@@") + std::string(e.version)));
  }
  EXPECT_EQ(ours, nm);
  EXPECT_GT(ours.size(), 500U);
  // The cache lists glibc's libraries, as ldconfig does.
  const auto p = run("ldconfig -p -C " + shell_quote(root + "/etc/ld.so.cache"));
  EXPECT_EQ(std::to_string(im.loader.cache.size()) + " libs found", p.out.substr(0, p.out.find(" in cache"))) << p.out;
}

// Every generated db file is what its committed command makes today.
TEST(DbRegenerationCorpus, EveryGeneratedFileIsReproduced) {
  if (!fs::exists(corpus_dir() + "/debs/libtorch2.6")) GTEST_SKIP() << missing_message();
  const std::string build = fs::path(binary_path()).parent_path().string();
  const auto r = run("WHEELCHECK_SHARED=" + shell_quote(shared_dir()) + " " +
                     shell_quote(source_dir() + "/scripts/gen-db.sh") + " --check --build " + shell_quote(build));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("db/ is up to date"), std::string::npos) << r.out << r.err;
  // What could be regenerated was compared above; an input the corpus lacks (Debian's CPython debs come from
  // scripts/fetch-cpython.sh, not the corpus fetch) makes the test a skip that names it, never a pass.
  if (r.err.find("gen-db: skipped") != std::string::npos) GTEST_SKIP() << "inputs missing: " << r.err;
}

// PyTorch 2.6's libtorch_python in an image whose PyTorch libraries are 2.14's (as an in-place upgrade
// leaves them): the 22 c10 symbols 2.14 no longer exports are reported, each classified, with the
// MessageLogger constructor's signature change. The image is a root folder probed on the fly.
TEST(CorpusVerdict, TorchPython26AgainstTorch214Exports) {
  const std::string debs = corpus_dir() + "/debs";
  const std::string wheel = corpus_dir() + "/wheels/torch_python_ext-2.6.0-cp313-cp313-linux_x86_64.whl";
  const std::string t214 = debs + "/libtorch2.14/usr/lib/x86_64-linux-gnu";
  if (!fs::exists(wheel) || !fs::exists(t214) || !fs::exists(debs + "/libc6")) GTEST_SKIP() << missing_message();
  TempDir t;
  const std::string root = t.file("root");
  const std::string lib = root + "/usr/lib/x86_64-linux-gnu";
  fs::create_directories(lib);
  fs::create_directories(root + "/usr/lib/python3.13/site-packages");
  fs::create_directories(root + "/usr/bin");
  fs::create_directories(root + "/etc");
  fs::create_symlink("usr/lib", root + "/lib");
  write_binary(root + "/usr/bin/python3.13", "");
  write_binary(root + "/etc/ld.so.conf", "/usr/lib/x86_64-linux-gnu\n");
  ASSERT_EQ(run("cp -a " + shell_quote(debs) + "/libc6/usr/lib/x86_64-linux-gnu/*.so* " + shell_quote(debs) +
                "/libstdc++6/usr/lib/x86_64-linux-gnu/*.so* " + shell_quote(debs) +
                "/libgcc-s1/usr/lib/x86_64-linux-gnu/*.so* " + shell_quote(lib) + "/")
                .exit_code,
            0);
  for (const char* name : {"libc10", "libtorch_cpu", "libtorch", "libshm"}) {
    fs::copy_file(fs::canonical(t214 + "/" + name + ".so.2.14"), lib + "/" + name + ".so.2.6");
  }
  // Libraries the corpus does not carry, present with nothing exported (their symbols are not the point).
  for (const char* soname : {"libfmt.so.10", "libprotobuf.so.32", "libcpp-httplib.so.0.18"}) {
    std::string err;
    auto so = build_shared(t, soname, std::string(soname) + ".c", "int wheelcheck_stub;\n",
                           std::string("-Wl,-soname,") + soname, "gcc", &err);
    ASSERT_TRUE(so) << err;
    fs::copy_file(*so, lib + "/" + soname);
  }
  ASSERT_EQ(run("ldconfig -X -r " + shell_quote(root)).exit_code, 0);
  const auto r =
      run(shell_quote(binary_path()) + " " + shell_quote(wheel) + " --image " + shell_quote(root) + " --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "incompatible");
  std::map<std::string, nlohmann::json> c10;
  std::map<std::string, int> classes;
  for (const auto& f : j["findings"]) {
    if (f["kind"] != "missing-symbol") continue;
    // c10's own functions: a qualified name in namespace c10 (_ZN3c10..., _ZNK3c10... for const members),
    // not a function elsewhere that merely returns a c10 type.
    const std::string d = f["demangled"];
    static const std::regex in_c10("^_ZN[KVRO]*3c10");
    if (!std::regex_search(f["symbol"].get<std::string>(), in_c10)) continue;
    c10[d] = f;
    ++classes[f["classification"].get<std::string>()];
    EXPECT_EQ(f["member"], "torch_python_ext/libtorch_python.so.2.6");
    EXPECT_FALSE(f["explanation"].get<std::string>().empty());
  }
  EXPECT_EQ(c10.size(), 22U) << r.out.substr(0, 4000);
  for (const auto& [k, n] : classes) std::cout << "[   NOTE   ] " << k << ": " << n << "\n";
  const std::string logger = "c10::MessageLogger::MessageLogger(char const*, int, int)";
  ASSERT_TRUE(c10.count(logger));
  EXPECT_EQ(c10[logger]["classification"], "signature-changed");
  bool candidate = false;
  for (const auto& c : c10[logger]["candidates"])
    candidate |= c == "c10::MessageLogger::MessageLogger(c10::SourceLocation, int, bool)";
  EXPECT_TRUE(candidate) << c10[logger].dump(2);
  // glibc 2.41's libc defines GLIBC_2.38: no version finding for libc.so.6.
  for (const auto& f : j["findings"])
    EXPECT_FALSE(f["kind"] == "missing-version" && f["library"] == "libc.so.6") << f.dump();
}

// NVIDIA's cuBLAS 13 wheel (make-real-wheels.sh --large): libcublas.so.13 and libcublasLt.so.13 have the
// CUDA runtime linked in (no libcudart.so.13 need), yet their code is CUDA 13's (cubin format 1.8, PTX ISA
// 9.0), so they need a CUDA 13 driver (>= 580): a 535 driver cannot run them, a 580 one can.
TEST(CorpusVerdict, CublasNeedsTheCuda13Driver) {
  const std::string wheel = corpus_dir() + "/wheels/nvidia_cublas-13.1.0.3-py3-none-manylinux_2_27_x86_64.whl";
  if (!fs::exists(wheel))
    GTEST_SKIP() << "no cuBLAS wheel at " << wheel << ": run ../shared/corpus/make-real-wheels.sh --large";
  const std::string check =
      shell_quote(binary_path()) + " " + shell_quote(wheel) + " --image cuda13.0 --json --assume ";
  const auto old = run(check + "driver=535.104.05");
  EXPECT_EQ(old.exit_code, 1) << old.err;
  const auto j = nlohmann::json::parse(old.out);
  EXPECT_EQ(j["verdict"], "incompatible");
  ASSERT_TRUE(j["driver"].is_object()) << old.out.substr(0, 2000);
  EXPECT_TRUE(cuda::driver_at_least(j["driver"]["needs"].get<std::string>(), "580")) << j["driver"].dump(2);
  EXPECT_EQ(j["driver"]["satisfied"], false);
  EXPECT_NE(j["driver"]["because"].get<std::string>().find("runtime linked statically into nvidia/cu13/lib/libcublas"),
            std::string::npos)
      << j["driver"].dump(2);
  std::set<std::string> too_old;
  for (const auto& f : j["findings"]) {
    if (f["kind"] != "driver-too-old") continue;
    EXPECT_EQ(f["severity"], "error");
    EXPECT_TRUE(cuda::driver_at_least(f["required_version"].get<std::string>(), "580")) << f.dump(2);
    too_old.insert(f["member"].get<std::string>());
  }
  EXPECT_EQ(too_old, (std::set<std::string>{"nvidia/cu13/lib/libcublas.so.13", "nvidia/cu13/lib/libcublasLt.so.13"}));

  const auto now = run(check + "driver=580.65.06");
  const auto k = nlohmann::json::parse(now.out);
  EXPECT_EQ(k["driver"]["satisfied"], true) << k["driver"].dump(2);
  for (const auto& f : k["findings"]) EXPECT_NE(f["kind"], "driver-too-old") << f.dump(2);
}

// Real manylinux wheels (NVIDIA's CUDA 12.4 runtime, manylinux_2_17; cuBLAS 13, manylinux_2_27): consistent
// with exactly their own tag, and compatible with every manylinux target at or after it.
TEST(CorpusPolicy, RealManylinuxWheelsAreWhatTheirTagsSay) {
  const std::map<std::string, std::string> wheels = {
      {"nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux_2_17_x86_64.whl", "manylinux_2_17_x86_64"},
      {"nvidia_cublas-13.1.0.3-py3-none-manylinux_2_27_x86_64.whl", "manylinux_2_27_x86_64"}};
  const image::Db db(source_dir() + "/db");
  const auto& policies = db.policies();
  std::size_t checked = 0;
  for (const auto& [name, tag] : wheels) {
    const std::string path = corpus_dir() + "/wheels/" + name;
    if (!fs::exists(path)) continue;
    SCOPED_TRACE(name);
    InspectOptions o;
    o.verify = Verify::Headers;  // cuBLAS is 423 MB: the tables are all the policies need
    const auto p = inspect_wheel(path, o);
    const auto c = policy::analyze(p, policies);
    EXPECT_EQ(c.tag, tag) << policy::to_json(c, std::nullopt).dump(2);
    EXPECT_FALSE(policy::check_claim(p, c, policies));
    const int floor = policies.find(tag)->priority;
    for (const auto* target : policies.of(policy::Libc::Glibc, "x86_64")) {
      verdict::CheckOptions co;
      co.policies = &policies;
      const auto r = verdict::check(p, policy::target_image(*target), co);
      EXPECT_EQ(r.verdict, target->priority <= floor ? verdict::Verdict::Compatible : verdict::Verdict::Incompatible)
          << target->tag() << "\n"
          << verdict::to_json(r).dump(2);
    }
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << missing_message();
}
