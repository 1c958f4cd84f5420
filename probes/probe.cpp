// The probe: a real root folder becomes an image description and export tables.
//
// Every path is resolved inside the root by RootFs (symlinks re-rooted, ".." stopped at "/"), so a probe
// of an unpacked image never reads the host. The stages, in order:
//   1. The loader's configuration: etc/ld.so.conf with its includes, etc/ld.so.cache (old, new or compat
//      format), LD_LIBRARY_PATH from the given environment.
//   2. The architecture, from the program interpreter the root ships (ld-linux-*.so*, ld-musl-*.so.1),
//      and the loader's built-in folders for it (Debian's multiarch folders, lib64 on Red Hat's layout,
//      musl's /lib:/usr/local/lib:/usr/lib).
//   3. Every file named like a shared library (*.so, *.so.*) in LD_LIBRARY_PATH, the ld.so.conf folders,
//      the folders of the cache's entries and the default folders. Each real file is read once, however
//      many names and folders reach it: header, dynamic section and dynamic symbols only (pread, see
//      inspector/elf/scanner.cpp), on all cores, largest first.
//   4. Pythons (probes/python.cpp): <prefix>/lib/python3.X with an interpreter or a site-packages folder;
//      Debian's dist-packages folders join the /usr Python of the same version. Each interpreter is read
//      like the libraries in 3: its exports are what extension modules bind against first.
//   5. Distributions (probes/python.cpp): every *.dist-info in those folders (METADATA's name and version;
//      RECORD's native files, else top_level.txt's packages or the folder named like it), read like 3.
//   6. Facts derived from the files: glibc's version from libc.so.6's version definitions (musl's from
//      the apk database), the newest GLIBCXX_/CXXABI_ of libstdc++.so.6, the CUDA version (version.json,
//      version.txt, the nvidia-cuda-runtime distribution, libcudart's soname, in that order), the driver
//      version from libcuda.so.<version> or /proc/driver/nvidia/version when the root is "/".
// What could not be determined is written as unknown with the reason; what could not be read is a finding.
#include "wheelcheck/probe.hpp"

#include "probes/detail.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::probe {

using image::Fact;
using image::Origin;

namespace {

// "2.38" < "2.4" is false: numeric, component by component.
bool version_less(std::string_view a, std::string_view b) {
  auto next = [](std::string_view& s) -> long {
    long v = 0;
    std::size_t i = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
    s.remove_prefix(i);
    if (!s.empty() && s.front() == '.') s.remove_prefix(1);
    return v;
  };
  while (!a.empty() || !b.empty()) {
    const long x = next(a), y = next(b);
    if (x != y) return x < y;
  }
  return false;
}

bool is_version_number(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.')) return false;
  }
  return s.front() != '.' && s.back() != '.';
}

// The newest PREFIX<number> among version definitions ("GLIBC_" -> "2.36").
std::optional<std::string> newest(const std::vector<std::string>& versions, std::string_view prefix) {
  std::optional<std::string> best;
  for (const auto& v : versions) {
    if (v.size() <= prefix.size() || v.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string number = v.substr(prefix.size());
    if (!is_version_number(number)) continue;
    if (!best || version_less(*best, number)) best = number;
  }
  return best;
}

std::string multiarch_triple(const std::string& arch) {
  static const std::map<std::string, std::string> k_triples = {
      {"x86_64", "x86_64-linux-gnu"},          {"i686", "i386-linux-gnu"},
      {"aarch64", "aarch64-linux-gnu"},        {"ppc64le", "powerpc64le-linux-gnu"},
      {"ppc64", "powerpc64-linux-gnu"},        {"s390x", "s390x-linux-gnu"},
      {"riscv64", "riscv64-linux-gnu"},        {"armhf", "arm-linux-gnueabihf"},
      {"armel", "arm-linux-gnueabi"},          {"mips64el", "mips64el-linux-gnuabi64"},
      {"loongarch64", "loongarch64-linux-gnu"}};
  auto it = k_triples.find(arch);
  return it == k_triples.end() ? std::string{} : it->second;
}

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

// One real ELF file to read, and what it becomes.
struct Job {
  std::string image_path;  // canonical
  std::string host_path;
  std::uint64_t size = 0;
  bool program = false;  // an executable (a Python interpreter): ET_EXEC is read too
  // results
  bool ok = false;
  elf::Binary binary;  // symbols dropped after the table is built
  std::optional<exports::Table> table;
  std::optional<Finding> finding;
};

void read_job(Job& job, bool want_table) {
  try {
    int fd = ::open(job.host_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
      job.finding = Finding{"unreadable", job.image_path, std::string("cannot open: ") + std::strerror(errno)};
      return;
    }
    unsigned char magic[4] = {};
    const ssize_t n = ::pread(fd, magic, sizeof magic, 0);
    ::close(fd);
    if (n != 4 || !elf::has_elf_magic(magic, 4)) {
      // Linker scripts named libc.so are normal; a versioned name that is not ELF is worth a word.
      if (base_name(job.image_path).find(".so.") != std::string::npos) {
        job.finding = Finding{"not-elf", job.image_path, "named like a shared library but not an ELF file"};
      }
      return;
    }
    job.binary = elf::read_elf_file(job.host_path);
    // ET_DYN only, except for programs: executables are not loaded as libraries.
    if (job.binary.type != elf::FileType::Shared && !(job.program && job.binary.type == elf::FileType::Executable))
      return;
    if (want_table) job.table = exports::Table::from_binary(job.binary, base_name(job.image_path), job.image_path);
    job.binary.symbols.clear();
    job.binary.symbols.shrink_to_fit();
    job.ok = true;
  } catch (const Error& e) {
    std::string detail = e.what();
    const auto pos = detail.find(job.host_path);
    if (pos != std::string::npos) detail.replace(pos, job.host_path.size(), job.image_path);
    job.finding = Finding{"malformed-elf", job.image_path, detail};
  }
}

void run_jobs(std::vector<Job>& jobs, int threads, bool want_table,
              const std::function<void(const std::string&)>& progress) {
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return jobs[a].size > jobs[b].size; });
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex progress_mutex;
  std::size_t reported = 0;
  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= order.size()) return;
      read_job(jobs[order[i]], want_table);
      const std::size_t d = done.fetch_add(1) + 1;
      if (progress && order.size() >= 50) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        if (d * 10 / order.size() > reported * 10 / order.size() && d < order.size()) {
          reported = d;
          progress(fmt::format("read {}/{} files", d, order.size()));
        }
      }
    }
  };
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(jobs.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

std::vector<std::string> version_names(const elf::Binary& b) {
  std::vector<std::string> out;
  for (const auto& d : b.version_definitions) {
    if (!d.base()) out.push_back(d.name);
  }
  return out;
}

std::string table_key(const std::string& image_path) {
  return image_path.substr(1) + ".exports.gz";
}

}  // namespace

ProbeResult probe_root(const ProbeOptions& opt) {
  RootFs root(opt.root);
  auto say = [&](const std::string& s) {
    if (opt.progress) opt.progress(s);
  };
  ProbeResult result;
  image::Image& im = result.image;
  im.origin = Origin::Probed;
  im.name = opt.name.empty() ? base_name(std::filesystem::absolute(opt.root).lexically_normal().string()) : opt.name;
  if (im.name.empty()) im.name = "root";
  im.summary = opt.summary;
  im.kind = opt.kind;
  im.group = opt.group;
  im.sources = opt.sources;
  im.generated_by = opt.generated_by;
  im.env = opt.env;
  auto& findings = im.findings;

  // 1. The loader's configuration.
  say("reading /etc/ld.so.conf and /etc/ld.so.cache");
  const LdSoConf conf = read_ld_so_conf(root, findings);
  const LdSoCache cache = read_ld_so_cache(root, findings);
  im.loader.conf_dirs = conf.dirs;
  im.loader.conf_files = conf.files;
  im.loader.cache_format = cache.format;
  for (const auto& e : cache.entries) im.loader.cache.push_back({e.soname, e.path, e.arch});
  if (auto it = opt.env.find("LD_LIBRARY_PATH"); it != opt.env.end()) {
    im.loader.ld_library_path = split_list(it->second, ":;");
  }

  // 2. Architecture from the program interpreter.
  std::string arch;
  int arch_class = 0;
  bool musl = false;
  std::string interp_path;
  for (const char* pattern : {"/lib64/ld-linux*.so*", "/lib/ld-linux*.so*", "/lib/*/ld-linux*.so*",
                              "/usr/lib64/ld-linux*.so*", "/usr/lib/ld-linux*.so*", "/usr/lib/*/ld-linux*.so*",
                              "/lib/ld-musl-*.so.1", "/usr/lib/ld-musl-*.so.1", "/lib/ld64.so.*", "/lib64/ld64.so.*"}) {
    for (const auto& p : root.glob(pattern)) {
      auto r = root.resolve(p, &findings);
      if (!r || root.type(r->image_path) != RootFs::Type::File) continue;
      try {
        const elf::Binary b = elf::read_elf_file(r->host_path);
        arch = elf::machine_name(b.machine, b.elf_class, b.endian, b.e_flags);
        arch_class = b.elf_class == elf::Class::Elf64 ? 64 : 32;
        musl = base_name(p).rfind("ld-musl-", 0) == 0;
        interp_path = p;
      } catch (const Error& e) {
        findings.push_back({"malformed-elf", r->image_path, e.what()});
      }
      if (!arch.empty()) break;
    }
    if (!arch.empty()) break;
  }
  if (!arch.empty()) {
    im.arch = Fact::known_as(arch, "machine of the program interpreter " + interp_path, Origin::Probed);
  } else {
    im.arch = Fact::unknown("no program interpreter (ld-linux*.so*, ld-musl-*.so.1) in the root", Origin::Probed);
  }

  // Default folders.
  const std::string triple = multiarch_triple(arch);
  auto exists_dir = [&](const std::string& p) { return root.type(p) == RootFs::Type::Directory; };
  if (musl) {
    im.loader.default_dirs = {"/lib", "/usr/local/lib", "/usr/lib"};
    im.loader.default_dirs_note = Fact::known_as("musl", "musl's built-in library path", Origin::Derived);
  } else if (!triple.empty() && (exists_dir("/lib/" + triple) || exists_dir("/usr/lib/" + triple))) {
    im.loader.default_dirs = {"/lib/" + triple, "/usr/lib/" + triple, "/lib", "/usr/lib"};
    im.loader.default_dirs_note = Fact::known_as(
        "multiarch", "Debian/Ubuntu multiarch layout: glibc built with slibdir /lib/" + triple, Origin::Derived);
  } else if (arch_class == 64 && (exists_dir("/lib64") || exists_dir("/usr/lib64"))) {
    im.loader.default_dirs = {"/lib64", "/usr/lib64"};
    im.loader.default_dirs_note =
        Fact::known_as("lib64", "lib64 layout (Red Hat, SUSE, manylinux images)", Origin::Derived);
  } else {
    im.loader.default_dirs = {"/lib", "/usr/lib"};
    im.loader.default_dirs_note = Fact::known_as("lib", "glibc's generic default", Origin::Derived);
  }

  // 3. Library folders, in the loader's order of preference.
  std::vector<std::string> folders;
  for (const auto& d : im.loader.ld_library_path) add_unique(folders, d);
  for (const auto& d : conf.dirs) add_unique(folders, d);
  for (const auto& e : cache.entries) add_unique(folders, dir_name(e.path));
  for (const auto& d : im.loader.default_dirs) add_unique(folders, d);
  // Folders a wheel's absolute search paths name (a check of a root on the fly): the loader looks there.
  for (std::string d : opt.extra_dirs) {
    if (d.find("$ORIGIN") != std::string::npos || d.find("${ORIGIN}") != std::string::npos) continue;
    std::string lib = im.loader.default_dirs.empty() ? "lib" : im.loader.default_dirs.front().substr(1);
    for (const auto& [token, value] : {std::pair<std::string, std::string>{"${LIB}", lib},
                                       {"$LIB", lib},
                                       {"${PLATFORM}", arch},
                                       {"$PLATFORM", arch}}) {
      for (auto p = d.find(token); p != std::string::npos; p = d.find(token)) d.replace(p, token.size(), value);
    }
    add_unique(folders, d);
  }

  std::map<std::string, std::size_t> job_of;  // canonical image path -> job
  std::vector<Job> jobs;
  std::vector<std::vector<std::string>> names_of;
  auto add_job = [&](const std::string& image_path, std::vector<Finding>* f) -> std::optional<std::size_t> {
    auto r = root.resolve(image_path, f);
    if (!r) return std::nullopt;
    if (root.type(r->image_path) != RootFs::Type::File) return std::nullopt;
    auto [it, inserted] = job_of.emplace(r->image_path, jobs.size());
    if (inserted) {
      Job j;
      j.image_path = r->image_path;
      j.host_path = r->host_path;
      std::error_code ec;
      j.size = std::filesystem::file_size(r->host_path, ec);
      jobs.push_back(std::move(j));
      names_of.emplace_back();
    }
    return it->second;
  };
  std::size_t system_jobs_end = 0;
  for (const auto& folder : folders) {
    for (const auto& name : root.list_dir(folder)) {
      if (!library_like(name)) continue;
      const std::string p = join_path(folder, name);
      if (auto j = add_job(p, &findings)) add_unique(names_of[*j], p);
    }
  }
  // The program interpreter is loaded into every process, wherever it sits (only /lib64 on Red Hat's layout).
  if (!interp_path.empty()) {
    if (auto j = add_job(interp_path, &findings)) add_unique(names_of[*j], interp_path);
  }
  system_jobs_end = jobs.size();

  // 4. Pythons.
  say(fmt::format("{} library files in {} folders; looking for Pythons", jobs.size(), folders.size()));
  im.pythons = find_pythons(root);
  // The interpreters' own exports (CPython's C API, which extension modules bind against) and needs.
  std::vector<std::pair<std::size_t, std::size_t>> python_jobs;  // (python, job)
  for (std::size_t i = 0; i < im.pythons.size(); ++i) {
    if (im.pythons[i].executable.empty()) continue;
    if (auto j = add_job(im.pythons[i].executable, &findings)) {
      jobs[*j].program = true;
      python_jobs.emplace_back(i, *j);
    }
  }

  // 5. Distributions and their native files.
  struct DistFound {
    image::Distribution dist;
    std::vector<std::pair<std::string, std::size_t>> files;  // relative path, job
  };
  std::vector<DistFound> dists;
  for (auto& found : find_distributions(root, im.pythons, findings)) {
    DistFound df{std::move(found.dist), {}};
    for (const auto& rel : found.files) {
      if (auto j = add_job(join_path(df.dist.location, rel), &findings)) df.files.emplace_back(rel, *j);
    }
    dists.push_back(std::move(df));
  }

  // Read every file once.
  say(fmt::format("reading {} ELF files ({})", jobs.size(),
                  opt.export_tables ? "headers, dynamic sections, exports" : "headers and dynamic sections"));
  const int threads = opt.jobs > 0 ? opt.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  run_jobs(jobs, threads, opt.export_tables, opt.progress);
  result.files_read = jobs.size();
  for (auto& j : jobs) {
    if (j.finding) findings.push_back(*j.finding);
  }

  for (std::size_t i = 0; i < system_jobs_end; ++i) {
    Job& j = jobs[i];
    if (!j.ok) continue;
    image::Library l;
    l.path = j.image_path;
    l.names = names_of[i];
    std::sort(l.names.begin(), l.names.end());
    l.soname = j.binary.soname.value_or("");
    l.machine = elf::machine_name(j.binary.machine, j.binary.elf_class, j.binary.endian, j.binary.e_flags);
    l.elf_class = j.binary.elf_class == elf::Class::Elf64 ? 64 : 32;
    l.needed = j.binary.needed;
    l.versions = version_names(j.binary);
    l.origin = Origin::Probed;
    if (j.table) l.exports = table_key(j.image_path);
    im.libraries.push_back(std::move(l));
  }
  std::sort(im.libraries.begin(), im.libraries.end(),
            [](const image::Library& a, const image::Library& b) { return a.path < b.path; });
  for (const auto& [pi, ji] : python_jobs) {
    const Job& j = jobs[ji];
    if (!j.ok) continue;
    im.pythons[pi].needed = j.binary.needed;
    if (j.table) im.pythons[pi].exports = table_key(j.image_path);
  }

  for (auto& df : dists) {
    for (const auto& [rel, ji] : df.files) {
      Job& j = jobs[ji];
      if (!j.ok) continue;
      image::DistLibrary l;
      l.path = rel;
      l.soname = j.binary.soname.value_or("");
      l.machine = elf::machine_name(j.binary.machine, j.binary.elf_class, j.binary.endian, j.binary.e_flags);
      l.elf_class = j.binary.elf_class == elf::Class::Elf64 ? 64 : 32;
      l.needed = j.binary.needed;
      l.versions = version_names(j.binary);
      if (j.table) l.exports = table_key(j.image_path);
      df.dist.libraries.push_back(std::move(l));
    }
    if (opt.relocatable_site && im.pythons.size() == 1 && im.pythons[0].site_packages.size() == 1) {
      df.dist.location = std::string(image::k_site_placeholder);
      df.dist.python.clear();
    }
    im.distributions.push_back(std::move(df.dist));
  }
  std::sort(im.distributions.begin(), im.distributions.end(),
            [](const image::Distribution& a, const image::Distribution& b) {
              return std::tie(a.location, a.name) < std::tie(b.location, b.name);
            });

  // 6. Facts derived from the files.
  auto system_lib = [&](std::string_view soname) -> const image::Library* {
    // The loader's choice: the cache's entry for this arch, then the first folder that has it.
    for (const auto& e : cache.entries) {
      if (e.soname != soname) continue;
      if (auto r = root.resolve(e.path)) {
        for (const auto& l : im.libraries) {
          if (l.path == r->image_path && (arch.empty() || l.machine == arch)) return &l;
        }
      }
    }
    for (const auto& folder : folders) {
      for (const auto& l : im.libraries) {
        if (l.soname == soname && (arch.empty() || l.machine == arch) &&
            std::find(l.names.begin(), l.names.end(), join_path(folder, soname)) != l.names.end()) {
          return &l;
        }
      }
    }
    return nullptr;
  };

  if (musl) {
    im.libc_kind = Fact::known_as("musl", "program interpreter " + interp_path, Origin::Probed);
    std::optional<std::string> version;
    try {
      const std::string db = root.read_file("/lib/apk/db/installed", std::uint64_t{64} << 20);
      const auto pos = db.find("\nP:musl\n");
      const auto start = db.rfind("P:musl\n", 0) == 0 ? 0 : (pos == std::string::npos ? std::string::npos : pos + 1);
      if (start != std::string::npos) {
        const auto v = db.find("\nV:", start);
        if (v != std::string::npos) {
          std::string ver = db.substr(v + 3, db.find('\n', v + 3) - (v + 3));
          if (auto dash = ver.find("-r"); dash != std::string::npos) ver.resize(dash);
          version = ver;
        }
      }
    } catch (const Error&) {
    }
    im.libc_version = version
                          ? Fact::known_as(*version, "package musl in /lib/apk/db/installed", Origin::Probed)
                          : Fact::unknown("musl does not record its version in its files, and no apk database says it",
                                          Origin::Probed);
  } else if (const image::Library* libc = system_lib("libc.so.6")) {
    im.libc_kind = Fact::known_as("glibc", libc->path, Origin::Probed);
    if (auto v = newest(libc->versions, "GLIBC_")) {
      im.libc_version = Fact::known_as(*v, "newest GLIBC_ version definition of " + libc->path, Origin::Probed);
    } else {
      im.libc_version = Fact::unknown(libc->path + " defines no GLIBC_ versions", Origin::Probed);
    }
  } else {
    im.libc_kind = Fact::unknown("no libc.so.6 or musl loader found in the loader's folders", Origin::Probed);
    im.libc_version = Fact::unknown("no C library found", Origin::Probed);
  }
  if (const image::Library* cxx = system_lib("libstdc++.so.6")) {
    if (auto v = newest(cxx->versions, "GLIBCXX_")) {
      im.glibcxx = Fact::known_as(*v, "newest GLIBCXX_ version definition of " + cxx->path, Origin::Probed);
    }
    if (auto v = newest(cxx->versions, "CXXABI_")) {
      im.cxxabi = Fact::known_as(*v, "newest CXXABI_ version definition of " + cxx->path, Origin::Probed);
    }
  } else {
    im.glibcxx = Fact::unknown("no libstdc++.so.6 in the loader's folders", Origin::Probed);
  }

  // CUDA.
  std::optional<image::Toolkit> cuda;
  auto ensure_cuda = [&]() -> image::Toolkit& {
    if (!cuda) {
      cuda.emplace();
      cuda->kind = "cuda";
    }
    return *cuda;
  };
  std::vector<std::string> cuda_roots = {"/usr/local/cuda"};
  for (const auto& p : root.glob("/usr/local/cuda-*")) cuda_roots.push_back(p);
  for (const auto& dir : cuda_roots) {
    if (cuda && cuda->version.known()) break;
    try {
      const std::string text = root.read_file(dir + "/version.json", std::uint64_t{1} << 20);
      const auto j = nlohmann::json::parse(text);
      const std::string v = j.at("cuda").at("version").get<std::string>();
      auto parts = split_list(v, ".");
      ensure_cuda().version = Fact::known_as(parts.size() >= 2 ? parts[0] + "." + parts[1] : v,
                                             "cuda.version " + v + " in " + dir + "/version.json", Origin::Probed);
      if (j.contains("cuda_cudart")) {
        const std::string rt = j.at("cuda_cudart").at("version").get<std::string>();
        cuda->runtime = Fact::known_as(rt, "cuda_cudart.version in " + dir + "/version.json", Origin::Probed);
      }
      continue;
    } catch (const Error&) {
    } catch (const nlohmann::json::exception& e) {
      findings.push_back({"malformed-version", dir + "/version.json", e.what()});
    }
    try {
      const std::string text = root.read_file(dir + "/version.txt", std::uint64_t{1} << 20);
      std::smatch m;
      if (std::regex_search(text, m, std::regex(R"(CUDA Version ([0-9]+)\.([0-9]+)(\.[0-9]+)?)"))) {
        ensure_cuda().version = Fact::known_as(m[1].str() + "." + m[2].str(),
                                               "\"" + m[0].str() + "\" in " + dir + "/version.txt", Origin::Probed);
      }
    } catch (const Error&) {
    }
  }
  if (!cuda || !cuda->runtime.known()) {
    // The runtime's own distribution: a pip-installed nvidia-cuda-runtime(-cuXX), or a toolkit laid out
    // from those wheels (/usr/local/cuda-X/dist-info).
    std::vector<std::pair<std::string, std::string>> found;  // version, where
    for (const auto& d : im.distributions) {
      const std::string n = wheel::normalize_project_name(d.name);
      if (n.rfind("nvidia-cuda-runtime", 0) == 0) found.emplace_back(d.version, d.location + " (" + d.name + ")");
    }
    for (const auto& dir : cuda_roots) {
      for (const auto& p : root.glob(dir + "/dist-info/nvidia_cuda_runtime*.dist-info")) {
        try {
          const wheel::Metadata md = wheel::parse_metadata(root.read_file(p + "/METADATA", std::uint64_t{16} << 20));
          if (!md.version.empty()) found.emplace_back(md.version, p);
        } catch (const Error&) {
        }
      }
    }
    if (!found.empty()) {
      const auto& [v, where] = found.front();
      ensure_cuda().runtime = Fact::known_as(v, "nvidia-cuda-runtime " + v + " at " + where, Origin::Probed);
      if (!cuda->version.known()) {
        auto parts = split_list(v, ".");
        cuda->version = Fact::known_as(parts.size() >= 2 ? parts[0] + "." + parts[1] : v,
                                       "from the CUDA runtime's version " + v, Origin::Derived);
      }
    }
  }
  std::set<std::string> cudart;
  for (const auto& l : im.libraries) {
    if (l.soname.rfind("libcudart.so.", 0) == 0 && (arch.empty() || l.machine == arch)) cudart.insert(l.soname);
  }
  for (const auto& d : im.distributions) {
    for (const auto& l : d.libraries) {
      if (l.soname.rfind("libcudart.so.", 0) == 0) cudart.insert(l.soname);
    }
  }
  if (!cudart.empty()) {
    image::Toolkit& t = ensure_cuda();
    t.runtime_sonames.assign(cudart.begin(), cudart.end());
    if (!t.version.known()) {
      const std::string major = cudart.rbegin()->substr(std::string_view("libcudart.so.").size());
      t.version = Fact::unknown(
          "only the runtime's soname says CUDA " + major + ".x (no version.json, no runtime distribution)",
          Origin::Probed);
    }
  }
  if (cuda) {
    if (!cuda->runtime.set) cuda->runtime = Fact::unknown("no version.json names cuda_cudart", Origin::Probed);
    im.toolkit = cuda;
  }

  // The driver: user-space libcuda is versioned by file name; in containers it is mounted from the host.
  std::optional<std::string> driver;
  std::string driver_note;
  for (const auto& l : im.libraries) {
    if (l.soname != "libcuda.so.1") continue;
    const std::string file = base_name(l.path);
    if (file.rfind("libcuda.so.", 0) == 0 && file != "libcuda.so.1") {
      driver = file.substr(std::string_view("libcuda.so.").size());
      driver_note = "file name of " + l.path;
      break;
    }
  }
  if (!driver && std::filesystem::equivalent(root.host_root(), "/")) {
    try {
      const std::string text = read_text_file("/proc/driver/nvidia/version", 1 << 16);
      std::smatch m;
      if (std::regex_search(text, m, std::regex(R"(Kernel Module\s+([0-9]+\.[0-9]+(\.[0-9]+)?))"))) {
        driver = m[1].str();
        driver_note = "/proc/driver/nvidia/version";
      }
    } catch (const Error&) {
    }
  }
  if (driver) {
    im.driver = Fact::known_as(*driver, driver_note, Origin::Probed);
  } else if (cuda) {
    im.driver =
        Fact::unknown("no libcuda.so.1 in the root: the driver comes from the host at run time", Origin::Probed);
  }
  if (cuda)
    im.gpu_archs = Fact::unknown("a root folder does not show the GPUs of the machines it will run on", Origin::Probed);

  // No interpreter (a toolkit's folder, a layer): the machine its libraries are built for.
  if (arch.empty()) {
    std::map<std::string, int> votes;
    for (const auto& l : im.libraries) ++votes[l.machine];
    for (const auto& d : im.distributions) {
      for (const auto& l : d.libraries) ++votes[l.machine];
    }
    const auto best =
        std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (best != votes.end()) {
      im.arch =
          Fact::known_as(best->first, fmt::format("machine of {} of its libraries", best->second), Origin::Derived);
    }
  }

  // A layer says only what its files show: what it lacks (a C library, an interpreter) is the base's to say.
  if (opt.kind == "layer") {
    for (Fact* f : {&im.arch, &im.libc_kind, &im.libc_version, &im.glibcxx, &im.cxxabi, &im.driver, &im.gpu_archs}) {
      if (f->set && !f->known()) *f = Fact{};
    }
    if (!im.libc_kind.known()) {
      im.loader.default_dirs.clear();
      im.loader.default_dirs_note = Fact{};
    }
    if (opt.relocatable_site) im.pythons.clear();
    if (im.arch.origin == Origin::Derived) im.arch = Fact{};  // the base image's interpreter decides
    if (im.loader.cache_format == "none") im.loader.cache_format.clear();
  }

  // Tables, keyed by their reference.
  for (auto& j : jobs) {
    if (j.ok && j.table) result.tables.emplace_back(table_key(j.image_path), std::move(*j.table));
  }
  std::sort(result.tables.begin(), result.tables.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.path, a.kind, a.detail) < std::tie(b.path, b.kind, b.detail);
  });
  findings.erase(std::unique(findings.begin(), findings.end()), findings.end());
  say(fmt::format("{} libraries, {} Pythons, {} distributions, {} findings", im.libraries.size(), im.pythons.size(),
                  im.distributions.size(), findings.size()));
  return result;
}

void write_probe(ProbeResult& result, const std::string& json_path, const std::string& exports_dir) {
  namespace fs = std::filesystem;
  const fs::path json_dir = fs::absolute(json_path).parent_path();
  if (!exports_dir.empty()) {
    make_dirs(exports_dir);
    for (const auto& [key, table] : result.tables) {
      if (key.find("..") != std::string::npos) {
        throw Error(ErrorKind::Internal, "export table key escapes its folder: " + key);
      }
      make_dirs(fs::path(exports_dir + "/" + key).parent_path().string());
    }
    // Compression dominates (zlib level 9, for small deterministic files): one table per core at a time,
    // largest first.
    std::vector<std::size_t> order(result.tables.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return result.tables[a].second.symbols().size() > result.tables[b].second.symbols().size();
    });
    std::atomic<std::size_t> next{0};
    std::mutex error_mutex;
    std::optional<Error> error;
    auto worker = [&] {
      for (std::size_t i = next.fetch_add(1); i < order.size(); i = next.fetch_add(1)) {
        const auto& [key, table] = result.tables[order[i]];
        try {
          exports::write_table(table, exports_dir + "/" + key);
        } catch (const Error& e) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = e;
        }
      }
    };
    const unsigned threads = std::max(1U, std::min(std::thread::hardware_concurrency(), 8U));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    if (error) throw *error;
    result.image.exports_dir = fs::relative(fs::absolute(exports_dir), json_dir).lexically_normal().string();
  } else {
    for (auto& l : result.image.libraries) l.exports.clear();
    for (auto& d : result.image.distributions) {
      for (auto& l : d.libraries) l.exports.clear();
    }
  }
  make_dirs(json_dir.string());
  image::save_file(result.image, json_path);
}

}  // namespace wheelcheck::probe
