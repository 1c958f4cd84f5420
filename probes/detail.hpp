// Internal to probes/: the stages probe_root (probes/probe.cpp) runs, each declared with the file that
// holds it, and what they hand each other. The numbers are those of the list at the top of probe.cpp.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelcheck/elf.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/problem.hpp"
#include "wheelcheck/rootfs.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::probe {

// What the probe asks of names and lists (probes/paths.cpp); the path helpers are util.hpp's (image
// paths are '/'-separated strings inside the root).
bool library_like(std::string_view name);  // libfoo.so, libfoo.so.1.2
void add_unique(std::vector<std::string>& v, const std::string& s);

// --- Every ELF file the probe reads (probes/files.cpp) ------------------------------------------------

// One real file, and what reading it gave.
struct ElfFile {
  std::string image_path;  // canonical
  std::string host_path;
  std::uint64_t size = 0;
  bool program = false;            // an executable (a Python interpreter): ET_EXEC is read too
  bool library = false;            // in a folder the loader searches: one of the image's libraries
  std::vector<std::string> names;  // image paths that reach it in the loader's folders
  // Filled by ElfFiles::read_all.
  bool ok = false;     // an ELF file of a type the probe records
  elf::Binary binary;  // symbols dropped after the table is built
  std::optional<exports::Table> table;
  std::optional<Problem> finding;
};

// The real files of a root, each once however many names and folders reach it (by canonical path).
class ElfFiles {
 public:
  explicit ElfFiles(const RootFs& root) : m_root(root) {}
  const RootFs& root() const { return m_root; }
  // The index of the regular file `image_path` resolves to, added when new; nullopt when it resolves to
  // nothing or to something else than a regular file (what stopped the resolution joins `findings`).
  std::optional<std::size_t> add(const std::string& image_path, std::vector<Problem>& findings);
  std::size_t size() const { return m_files.size(); }
  ElfFile& operator[](std::size_t i) { return m_files[i]; }
  const ElfFile& operator[](std::size_t i) const { return m_files[i]; }
  // Reads every file once (header, dynamic section, dynamic symbols when `want_tables`) on `threads`
  // threads, largest first, saying how far it got every tenth of the way when there are 50 files or more;
  // what could not be read joins `findings`.
  // Files before `first` were read already.
  void read_all(unsigned threads, bool want_tables, const std::function<void(const std::string&)>& progress,
                std::vector<Problem>& findings, std::size_t first = 0);
  // The export tables read, keyed by table_key() and sorted by key; the files keep no table.
  std::vector<std::pair<std::string, exports::Table>> take_tables();

 private:
  const RootFs& m_root;
  std::map<std::string, std::size_t> m_index;  // canonical image path -> file
  std::vector<ElfFile> m_files;
};

// The reference of a file's export table: the image path without its leading '/', plus ".exports.gz".
std::string table_key(const std::string& image_path);
// What the description says of a file that was read.
image::Library library_record(const ElfFile& file);
image::DistLibrary dist_library_record(const ElfFile& file, const std::string& relative_path);
// The same facts of a binary read elsewhere (a published wheel's member), without an export reference.
image::DistLibrary dist_library_of(const elf::Binary& binary, const std::string& relative_path);

// --- Stages 1 to 3: the loader, the architecture, the library folders (probes/loader.cpp) -------------

// Stage 1: etc/ld.so.conf and etc/ld.so.cache as read, recorded in `loader` with LD_LIBRARY_PATH from
// the image's environment.
struct LoaderConfig {
  LdSoConf conf;
  LdSoCache cache;
};
LoaderConfig read_loader_config(const RootFs& root, const std::map<std::string, std::string>& env,
                                image::Loader& loader, std::vector<Problem>& findings);

// Stage 2: the program interpreter the root ships, and the machine it is built for.
struct Interpreter {
  std::string path;  // "" when the root has none
  std::string arch;  // elf::machine_name(); "" when the root has no interpreter
  int elf_class = 0;
  bool musl = false;
};
Interpreter find_interpreter(const RootFs& root, std::vector<Problem>& findings);
image::Fact arch_fact(const Interpreter& interpreter);
// The loader's built-in folders for that interpreter, and how they were chosen.
void choose_default_dirs(const RootFs& root, const Interpreter& interpreter, image::Loader& loader);

// Stage 3: the folders the loader searches, in its order of preference (LD_LIBRARY_PATH, ld.so.conf, the
// cache's folders, the default folders), then `extra_dirs` with $LIB and $PLATFORM expanded.
std::vector<std::string> library_folders(const image::Loader& loader, const LoaderConfig& config,
                                         const std::string& arch, const std::vector<std::string>& extra_dirs);
// Every file named like a shared library in those folders, and the program interpreter, added to
// `files`; returns how many files the system's libraries are (they come first).
std::size_t add_system_libraries(ElfFiles& files, const std::vector<std::string>& folders,
                                 const Interpreter& interpreter, std::vector<Problem>& findings);
// One file, by its image path, added as one of the image's libraries (a DT_NEEDED path names it).
void add_library_file(ElfFiles& files, const std::string& path, std::vector<Problem>& findings);
// Every file named like a shared library in `folder`, added to `files` as one of the image's libraries.
void add_folder_libraries(ElfFiles& files, const std::string& folder, std::vector<Problem>& findings);
// Stage 3b: the folders the files' own DT_RPATH and DT_RUNPATH name ($ORIGIN the folder of each path that
// reaches the file, $LIB and every $PLATFORM value expanded) that are not in `folders` yet, read as the
// image's libraries, with the files their DT_NEEDED paths (entries with a '/') name, again for what those
// name, until nothing new is named (at most 8 rounds).
// `folders` grows by the folders read.
void add_search_path_folders(ElfFiles& files, std::vector<std::string>& folders, const std::string& lib_token,
                             const std::vector<std::string>& platforms, unsigned threads, bool want_tables,
                             std::vector<Problem>& findings);
// The symbolic links to folders on the way to each of `folders` (and the folders of `paths`), by the
// canonical path of the link (its folder resolved) to the canonical folder it reaches: what the kernel
// follows where a search path climbs with "..".
void record_dir_links(const RootFs& root, const std::vector<std::string>& folders,
                      std::map<std::string, std::string>& links);
// The image's libraries read, sorted by path.
std::vector<image::Library> system_libraries(const ElfFiles& files);

// The library the loader would choose for a soname: the cache's entry for the architecture, then the
// first folder that has it; null when none.
struct SystemLookup {
  const RootFs& root;
  const LdSoCache& cache;
  const std::vector<std::string>& folders;
  const std::string& arch;
  const std::vector<image::Library>& libraries;
  const image::Library* find(std::string_view soname) const;
};

// --- Stages 4 and 5: Pythons and their distributions (probes/python.cpp) ------------------------------

// Stage 4: the Pythons of a root: <prefix>/lib/python3.X with an interpreter or a site-packages folder;
// Debian's dist-packages folders join the /usr Python of the same version.
std::vector<image::Python> find_pythons(const RootFs& root);
// Their interpreters, added to `files` as programs: (python, file) pairs.
using PythonFiles = std::vector<std::pair<std::size_t, std::size_t>>;
PythonFiles add_interpreters(ElfFiles& files, const std::vector<image::Python>& pythons,
                             std::vector<Problem>& findings);
// What reading an interpreter gave: its needed libraries and its export table.
void record_interpreters(std::vector<image::Python>& pythons, const ElfFiles& files, const PythonFiles& read);

// Stage 5: every *.dist-info / *.egg-info in those Pythons' site folders, with its native files
// (relative to the distribution's location): from RECORD, else from the packages top_level.txt names or
// the package folder named like the distribution, with a finding that says what was assumed.
struct FoundDistribution {
  image::Distribution dist;
  std::vector<std::string> files;
  std::vector<std::pair<std::string, std::size_t>> elf_files;  // those that are regular files: (path, file)
};
std::vector<FoundDistribution> find_distributions(const RootFs& root, const std::vector<image::Python>& pythons,
                                                  std::vector<Problem>& findings);
void add_distribution_files(ElfFiles& files, std::vector<FoundDistribution>& dists, std::vector<Problem>& findings);
// The distributions with the libraries read, sorted by location and name; `at_placeholder` writes their
// location as "{site-packages}" (the one site folder of the one Python of a relocatable layer).
std::vector<image::Distribution> distribution_records(std::vector<FoundDistribution> dists, const ElfFiles& files,
                                                      bool at_placeholder);

// --- Stage 6: facts derived from the files -----------------------------------------------------------

// The C library (glibc's newest GLIBC_ version, musl's from the apk database) and libstdc++'s newest
// GLIBCXX_ and CXXABI_ versions (probes/libc.cpp).
void derive_c_runtime(const RootFs& root, const Interpreter& interpreter, const SystemLookup& system,
                      image::Image& image);
// The CUDA toolkit and the GPU driver (probes/cuda.cpp).
std::optional<image::Toolkit> find_cuda(const RootFs& root, const image::Image& image, const std::string& arch,
                                        std::vector<Problem>& findings);
// For the root "/", the driver and the GPUs are this machine's (probes/gpu.cpp); for any other root, the
// driver is libcuda.so.<version>'s, when the root ships it.
void find_driver(const RootFs& root, image::Image& image);

// --- Stage 6, the GPUs of the probing machine itself (probes/gpu.cpp) --------------------------------

// The NVIDIA driver's version and the GPUs' architectures ("sm_80,sm_90"), each known or unknown with
// the reason.
struct GpuFacts {
  image::Fact driver;
  image::Fact gpu_archs;
};
// What `nvidia-smi --query-gpu=driver_version,compute_cap,name --format=csv,noheader` printed, as facts:
// a pure function of the text. Output that is not such lines, or lists no GPU, leaves both unknown.
GpuFacts facts_from_nvidia_smi(std::string_view output);
// A compute capability as nvidia-smi prints it, as nvcc names the architecture: "9.0" -> "sm_90",
// "12.1" -> "sm_121"; "" for anything else.
std::string sm_of_compute_cap(std::string_view cap);
// /proc/driver/nvidia/version's kernel module version ("580.65.06"), and the model an information file of
// /proc/driver/nvidia/gpus/* names ("" when none).
std::optional<std::string> kernel_module_version(std::string_view version_file);
std::string gpu_model(std::string_view information);

// Where this machine's GPUs are read from.
struct GpuSources {
  std::string nvidia_smi;                           // the program to run; "" when there is none
  std::string proc_nvidia = "/proc/driver/nvidia";  // the kernel module's folder
  std::chrono::milliseconds timeout{5000};          // for nvidia-smi, which is killed past it
  std::size_t max_output = std::size_t{1} << 20;    // nvidia-smi's output, at most
};
// $WHEELCHECK_NVIDIA_SMI (set but empty: none), else nvidia-smi on $PATH; $WHEELCHECK_PROC_NVIDIA, else
// /proc/driver/nvidia.
GpuSources gpu_sources_from_environment();
// The first executable `name` in the absolute folders of a PATH-style list; "" when none.
std::string find_on_path(std::string_view name, std::string_view path);
GpuFacts this_machine_gpus(const GpuSources& sources);

// A program run without a shell, its standard input and error on /dev/null, in a process group of its
// own that is killed past `timeout` or once its output passes `max_output` bytes.
struct ProgramRun {
  bool started = false;
  int exit_code = -1;      // -1 when it did not exit by itself
  bool timed_out = false;  // killed at the timeout
  bool too_much = false;   // killed for writing more than max_output
  std::string out;         // its standard output, at most max_output bytes
  std::string error;       // why it could not start, or the signal that ended it
};
ProgramRun run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, std::size_t max_output);

}  // namespace wheelcheck::probe
