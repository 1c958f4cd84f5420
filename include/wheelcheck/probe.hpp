// `wheelcheck probe --root DIR`: a real root folder (an unpacked container image, a debootstrap, or "/"
// inside a container) becomes an image description plus the export tables of every library in it.
// What the probe reads and in which order is described at the top of probes/probe.cpp.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "wheelcheck/container.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"

namespace wheelcheck::probe {

struct ProbeOptions {
  std::string root;  // host folder treated as "/"
  std::string name;  // description name (default: the root folder's name)
  std::string summary;
  image::ImageKind kind = image::ImageKind::Image;
  std::string group;
  std::vector<std::string> sources;                  // recorded as they are (say what the root was made from)
  std::string generated_by;                          // recorded as it is
  std::map<std::string, std::string> env;            // the image's environment (LD_LIBRARY_PATH, CUDA_HOME, ...)
  std::vector<std::string> extra_dirs;               // more folders to read libraries from ($LIB, $PLATFORM expanded)
  std::vector<std::string> extra_files;              // more files to read as libraries (DT_NEEDED paths with a '/')
  bool relocatable_site = false;                     // distributions of the one Python are written at "{site-packages}"
  bool export_tables = true;                         // read every library's exports (off: sonames and versions only)
  int jobs = 0;                                      // 0: hardware threads
  std::function<void(const std::string&)> progress;  // one line per stage, for people
};

struct ProbeResult {
  image::Image image;
  // Export tables to write, keyed by their reference (the image path without the leading '/', plus
  // ".exports.gz"); the description refers to them by that key.
  std::vector<std::pair<std::string, exports::Table>> tables;
  std::size_t files_read = 0;
};

ProbeResult probe_root(const ProbeOptions& options);

// A container image pulled into the cache (container::pull, docs/images.md): its config's Env as the
// environment and, without --name, a name from the reference ("runtime:2.2.0"); after the probe, where it
// came from ("from") and what the pull noticed (findings).
void describe_pulled(const container::PulledImage& pulled, ProbeOptions& options);
void record_pulled(const container::PulledImage& pulled, image::Image& image);

// Writes the description to `json_path` and the tables under `exports_dir` (created), recording in the
// description the exports folder relative to the description's folder. Files of the same reference are
// replaced; nothing is written outside exports_dir and json_path.
void write_probe(ProbeResult& result, const std::string& json_path, const std::string& exports_dir);

}  // namespace wheelcheck::probe
