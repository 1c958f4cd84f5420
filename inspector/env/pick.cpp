// Which file an installer takes: pick_wheel() for an image, files_for() from an index page.
//
// pick_wheel does not re-implement pip's tag matching: each wheel goes through the verdict's own tag
// checks (verdict::check_wheel_tags, with a profile of its file name and Requires-Python alone), and a
// finding of severity Error refuses it. Among the wheels left, pip's candidate order (its
// CandidateEvaluator._sort_key) decides: not yanked, the higher version, then the tag priority, the
// position of the wheel's best supported tag in packaging.tags.sys_tags() for the image's default
// CPython X.Y, then the higher build tag; the files' order breaks ties. sys_tags() yields
//   cpXY-cpXY, cpXY-abi3, cpXY-none, then cpXW-abi3 for W = Y-1 down to 2      (cpython_tags)
//   pyXY-none, pyX-none, pyXW-none for W = Y-1 down to 0                        (compatible_tags)
//   cpXY-none-any, pyXY-none-any, pyX-none-any, pyXW-none-any
// each (python, abi) pair with every platform the machine supports, newest manylinux_2_N first, then the
// older ones, musllinux, linux_<arch>; so a tag's priority is (its pair's place, then its platform's).
// A wheel's supported tags are found the same way as its installability: check_wheel_tags with the one
// tag.
//
// files_for keeps the files of an index page that are the package's pinned version (read from each file
// name); the hashes a package lists (requirements --hash) are weighed by pick_wheel among the wheels for the
// image, as pip's filter_unallowed_hashes weighs them among its applicable candidates.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/index.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/variant.hpp"
#include "wheelcheck/verdict.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::lock {

namespace {

constexpr int k_unsupported_group = 1000;
constexpr std::size_t k_names_shown = 3;  // wheels named per reason in `why`

struct PythonXY {
  int major = -1;
  int minor = -1;
};

// The image's default Python (its first pythons entry, else its python fact) as X.Y.
std::optional<PythonXY> default_python(const image::Image& im) {
  std::string version;
  if (!im.pythons.empty()) {
    version = im.pythons.front().version;
  } else if (im.python.known()) {
    version = *im.python.value;
  }
  const auto parts = split(trim(version), ".", true);
  if (parts.size() < 2) return std::nullopt;
  std::string minor = parts[1];
  if (!minor.empty() && (minor.back() == 't' || minor.back() == 'T')) minor.pop_back();
  const auto ma = small_number(parts[0]), mi = small_number(minor);
  if (!ma || !mi) return std::nullopt;
  return PythonXY{*ma, *mi};
}

// A tag's place in sys_tags(): the (python, abi) pair's group, then its platform's kind and floor.
struct TagPriority {
  int group = k_unsupported_group;
  int platform_kind = 9;
  std::vector<std::uint64_t> floor;
};

bool higher_priority(const TagPriority& a, const TagPriority& b) {
  if (a.group != b.group) return a.group < b.group;
  if (a.platform_kind != b.platform_kind) return a.platform_kind < b.platform_kind;
  return a.floor > b.floor;  // the newest manylinux_2_N first
}

int pair_group(const wheel::Tag& tag, const std::optional<PythonXY>& py, bool any_platform) {
  const wheel::Interpreter it = wheel::parse_interpreter(ascii_lower(tag.python));
  if (!py || !it.valid || it.major != py->major) return k_unsupported_group;
  const std::string abi = ascii_lower(tag.abi);
  if (it.impl == "cp" && it.minor >= 0) {
    const int behind = py->minor - it.minor;
    if (behind < 0) return k_unsupported_group;
    if (abi == "abi3") return behind == 0 ? 1 : 3 + behind;
    if (abi == "none") return behind == 0 ? (any_platform ? 300 : 2) : k_unsupported_group;
    return behind == 0 ? 0 : k_unsupported_group;
  }
  if (it.impl == "py" && abi == "none") {
    const int base = any_platform ? 301 : 200;
    if (it.minor < 0) return base + 1;
    if (it.minor == py->minor) return base;
    if (it.minor < py->minor) return base + 1 + (py->minor - it.minor);
  }
  return k_unsupported_group;
}

TagPriority tag_priority(const wheel::Tag& tag, const std::optional<PythonXY>& py) {
  const wheel::Platform p = wheel::parse_platform(ascii_lower(tag.platform));
  TagPriority t;
  t.group = pair_group(tag, py, p.kind == wheel::Platform::Kind::Any);
  switch (p.kind) {
    case wheel::Platform::Kind::Manylinux: t.platform_kind = 0; break;
    case wheel::Platform::Kind::Musllinux: t.platform_kind = 1; break;
    case wheel::Platform::Kind::Linux: t.platform_kind = 2; break;
    case wheel::Platform::Kind::Any: t.platform_kind = 3; break;
    default: t.platform_kind = 4; break;
  }
  t.floor = p.floor;
  return t;
}

WheelProfile profile_of(const wheel::Filename& name, const std::optional<std::string>& requires_python) {
  WheelProfile profile;
  profile.filename = name;
  profile.metadata.requires_python = requires_python;
  return profile;
}

std::vector<const verdict::Finding*> errors_of(const std::vector<verdict::Finding>& findings) {
  std::vector<const verdict::Finding*> out;
  for (const auto& f : findings) {
    if (f.severity == verdict::Severity::Error) out.push_back(&f);
  }
  return out;
}

// A finding as a short reason: "built for aarch64", "requires Python >=3.13", "needs glibc >= 2.39".
std::string reason_phrase(const verdict::Finding& f) {
  std::string s = verdict::summary(f);
  for (std::string_view prefix : {"the wheel is ", "the wheel "}) {
    if (s.compare(0, prefix.size(), prefix) == 0) {
      s.erase(0, prefix.size());
      break;
    }
  }
  return s;
}

// "3 wheels" / "1 wheel".
std::string count_of(std::size_t n, std::string_view what) {
  return std::to_string(n) + " " + std::string(what) + (n == 1 ? "" : "s");
}

// "cuda13.0 (x86_64, CPython 3.12, glibc 2.39)": the image facts the tags are judged against.
std::string image_words(const image::Image& im) {
  std::vector<std::string> facts;
  facts.push_back(im.arch.known() ? *im.arch.value : "arch unknown");
  if (!im.pythons.empty()) {
    facts.push_back("CPython " + im.pythons.front().version);
  } else {
    facts.push_back(im.python.known() ? "CPython " + *im.python.value : "Python unknown");
  }
  const std::string libc = im.libc_kind.known() ? *im.libc_kind.value : "C library";
  facts.push_back(im.libc_version.known() ? libc + " " + *im.libc_version.value : libc + " version unknown");
  const std::string name = im.name.empty() ? std::string("the image") : im.name;
  return name + " (" + join(facts, ", ") + ")";
}

struct Candidate {
  const File* file = nullptr;
  std::size_t order = 0;
  std::optional<wheel::Version> version;
  std::size_t variant_rank = 0;  // within a version: the variants' order, the null variant, then plain wheels
  TagPriority priority;
  std::pair<std::uint64_t, std::string> build{0, ""};
};

// A plain wheel's place after every variant of its release.
constexpr std::size_t k_plain_wheel = std::size_t{1} << 20;

// pip's build tag key: its leading number, then the rest.
std::pair<std::uint64_t, std::string> build_key(const std::optional<std::string>& build) {
  if (!build) return {0, ""};
  std::size_t n = 0;
  std::uint64_t value = 0;
  while (n < build->size() && n < 18 && (*build)[n] >= '0' && (*build)[n] <= '9') {
    value = value * 10 + static_cast<std::uint64_t>((*build)[n] - '0');
    ++n;
  }
  return {value, build->substr(n)};
}

bool picked_before(const Candidate& a, const Candidate& b) {
  if (a.file->yanked != b.file->yanked) return !a.file->yanked;
  if (a.version && b.version) {
    const int c = wheel::compare(*a.version, *b.version);
    if (c != 0) return c > 0;
  }
  if (a.variant_rank != b.variant_rank) return a.variant_rank < b.variant_rank;
  if (higher_priority(a.priority, b.priority)) return true;
  if (higher_priority(b.priority, a.priority)) return false;
  if (a.build != b.build) return a.build > b.build;
  return a.order < b.order;
}

// Why no wheel: the distinct reasons, each with the wheels it refuses.
struct Refusals {
  std::vector<std::pair<std::string, std::vector<std::string>>> reasons;  // reason -> file names
  void add(const std::string& reason, const std::string& filename) {
    for (auto& [r, names] : reasons) {
      if (r == reason) {
        names.push_back(filename);
        return;
      }
    }
    reasons.push_back({reason, {filename}});
  }
  std::string text() const {
    std::vector<std::string> parts;
    for (const auto& [reason, names] : reasons) {
      if (names.size() == 1) {
        parts.push_back(reason + " (" + printable(names.front()) + ")");
        continue;
      }
      std::vector<std::string> shown_names;
      for (std::size_t i = 0; i < names.size() && i < k_names_shown; ++i) shown_names.push_back(printable(names[i]));
      if (names.size() > k_names_shown) shown_names.push_back("...");
      parts.push_back(reason + " (" + count_of(names.size(), "wheel") + ": " + join(shown_names, ", ") + ")");
    }
    return join(parts, "; ");
  }
};

// The sdist a package lists, or the first file that is not a wheel (files_for keeps only wheels and sdists).
const File* sdist_of(const Package& package, const std::vector<File>& files) {
  if (package.sdist) return &*package.sdist;
  for (const auto& f : files) {
    if (!f.is_wheel()) return &f;
  }
  return nullptr;
}

std::string no_wheel_listed(const Package& package, const std::vector<File>& files) {
  if (const File* sdist = sdist_of(package, files)) {
    return "only an sdist (" + printable(sdist->filename) + "): `--only-binary :all:` refuses it";
  }
  if (!package.other.empty()) return "installed from " + package.other + ", not from a wheel";
  if (package.from_index() && !package.indexes.empty()) {
    return "no wheels listed (its files come from " + join(package.indexes, ", ") + ")";
  }
  return "no wheels listed";
}

// The version a distribution file's name says, and its project: a wheel's, or an sdist's NAME-VERSION.
std::optional<std::pair<std::string, std::string>> name_version_of(const std::string& filename,
                                                                   const std::string& project) {
  if (filename.size() > 4 && ascii_lower(std::string_view(filename).substr(filename.size() - 4)) == ".whl") {
    try {
      const auto parsed = wheel::parse_filename(filename);
      return std::make_pair(parsed.name, parsed.version);
    } catch (const Error&) {
      return std::nullopt;
    }
  }
  return sdist_name_version(filename, project);
}

// The variants of a release in the image's order: label -> its place and state.
struct VariantOrder {
  std::map<std::string, std::size_t> at;  // label -> its place in `ranked`
  std::vector<variant::Ranked> ranked;
};

VariantOrder variant_order(const variant::File* release, const image::Image& image) {
  VariantOrder o;
  if (release == nullptr) return o;
  o.ranked = variant::order(*release, variant::supported(image, *release));
  for (std::size_t i = 0; i < o.ranked.size(); ++i) o.at[o.ranked[i].label] = i;
  return o;
}

void add_unique(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// Why a variant file is not taken on the image ("" when it may be).
std::string variant_refusal(const std::string& label, const variant::File* release, const VariantOrder& order,
                            Pick& pick) {
  if (release == nullptr) return "variants of a release with no -variants.json on the index";
  const auto it = order.at.find(label);
  if (it == order.at.end()) return "variant " + label + ", which the release's -variants.json does not list";
  const variant::Ranked& r = order.ranked[it->second];
  if (r.state == variant::Ranked::State::Incompatible) {
    return "variant " + label + ": the image does not support " + join(r.why_not, "; ");
  }
  if (r.state == variant::Ranked::State::Undecided) {
    for (const auto& d : r.depends_on) add_unique(pick.depends_on, d);
    add_unique(pick.undecided, label);
    return "variant " + label + ": whether the image supports it is unknown (" + join(r.depends_on, "; ") + ")";
  }
  return "";
}

}  // namespace

Pick pick_wheel(const std::vector<File>& files, const Package& package, const image::Image& image,
                const variant::File* release) {
  const auto py = default_python(image);
  const VariantOrder order = variant_order(release, image);
  std::vector<Candidate> candidates;
  Refusals refusals;
  Pick pick;
  std::size_t wheels = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const File& f = files[i];
    if (!f.is_wheel()) continue;
    ++wheels;
    wheel::Filename name;
    try {
      name = wheel::parse_filename(f.filename);
    } catch (const Error&) {
      refusals.add("not a wheel file name", f.filename);
      continue;
    }
    std::size_t variant_rank = k_plain_wheel;
    if (name.variant) {
      if (const std::string why = variant_refusal(*name.variant, release, order, pick); !why.empty()) {
        refusals.add(why, f.filename);
        continue;
      }
      variant_rank = order.at.at(*name.variant);
    }
    const auto requires_python = f.requires_python ? f.requires_python : package.requires_python;
    const auto findings = verdict::check_wheel_tags(profile_of(name, requires_python), image);
    const auto errors = errors_of(findings);
    if (!errors.empty()) {
      std::vector<std::string> phrases;
      for (const auto* e : errors) {
        const std::string p = reason_phrase(*e);
        if (std::find(phrases.begin(), phrases.end(), p) == phrases.end()) phrases.push_back(p);
      }
      refusals.add(join(phrases, " and "), f.filename);
      continue;
    }
    Candidate c;
    c.file = &f;
    c.order = i;
    c.variant_rank = variant_rank;
    c.version = wheel::parse_version(name.version);
    c.build = build_key(name.build);
    for (const auto& tag : name.tags) {
      wheel::Filename one = name;
      one.tags = {tag};
      if (!errors_of(verdict::check_wheel_tags(profile_of(one, std::nullopt), image)).empty()) continue;
      const TagPriority t = tag_priority(tag, py);
      if (higher_priority(t, c.priority)) c.priority = t;
    }
    candidates.push_back(std::move(c));
  }
  // A lock with hashes (requirements --hash) keeps, where one of the wheels for the image has a listed hash,
  // those and the wheels of no known hash; where none has one, all of them: the picked file then fails the
  // hash check when it is read (pip's filter_unallowed_hashes, then its download check).
  if (!package.hashes.empty()) {
    auto listed = [&](const Candidate& c) {
      return std::find(package.hashes.begin(), package.hashes.end(), ascii_lower(c.file->sha256())) !=
             package.hashes.end();
    };
    if (std::any_of(candidates.begin(), candidates.end(), listed)) {
      std::erase_if(candidates, [&](const Candidate& c) { return !c.file->sha256().empty() && !listed(c); });
    }
  }
  if (!candidates.empty()) {
    const Candidate& best = *std::min_element(candidates.begin(), candidates.end(), picked_before);
    pick.file = best.file;
    // An installer without variant support: plain wheels alone.
    const Candidate* plain = nullptr;
    for (const auto& c : candidates) {
      if (c.variant_rank == k_plain_wheel && (plain == nullptr || picked_before(c, *plain))) plain = &c;
    }
    pick.without_variants = plain == nullptr ? nullptr : plain->file;
    if (best.variant_rank != k_plain_wheel) {
      pick.variant = order.ranked[best.variant_rank].label;
      std::vector<std::string> before;
      for (const auto& r : order.ranked) {
        if (r.state == variant::Ranked::State::Compatible && r.label != pick.variant) before.push_back(r.label);
      }
      pick.variant_note = "variant " + pick.variant +
                          ", first of the release's variants the image supports in the drafts' order" +
                          (before.empty() ? std::string() : " (then " + join(before, ", ") + ")");
    }
    if (!pick.undecided.empty()) {
      pick.variant_note += std::string(pick.variant_note.empty() ? "" : "; ") + "it depends on " +
                           join(pick.depends_on, "; ") + ": " + join(pick.undecided, ", ") + " may be taken instead";
    }
    return pick;
  }
  pick.without_variants = nullptr;
  if (wheels == 0) {
    pick.why = no_wheel_listed(package, files);
    return pick;
  }
  pick.why = count_of(wheels, "wheel") + ", none for " + image_words(image) + ": " + refusals.text();
  if (const File* sdist = sdist_of(package, files)) {
    pick.why += "; and the sdist (" + printable(sdist->filename) + "): `--only-binary :all:` refuses it";
  }
  return pick;
}

std::vector<File> files_for(const index::ProjectPage& page, const Package& package) {
  const std::string project = package.name.empty() ? page.name : package.name;
  const std::string normalized = wheel::normalize_project_name(project);
  const std::string pin = !package.specifier.empty() ? package.specifier
                          : package.version.empty()  ? ""
                                                     : "==" + package.version;
  std::vector<File> out;
  for (const auto& f : page.files) {
    const auto nv = name_version_of(f.filename, project);
    if (!nv || wheel::normalize_project_name(nv->first) != normalized) continue;
    if (!pin.empty()) {
      const auto in = wheel::version_in(pin, nv->second);
      // A pin that is not PEP 440 (a lock may write any version): the same text.
      const bool keep = in ? *in : ascii_lower(trim(nv->second)) == ascii_lower(trim(package.version));
      if (!keep) continue;
    }
    File file;
    file.filename = f.filename;
    file.url = f.url;
    file.hashes = f.hashes;
    file.size = f.size;
    file.requires_python = f.requires_python;
    file.yanked = f.yanked;
    out.push_back(std::move(file));
  }
  return out;
}

const index::File* variants_file(const index::ProjectPage& page, const Package& package) {
  const std::string normalized = wheel::normalize_project_name(package.name.empty() ? page.name : package.name);
  for (const auto& f : page.files) {
    const auto nv = variant::release_file_name(f.filename);
    if (!nv || wheel::normalize_project_name(nv->first) != normalized) continue;
    if (!package.version.empty()) {
      const auto same = wheel::compare_versions(nv->second, package.version);
      if (!(same ? *same == 0 : nv->second == package.version)) continue;
    }
    return &f;
  }
  return nullptr;
}

}  // namespace wheelcheck::lock
