// The accelerator toolkits on the wheel's side, below the image check (inspector/verdict/) and the publisher
// check (inspector/lint/), which both ask it: which toolkit a wheel is built for, read from what it is
// (inspector/toolkit/toolkit.cpp), and which distribution ships a library it needs (db/providers.json and the
// db's image distributions: inspector/toolkit/providers.cpp). A toolkit's kind is image::ToolkitKind on both
// sides (an image's toolkit and a wheel's); it is written as a word only where it is printed
// (image::toolkit_kind_name, display_name).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wheelcheck/image.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/profile.hpp"

namespace wheelcheck::policy {
struct DependencyLibrary;
}

namespace wheelcheck::toolkit {

// --- Which toolkit a wheel is built for (inspector/toolkit/toolkit.cpp) ----------------------------------

// The accelerator toolkit a wheel is built for, read from what it is: its local version label, its project
// name where a part of it is a toolkit's word (flag-gems-cpp-cuda, cupy-cuda12x, torch-npu, torch-mlu), and
// the runtimes its ELF members need (libcudart.so.N: CUDA N; libascendcl.so, libhccl.so: CANN; libmcruntime.so:
// MACA; librccl.so, libgalaxyhip.so: DTK; libtopsrt.so: TOPS; libmusart.so: MUSA; libcnrt.so: Neuware;
// libtangrt.so: TangRT; libtccl.so: TSM). Labels as FlagOS and PyTorch write them: an SDK and its version
// (+cu130, +cuda13.3, +cann9.0.0.910c, +dtk2604, +tops1.10.6, +musa.4.3.6, +maca3.8.1.3, +neuware4.4.3,
// +corex4.5.0, +xre5.37.1, +tangrt1.2.0, +tsm260610, +ppu2.0.0, torch's +das.opt1.dtk2604 and +metax3.7.2.0),
// or a vendor and the Triton line FlagTree builds on (+triton3.6: NVIDIA; +ascend3.5, +hcu3.6, +xpu3.6,
// +iluvatar3.6, +metax3.6, +mthreads3.6, +enflame3.6, +sunrise3.6, +tsingmicro3.6, +ppu3.6), which names the
// vendor only. A label or name decides the vendor: the runtimes a member needs count only for that vendor
// (Iluvatar's, Hygon's and Kunlunxin's builds link a CUDA-compatible libcudart, and are not CUDA builds).
struct WheelToolkit {
  image::ToolkitKind kind = image::ToolkitKind::Cuda;
  std::string version;  // the SDK version the label or soname says ("13.0", "9.0.0", "26.04"); "" otherwise
  std::string because;  // "local version label +cu130", "flagcx/libflagcx.so needs libcudart.so.13"
  std::string chip;     // a chip the label names (+cann9.0.0.910c: "910C"); "" when it names none
  bool from_label = false;
  std::string line;  // the Triton line a vendor label names (FlagTree's +ascend3.5: "3.5"); "" otherwise
};
// Every toolkit the wheel is built for, each kind once (label, then name, then its members' runtimes). Empty:
// the wheel needs none (it runs on any image its tags fit), as a +cpu build never does.
std::vector<WheelToolkit> wheel_toolkits(const WheelProfile& wheel);
// The parts of that reading on their own (the publisher check compares them): what a local version label
// names ("2.10.0+cu130"), what a project name names ("cupy-cuda12x"), which toolkit a needed soname is the
// runtime of ("libcudart.so.12": CUDA 12); nullopt when it names none.
std::optional<WheelToolkit> of_label(const std::string& version);
std::optional<WheelToolkit> of_name(const std::string& name);
std::optional<WheelToolkit> of_soname(const std::string& soname);
// Whether the local version label says a CPU build (+cpu, +cpu.cxx11.abi): it needs no toolkit.
bool cpu_label(const std::string& version);
// A toolkit's name as people say it: "CUDA", "CANN", "CoreX", "TangRT", "Neuware".
std::string display_name(image::ToolkitKind kind);
// "a" or "an" before a name as it is said: "an XRE", "a DTK" (said letter by letter), "a MUSA 4.3.6", "a MACA", "a
// CUDA 13.0".
std::string with_article(const std::string& name);
// Why a build for toolkit `t` is not for the image's toolkit ("" when it is, or when either side does not
// say): CUDA by major version (CUDA's minor version compatibility), a vendor SDK by its first three version
// parts (FlagOS builds one wheel per SDK release: +cann8.5.0 is not for a CANN 9.0.0 image), and a chip the
// label names against the image's chips (+cann9.0.0.910c is for 910C images; an Ascend build without a chip
// suffix is FlagOS's 910B build, not for a 910C image).
std::string mismatch(const WheelToolkit& t, const image::Image& image);

// --- Which distribution ships a library (inspector/toolkit/providers.cpp) ---------------------------------

// A distribution that ships libraries (db/providers.json).
struct Provider {
  std::vector<std::string> distributions;  // normalized names; any of them provides
  // "package": only that distribution ships them (torch's libc10.so): needed and not declared is an error;
  // "runtime": a library carrier whose libraries an image's toolkit may also provide (nvidia-cublas-cu12).
  std::string kind;
  std::optional<image::ToolkitKind> toolkit;  // the toolkit its libraries belong to (cuda); none: no toolkit's
  std::string toolkit_version;                // that toolkit's release ("12")
  std::vector<std::string> libraries;         // the sonames it ships, exactly ("libc10.so"; Debian's "libc10.so.2.6"
                                              // is another build's: project_of)
  std::vector<std::string> symbols;           // fnmatch patterns of mangled names only it defines
  std::string namespaces;                     // those patterns for people ("c10::, c10d::, at::, torch::")
  std::string abi;                            // why a wheel that binds its symbols pins its release ("" when not)
  std::string source;                         // "db/providers.json", or the image distribution it was read from
};
// db/providers.json, then each library of the db's image distributions (a "package" provider of that name).
// Throws Error(BadInput) naming the file when it is malformed; an absent file gives none.
std::vector<Provider> load_providers(const image::Db& db);
// The same, loaded once per db folder and kept for the process (every check of a run reads it); empty when the
// file is absent or malformed (`wheelcheck lint` reports a malformed one).
const std::vector<Provider>& cached_providers(const image::Db& db);
// The provider of a needed soname ("libtorch_npu.so" -> torch-npu): a distribution that ships that very soname;
// null when none is known. Another build's soname of the same library is not shipped by it: PyPI's torch ships
// libtorch.so, and Debian's libtorch.so.2.6 is no torch wheel's (installing torch does not provide it).
const Provider* provider_of(const std::vector<Provider>& providers, const std::string& soname);
// The project whose library `soname` is, in its own build or another's under a soname that carries a release
// ("libc10.so.2.6", Debian's build of torch's libc10.so -> torch): what the library is, never who ships it (a fix
// that says "install" asks provider_of). Null when none is known.
const Provider* project_of(const std::vector<Provider>& providers, const std::string& soname);
// Whether `need` is the library `listed` names, in its build or another's: "libc10.so" is "libc10.so" and
// Debian's "libc10.so.2.6" (its sonames carry the release). Only an exact match is shipped by the provider.
bool soname_matches(const std::string& listed, const std::string& need);

// The wheel's Requires-Dist as an installer reads them for this wheel: a wheel variant installs those whose
// variant markers hold for it (the others are its sibling variants'); a marker that names no variant, or cannot
// be read without an image, counts as holding. A value that does not parse is kept, with its error.
std::vector<lock::Requirement> declared_requirements(const WheelProfile& wheel);
// The libraries the wheel's members need that a distribution it declares (Requires-Dist, without an extra) ships:
// what policy::analyze takes from that distribution's folder where a member's RPATH or RUNPATH looks there
// (PyTorch's $ORIGIN/../../nvidia/cuda_runtime/lib). `wheelcheck lint` judges the tag's claim with them.
std::vector<policy::DependencyLibrary> dependency_libraries(const WheelProfile& wheel,
                                                            const std::vector<Provider>& providers);

}  // namespace wheelcheck::toolkit
