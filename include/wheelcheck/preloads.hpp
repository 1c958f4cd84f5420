// What `import torch` loads from Python before torch._C, per torch version: db/preloads.json (its sources are
// in the file). Applied by resolve::Space (inspector/resolve/preloads.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wheelcheck::preloads {

// One ctypes.CDLL of torch's _preload_cuda_deps: the first file matching `file` (a glob) in nvidia/<folder>/lib.
struct Step {
  std::string folder;  // "cuda_runtime"
  std::string file;    // "libcudart.so.*[0-9]"
  bool optional = false;
  int cuda_major_at_least = 0;  // only for a torch built for this CUDA major or newer (0: always)
};

// The preloads of one phase: after libtorch_global_deps.so loads (when `when` holds), or after it fails.
struct Phase {
  std::string when;       // after_load: "cudart_from_nvidia_wheel", "cudart_loaded"
  bool required = false;  // a missing file raises ValueError (the after_load phases catch it and stop)
  std::vector<Step> steps;
};

struct Rule {
  std::string from, until;  // torch versions [from, until); until "" is open
  bool verified = false;    // status "verified"; "unknown": what it preloads is not modelled (why)
  std::string why;
  std::string global_deps;  // "torch/lib/libtorch_global_deps.so", loaded RTLD_GLOBAL
  Phase after_load, on_failure;
  bool cuda_major_folder = false;  // also nvidia/cu<CUDA major>/lib
  std::string source;              // "repository file @commit (version)", for people
};

struct Table {
  std::string file;  // where it was read from
  std::vector<Rule> torch;
};

// Reads a wheelcheck-preloads/1 document; throws Error(BadInput) naming the file for a malformed one.
Table load(const std::string& path);
// The table of the db in use: the last db opened (image::Db registers its folder), else the one
// image::Db::locate finds; null when that db has no preloads.json or it cannot be read (error() says why).
const Table* current();
std::string error();
void use_db(const std::string& dir);
// The rule for a torch version ("2.7.1+cu128"); null when none covers it (before 1.13, or unparsable).
const Rule* rule_for(const Table& table, std::string_view version);
// Python's fnmatch for a file name: *, ?, [...] and [!...].
bool glob_match(std::string_view pattern, std::string_view name);

}  // namespace wheelcheck::preloads
