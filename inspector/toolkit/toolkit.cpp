// Which accelerator toolkit a wheel is built for (include/wheelcheck/toolkit.hpp): its local version label, its
// project name and the runtimes its members need, each read into an image::ToolkitKind; and a build's toolkit
// against an image's.
#include "wheelcheck/toolkit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

#include "wheelcheck/util.hpp"

namespace wheelcheck::toolkit {

using image::ToolkitKind;

namespace {

// The chip a label names, as people write it: "910c" -> "910C".
std::string upper_word(std::string word) {
  for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return word;
}

// What a label word says: an SDK and its version (+cann9.0.0), or a vendor and a Triton line (+ascend3.5).
enum class LabelForm { Sdk, CudaShort, Line, MetaxLine };

struct LabelWord {
  const char* word;
  ToolkitKind kind;
  LabelForm form;
};

// Longer words first where one is the prefix of another (cuda, cu).
constexpr LabelWord k_label_words[] = {
    {"cuda", ToolkitKind::Cuda, LabelForm::Sdk},       {"cu", ToolkitKind::Cuda, LabelForm::CudaShort},
    {"cann", ToolkitKind::Cann, LabelForm::Sdk},       {"ascend", ToolkitKind::Cann, LabelForm::Line},
    {"maca", ToolkitKind::Maca, LabelForm::Sdk},       {"metax", ToolkitKind::Maca, LabelForm::MetaxLine},
    {"dtk", ToolkitKind::Dtk, LabelForm::Sdk},         {"hcu", ToolkitKind::Dtk, LabelForm::Line},
    {"das", ToolkitKind::Dtk, LabelForm::Line},        {"tops", ToolkitKind::Tops, LabelForm::Sdk},
    {"enflame", ToolkitKind::Tops, LabelForm::Line},   {"gcu", ToolkitKind::Tops, LabelForm::Line},
    {"musa", ToolkitKind::Musa, LabelForm::Sdk},       {"mthreads", ToolkitKind::Musa, LabelForm::Line},
    {"ppu", ToolkitKind::Ppu, LabelForm::Sdk},         {"neuware", ToolkitKind::Neuware, LabelForm::Sdk},
    {"mlu", ToolkitKind::Neuware, LabelForm::Line},    {"corex", ToolkitKind::Corex, LabelForm::Sdk},
    {"iluvatar", ToolkitKind::Corex, LabelForm::Line}, {"xre", ToolkitKind::Xre, LabelForm::Sdk},
    {"xpu", ToolkitKind::Xre, LabelForm::Line},        {"tangrt", ToolkitKind::Tangrt, LabelForm::Sdk},
    {"sunrise", ToolkitKind::Tangrt, LabelForm::Line}, {"tsm", ToolkitKind::Tsm, LabelForm::Sdk},
    {"tsingmicro", ToolkitKind::Tsm, LabelForm::Line}, {"triton", ToolkitKind::Cuda, LabelForm::Line}};

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// An SDK version as the label spells it, dotted as the SDK's own: cu130 -> 13.0, cu13 -> 13 (CUDA 13, any
// minor), cu92 -> 9.2, dtk2604 -> 26.04, tsm260610 -> 26.06.10; others as written (9.0.0, 4.5.0.20260804).
// A spelling that says no version for sure (cu1300) reads as none: a guess would be a false claim.
std::string sdk_version(ToolkitKind kind, LabelForm form, const std::vector<std::string>& parts) {
  if (parts.empty()) return "";
  if (form == LabelForm::CudaShort) {
    const std::string& d = parts.front();
    if (parts.size() != 1) return "";
    // PyTorch's and NVIDIA's spellings: cu80, cu92 (CUDA 8.0, 9.2), cu100 ... cu130 (major, then one digit of
    // minor), and the major alone from CUDA 10 on (cu12, cu13, as nvidia-*-cu13 and FlagOS's +cu13 write it).
    if (d.size() == 2) return d[0] == '1' ? d : d.substr(0, 1) + "." + d.substr(1);
    if (d.size() == 3) return d.substr(0, 2) + "." + d.substr(2);
    return "";
  }
  if (parts.size() == 1 && kind == ToolkitKind::Dtk && parts[0].size() == 4)
    return parts[0].substr(0, 2) + "." + parts[0].substr(2);
  if (parts.size() == 1 && kind == ToolkitKind::Tsm && parts[0].size() == 6)
    return parts[0].substr(0, 2) + "." + parts[0].substr(2, 2) + "." + parts[0].substr(4);
  // CUDA's version is major.minor: what follows (+cuda13.3.20260101.gabc1234, a branch build) is the build's.
  if (kind == ToolkitKind::Cuda && parts.size() > 2) return parts[0] + "." + parts[1];
  return join(parts, ".");
}

// Whether a label's SDK version names the image's release: its parts a prefix of the image's, up to the `n`
// parts that name a release. A shorter label matches every longer version it prefixes (+cann9 is every CANN 9
// release, +cu13 every CUDA 13), and an image that says less than the label is not contradicted by it.
bool release_matches(const std::string& label, const std::string& have, std::size_t n) {
  const auto l = split(label, ".", false), h = split(have, ".", false);
  const std::size_t m = std::min({n, l.size(), h.size()});
  for (std::size_t i = 0; i < m; ++i) {
    if (l[i] != h[i]) return false;
  }
  return true;
}

}  // namespace

// The label's parts are read in order; an SDK word with a version wins over a vendor word (+das.opt1.dtk2604 is
// DTK 26.04).
std::optional<WheelToolkit> of_label(const std::string& version) {
  const auto plus = version.find('+');
  if (plus == std::string::npos) return std::nullopt;
  const std::string written = version.substr(plus + 1);
  const auto parts = split(ascii_lower(written), ".-_", false);
  std::optional<WheelToolkit> first;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    for (const auto& w : k_label_words) {
      const std::string_view word(w.word);
      if (parts[i].compare(0, word.size(), word) != 0) continue;
      const std::string rest = parts[i].substr(word.size());
      if (!rest.empty() && !all_digits(rest)) continue;
      // The version: the digits after the word, then the numeric parts that follow.
      std::vector<std::string> numbers;
      if (!rest.empty()) numbers.push_back(rest);
      std::size_t k = i + 1;
      // A date stamp (8 digits: build-infra's +ascend3.5.20260101 rebuilds, FlagCX's branch builds) ends the
      // version: it names the build, not the SDK release (corex.4.5.0.20260804 is CoreX 4.5.0's).
      for (; k < parts.size() && all_digits(parts[k]) && (numbers.empty() || parts[k].size() < 6); ++k)
        numbers.push_back(parts[k]);
      WheelToolkit t{w.kind, "", "local version label +" + written, "", true, ""};
      const bool sdk = w.form == LabelForm::Sdk || w.form == LabelForm::CudaShort ||
                       (w.form == LabelForm::MetaxLine && numbers.size() >= 3);
      if (sdk) t.version = sdk_version(t.kind, w.form, numbers);
      if (!sdk && numbers.size() >= 2) t.line = numbers[0] + "." + numbers[1];  // +ascend3.5: Triton 3.5
      if (t.kind == ToolkitKind::Cann && k < parts.size() && parts[k].size() == 4 && parts[k][0] == '9' &&
          all_digits(parts[k].substr(0, 3)) && std::isalpha(static_cast<unsigned char>(parts[k][3]))) {
        t.chip = upper_word(parts[k]);  // +cann9.0.0.910c: the 910C build
      }
      if (!t.version.empty()) return t;
      if (!first) first = t;
      break;
    }
  }
  return first;
}

std::optional<WheelToolkit> of_soname(const std::string& soname) {
  static const std::pair<const char*, ToolkitKind> k_runtimes[] = {
      {"libcudart.so", ToolkitKind::Cuda},   {"libascendcl.so", ToolkitKind::Cann},
      {"libhccl.so", ToolkitKind::Cann},     {"libmcruntime.so", ToolkitKind::Maca},
      {"libgalaxyhip.so", ToolkitKind::Dtk}, {"libamdhip64.so", ToolkitKind::Dtk},
      {"librccl.so", ToolkitKind::Dtk},      {"libtopsrt.so", ToolkitKind::Tops},
      {"libeccl.so", ToolkitKind::Tops},     {"libmusart.so", ToolkitKind::Musa},
      {"libcnrt.so", ToolkitKind::Neuware},  {"libcncl.so", ToolkitKind::Neuware},
      {"libtangrt.so", ToolkitKind::Tangrt}, {"libpccl.so", ToolkitKind::Tangrt},
      {"libtccl.so", ToolkitKind::Tsm},      {"libhpgr.so", ToolkitKind::Tsm},
      {"libxccl.so", ToolkitKind::Xre}};
  for (const auto& [prefix, kind] : k_runtimes) {
    const std::string p(prefix);
    if (soname != p && soname.rfind(p + ".", 0) != 0) continue;
    WheelToolkit t{kind, "", "", "", false, ""};
    if (t.kind == ToolkitKind::Cuda && soname.size() > p.size() + 1) t.version = soname.substr(p.size() + 1);
    return t;
  }
  return std::nullopt;
}

// As the indexes name such builds (flag-gems-cpp-cuda, cupy-cuda12x, nvidia-cublas-cu12, torch-npu, torch-mlu,
// flag-gems-cpp-ix): a name part that is a toolkit's word.
std::optional<WheelToolkit> of_name(const std::string& name) {
  static const std::pair<const char*, ToolkitKind> k_words[] = {
      {"cuda", ToolkitKind::Cuda},    {"cu", ToolkitKind::Cuda},         {"npu", ToolkitKind::Cann},
      {"ascend", ToolkitKind::Cann},  {"cann", ToolkitKind::Cann},       {"maca", ToolkitKind::Maca},
      {"metax", ToolkitKind::Maca},   {"musa", ToolkitKind::Musa},       {"dtk", ToolkitKind::Dtk},
      {"dcu", ToolkitKind::Dtk},      {"hygon", ToolkitKind::Dtk},       {"tops", ToolkitKind::Tops},
      {"gcu", ToolkitKind::Tops},     {"enflame", ToolkitKind::Tops},    {"ppu", ToolkitKind::Ppu},
      {"mlu", ToolkitKind::Neuware},  {"neuware", ToolkitKind::Neuware}, {"cambricon", ToolkitKind::Neuware},
      {"ix", ToolkitKind::Corex},     {"corex", ToolkitKind::Corex},     {"iluvatar", ToolkitKind::Corex},
      {"xpu", ToolkitKind::Xre},      {"xre", ToolkitKind::Xre},         {"kunlunxin", ToolkitKind::Xre},
      {"ptpu", ToolkitKind::Tangrt},  {"tangrt", ToolkitKind::Tangrt},   {"sunrise", ToolkitKind::Tangrt},
      {"txda", ToolkitKind::Tsm},     {"tsm", ToolkitKind::Tsm},         {"tsingmicro", ToolkitKind::Tsm},
      {"mthreads", ToolkitKind::Musa}};
  for (const auto& part : split(ascii_lower(name), "-_.", false)) {
    for (const auto& [word, kind] : k_words) {
      const std::string_view w(word);
      if (part.compare(0, w.size(), w) != 0) continue;
      // "cuda", "cuda12x", "cu12", "cu130": the word, then only digits (and an x).
      const std::string_view rest = std::string_view(part).substr(w.size());
      if (!std::all_of(rest.begin(), rest.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == 'x'; }))
        continue;
      if (w == "cu" && rest.empty()) continue;
      return WheelToolkit{kind, "", "project name " + name, "", false, ""};
    }
  }
  return std::nullopt;
}

bool cpu_label(const std::string& version) {
  const auto plus = version.find('+');
  return plus != std::string::npos && ascii_lower(version.substr(plus + 1)).rfind("cpu", 0) == 0;
}

std::string display_name(ToolkitKind kind) {
  switch (kind) {
    case ToolkitKind::Neuware: return "Neuware";
    case ToolkitKind::Corex: return "CoreX";
    case ToolkitKind::Tangrt: return "TangRT";
    default: return upper_word(image::toolkit_kind_name(kind));
  }
}

// The names said letter by letter take the letter's sound ("an XRE", "a DTK"), the others are words ("a MACA",
// "a MUSA", "a CUDA", "a CANN", "an Ascend").
std::string with_article(const std::string& name) {
  if (name.empty()) return name;
  static constexpr std::string_view k_spelled[] = {"DTK", "PPU", "XRE", "TSM", "HCU",
                                                   "XPU", "GCU", "NPU", "MLU", "DCU"};
  const std::string_view first = std::string_view(name).substr(0, name.find_first_of(" /.0123456789"));
  const bool spelled = std::find(std::begin(k_spelled), std::end(k_spelled), first) != std::end(k_spelled);
  const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  const bool vowel = std::string_view(spelled ? "AEFHILMNORSX" : "AEIOU").find(c) != std::string_view::npos;
  return (vowel ? "an " : "a ") + name;
}

std::vector<WheelToolkit> wheel_toolkits(const WheelProfile& w) {
  std::vector<WheelToolkit> out;
  auto add = [&](WheelToolkit t) {
    if (std::none_of(out.begin(), out.end(), [&](const WheelToolkit& o) { return o.kind == t.kind; }))
      out.push_back(std::move(t));
  };
  if (auto label = of_label(w.filename.version)) add(std::move(*label));
  if (auto named = of_name(w.filename.name)) add(std::move(*named));
  // A label or a name decides the vendor: a runtime of another vendor's kind does not make it that
  // vendor's build (Iluvatar's FlagCX links libcudart.so.12 and is a CoreX build).
  std::vector<ToolkitKind> vendors;
  for (const auto& t : out) vendors.push_back(t.kind);
  // A +cpu build needs no toolkit, whatever its members link.
  if (cpu_label(w.filename.version)) return {};
  // The runtimes its members need, unless the wheel ships that runtime itself.
  std::vector<std::string> shipped;
  for (const auto& m : w.members) {
    if (m.elf && m.elf->soname) shipped.push_back(*m.elf->soname);
  }
  for (const auto& m : w.members) {
    if (!m.elf) continue;
    for (const auto& need : m.elf->needed) {
      if (std::find(shipped.begin(), shipped.end(), need) != shipped.end()) continue;
      if (auto t = of_soname(need)) {
        if (!vendors.empty() && std::find(vendors.begin(), vendors.end(), t->kind) == vendors.end()) continue;
        t->because = m.path + " needs " + need;
        add(std::move(*t));
      }
    }
  }
  return out;
}

std::string mismatch(const WheelToolkit& t, const image::Image& im) {
  if (!im.toolkit || t.kind != im.toolkit->kind) return "";
  const std::string name = display_name(t.kind);
  if (!t.version.empty() && im.toolkit->version.known()) {
    const std::string& have = *im.toolkit->version.value;
    const std::size_t n = t.kind == ToolkitKind::Cuda ? 1 : 3;
    if (!release_matches(t.version, have, n)) {
      return fmt::format("{} {} build, {} {} image", with_article(name), t.version, with_article(name), have);
    }
  }
  if (t.kind == ToolkitKind::Cann && im.chips.known()) {
    const std::string chips = upper_word(*im.chips.value);
    if (!t.chip.empty() && chips.find(t.chip) == std::string::npos) {
      return fmt::format("{} build for {}, an image with {}", with_article(name), t.chip, *im.chips.value);
    }
    // An SDK label without a chip suffix (+cann9.0.0) is FlagOS's 910B build; a vendor label (FlagTree's
    // +ascend3.5) names no chip and builds for both.
    if (t.chip.empty() && t.from_label && !t.version.empty() && chips.find("910C") != std::string::npos) {
      return fmt::format(
          "a {} build without a chip suffix (FlagOS's 910B build; its 910C build is labelled .910c), "
          "an image with {}",
          name, *im.chips.value);
    }
  }
  return "";
}

}  // namespace wheelcheck::toolkit
