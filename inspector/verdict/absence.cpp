// Whether a library nothing in the image provides is known to be absent (include/wheelcheck/absence.hpp).
//
// A description is a partial world unless it says otherwise: the db's Ubuntu layers list the libraries of the
// packages their sources name, not every file of the image. So a need it does not list is a question, not an
// answer, unless one of these states it:
//   1. the description itself: "inventory": {"absent": [...]} (a release whose archive has no package for it,
//      Ubuntu 24.04's libtinfo.so.5), or --assume library=!NAME;
//   2. a complete inventory: a probed image, a packaging target's policy, "inventory": {"complete": true};
//   3. the C library: glibc's own libraries on an image whose C library is musl or bionic;
//   4. the toolkit: the runtime of another toolkit, or of another CUDA major (libcudart.so.12, libcublas.so.12 on a
//      CUDA 13.0 image), when the image states its toolkit (and, for the major, its version). Iluvatar's CoreX,
//      Hygon's DTK and Kunlunxin's XRE ship CUDA-compatible runtimes: a CUDA soname is not ruled out there;
//   5. the distributions: a library only a Python distribution ships (db/providers.json, "package"), when the
//      image lists its distributions and none of those is among them, or the one installed lists all its
//      libraries (probed, or the published wheel it names) and this is not one of them (torch 2.10.0+cpu has
//      no libtorch_cuda.so).
#include <algorithm>

#include "wheelcheck/absence.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::verdict {

namespace {

std::string base_of(const std::string& path) {
  return path.substr(path.find_last_of('/') + 1);
}

// glibc's own libraries: the C library's package ships them all, whatever else an image installs.
bool glibc_library(const std::string& soname) {
  static const char* const k_glibc[] = {"libc.so.6",   "libm.so.6",   "libmvec.so.1",      "libpthread.so.0",
                                        "libdl.so.2",  "librt.so.1",  "libutil.so.1",      "libresolv.so.2",
                                        "libanl.so.1", "libnsl.so.1", "libthread_db.so.1", "libBrokenLocale.so.1"};
  if (std::find(std::begin(k_glibc), std::end(k_glibc), soname) != std::end(k_glibc)) return true;
  return soname.rfind("ld-linux", 0) == 0 || soname.rfind("ld64.so.", 0) == 0;
}

// Toolkits whose SDK ships a CUDA-compatible runtime (libcudart.so.N of their own): toolkit::wheel_toolkits.
bool cuda_compatible(image::ToolkitKind kind) {
  return kind == image::ToolkitKind::Corex || kind == image::ToolkitKind::Dtk || kind == image::ToolkitKind::Xre;
}

std::string major_of(const std::string& version) {
  return version.substr(0, version.find('.'));
}

std::string toolkit_words(const image::Toolkit& t) {
  return toolkit::display_name(t.kind) + (t.version.known() ? " " + *t.version.value : "");
}

bool ships(const image::Distribution& d, const std::string& soname) {
  return std::any_of(d.libraries.begin(), d.libraries.end(), [&](const image::DistLibrary& l) {
    const std::string file = base_of(l.path);
    return l.soname == soname || file == soname || l.soname.rfind(soname + ".", 0) == 0 ||
           soname.rfind(file + ".", 0) == 0;
  });
}

// 4. The toolkit's word.
std::string toolkit_rules_out(const image::Image& im, const std::string& soname, const toolkit::Provider* p) {
  if (!im.toolkit) return "";
  const image::Toolkit& t = *im.toolkit;
  std::optional<image::ToolkitKind> of_kind;  // the toolkit the soname belongs to
  std::string of_version;
  if (const auto rt = toolkit::of_soname(soname)) {
    of_kind = rt->kind;
    of_version = rt->version;
  } else if (p != nullptr && p->kind == "runtime" && p->toolkit) {
    of_kind = p->toolkit;
    of_version = p->toolkit_version;
  }
  if (!of_kind) return "";
  const std::string theirs = toolkit::display_name(*of_kind) + (of_version.empty() ? "" : " " + of_version);
  if (*of_kind != t.kind) {
    if (*of_kind == image::ToolkitKind::Cuda && cuda_compatible(t.kind)) return "";
    return soname + " belongs to " + theirs + ", and the image's toolkit is " + toolkit_words(t);
  }
  if (of_version.empty() || !t.version.known() || major_of(of_version) == major_of(*t.version.value)) return "";
  std::string runtimes;
  if (!t.runtime_sonames.empty()) runtimes = " (its runtime libraries: " + join(t.runtime_sonames, ", ") + ")";
  return soname + " belongs to " + theirs + ", and the image's toolkit is " + toolkit_words(t) + runtimes;
}

// 5. The distributions' word.
std::string distributions_rule_out(const image::Image& im, const std::string& soname, const toolkit::Provider& p) {
  if (p.kind != "package") return "";
  for (const auto& name : p.distributions) {
    const image::Distribution* d = im.distribution(name);
    if (d == nullptr) continue;
    // Its list is the build's whole list where it was probed or names the very wheel it lists (PyTorch's own
    // builds); a vendor build's list names the common libraries only. Listed: there, off the path.
    const bool whole = d->origin == image::Origin::Probed || d->published.has_value();
    if (!whole || d->libraries.empty() || ships(*d, soname)) return "";
    return soname + " ships with " + d->name + ", and the image's " + d->name + " " + d->version + " lists its " +
           std::to_string(d->libraries.size()) + " libraries" + (d->layer.empty() ? "" : " (" + d->layer + ")") +
           " without it";
  }
  if (im.distributions.empty()) return "";  // the image does not say what pip installed
  std::vector<std::string> installed;
  for (const auto& d : im.distributions) installed.push_back(d.name + " " + d.version);
  return soname + " ships with " + join(p.distributions, " or ") + " (" + p.source + "), which the image does not " +
         "install (its distributions: " + join(installed, ", ") + ")";
}

std::string how_to_state(const std::string& soname) {
  return "state it: probe the image (`wheelcheck probe --root DIR`), add a layer that lists " + soname +
         ", or --assume library=" + soname + " (it is there, its exports unknown) or --assume library=!" + soname +
         " (it is not)";
}

}  // namespace

Absence absence_of(const image::Image& im, const std::string& soname, const std::vector<toolkit::Provider>* providers) {
  Absence a;
  a.known = true;
  const auto& gone = im.inventory.absent;
  if (std::find(gone.begin(), gone.end(), soname) != gone.end()) {
    const bool assumed = std::any_of(im.assumptions.begin(), im.assumptions.end(),
                                     [&](const std::string& s) { return s.rfind("library=!" + soname + " ", 0) == 0; });
    a.basis = AbsenceBasis::Stated;
    a.because = assumed ? soname + " is assumed absent (--assume library=!" + soname + ")"
                        : "the image's description states that it has no " + soname +
                              (im.inventory.note.empty() ? "" : " (" + im.inventory.note + ")");
    return a;
  }
  if (im.inventory.complete) {
    a.basis = AbsenceBasis::Inventory;
    a.because = "the image's library inventory is complete (" +
                (im.inventory.note.empty() ? std::string("probed from its files") : im.inventory.note) + ")";
    return a;
  }
  if (glibc_library(soname) && im.libc_kind.known() && *im.libc_kind.value != "glibc") {
    a.basis = AbsenceBasis::Libc;
    a.because = soname + " is part of glibc, and the image's C library is " + *im.libc_kind.value;
    return a;
  }
  const toolkit::Provider* p = providers != nullptr ? toolkit::provider_of(*providers, soname) : nullptr;
  if (std::string why = toolkit_rules_out(im, soname, p); !why.empty()) {
    a.basis = AbsenceBasis::Toolkit;
    a.because = std::move(why);
    return a;
  }
  if (p != nullptr) {
    if (std::string why = distributions_rule_out(im, soname, *p); !why.empty()) {
      a.basis = AbsenceBasis::Distribution;
      a.because = std::move(why);
      return a;
    }
  }
  // Not stated: say what the description does list, and where from.
  a.known = false;
  a.basis = AbsenceBasis::NotStated;
  std::vector<std::string> from;
  for (const auto& l : im.libraries) {
    if (!l.layer.empty() && l.origin != image::Origin::Assumed &&
        std::find(from.begin(), from.end(), l.layer) == from.end())
      from.push_back(l.layer);
  }
  const std::size_t listed = std::count_if(im.libraries.begin(), im.libraries.end(),
                                           [](const image::Library& l) { return l.origin != image::Origin::Assumed; });
  a.because =
      soname + " is not stated in image " + im.name + ": its description lists " + std::to_string(listed) +
      (listed == 1 ? " library" : " libraries") + " and does not say it lists all" +
      (from.empty() ? "" : " (" + std::string(from.size() == 1 ? "layer " : "layers ") + join(from, ", ") + ")");
  if (glibc_library(soname)) a.because += "; it is part of glibc, which the image's C library ships";
  a.state_it = how_to_state(soname);
  return a;
}

}  // namespace wheelcheck::verdict
