// GPU architecture names as the tools write them, and the distinct code a member's fatbins carry.
//
// One architecture reaches wheelcheck spelled several ways: nvcc and cuobjdump write `sm_90a` (real code)
// and `compute_80` (virtual code), nvidia-smi's compute_cap and TORCH_CUDA_ARCH_LIST write `9.0`,
// CMAKE_CUDA_ARCHITECTURES writes `90` or `90a`. parse_arch reads all of them into one Arch (major 1..99,
// minor 0..9, suffix none, `a` or `f`) and refuses anything else, so that a typo in an image description
// never becomes a GPU.
#include <algorithm>

#include <fmt/format.h>

#include "wheelcheck/cuda.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cuda {

namespace {

constexpr int k_max_major = 99;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The suffix letter at the end of `text`, removed from it: 0 when there is none, -1 when it is a letter
// nvcc does not know.
int take_suffix(std::string_view& text) {
  if (text.empty() || is_digit(text.back())) return 0;
  const char c = text.back();
  if (c != 'a' && c != 'f') return -1;
  text.remove_suffix(1);
  return c;
}

// Decimal digits without a sign or a leading zero ("0" alone is a number, "075" is not).
std::optional<int> plain_number(std::string_view digits) {
  if (digits.empty() || digits.size() > 3) return std::nullopt;
  if (!std::all_of(digits.begin(), digits.end(), is_digit)) return std::nullopt;
  if (digits.size() > 1 && digits.front() == '0') return std::nullopt;
  return small_number(digits);
}

std::optional<Arch> make_arch(int major, int minor, int suffix) {
  if (major < 1 || major > k_max_major || minor < 0 || minor > 9 || suffix < 0) return std::nullopt;
  return Arch{major, minor, static_cast<char>(suffix)};
}

// "90", "120", "90a": the compute capability times ten, its last digit the minor.
std::optional<Arch> from_number(std::string_view text) {
  const int suffix = take_suffix(text);
  if (text.size() < 2) return std::nullopt;  // "9" names no minor
  const auto n = plain_number(text);
  if (!n) return std::nullopt;
  return make_arch(*n / 10, *n % 10, suffix);
}

// "9.0", "12.1", "9.0a".
std::optional<Arch> from_dotted(std::string_view text) {
  const int suffix = take_suffix(text);
  const auto dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto major = plain_number(text.substr(0, dot));
  const auto minor_text = text.substr(dot + 1);
  if (!major || minor_text.size() != 1 || !is_digit(minor_text[0])) return std::nullopt;
  return make_arch(*major, minor_text[0] - '0', suffix);
}

}  // namespace

std::optional<Arch> parse_arch(std::string_view text) {
  text = trim(text);
  for (const std::string_view prefix : {"sm_", "compute_"}) {
    if (text.substr(0, prefix.size()) == prefix) return from_number(text.substr(prefix.size()));
  }
  if (text.find('.') != std::string_view::npos) return from_dotted(text);
  return from_number(text);
}

namespace {

std::string suffix_text(const Arch& a) {
  return a.suffix ? std::string(1, a.suffix) : std::string();
}

}  // namespace

std::string sm_name(const Arch& a) {
  return fmt::format("sm_{}{}", a.number(), suffix_text(a));
}
std::string compute_name(const Arch& a) {
  return fmt::format("compute_{}{}", a.number(), suffix_text(a));
}

std::string PtxIsa::text() const {
  return fmt::format("{}.{}", major, minor);
}

std::string CubinFormat::text() const {
  return fmt::format("{}.{}", major, minor);
}

std::string kind_name(CodeKind kind) {
  return kind == CodeKind::Sass ? "sass" : "ptx";
}

namespace {

std::vector<Arch> distinct_archs(const std::vector<Variant>& variants, CodeKind kind) {
  std::vector<Arch> out;
  for (const auto& v : variants) {
    if (v.kind == kind) out.push_back(v.arch);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

std::vector<Arch> Fatbins::sass() const {
  return distinct_archs(variants, CodeKind::Sass);
}
std::vector<Arch> Fatbins::ptx() const {
  return distinct_archs(variants, CodeKind::Ptx);
}

std::optional<PtxIsa> Fatbins::newest_ptx_isa() const {
  std::optional<PtxIsa> newest;
  for (const auto& v : variants) {
    if (v.kind == CodeKind::Ptx && v.ptx_isa && (!newest || *newest < *v.ptx_isa)) newest = v.ptx_isa;
  }
  return newest;
}

}  // namespace wheelcheck::cuda
