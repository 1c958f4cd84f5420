// What the parts of a wheel tag say, as packaging.tags and pip spell them: the Python tag's interpreter and
// version ("cp312", "py3", "pp310"), and the platform tag's kind, C library floor and arch. The platform
// tags pip installs on Linux are manylinux_A_B_<arch> (glibc >= A.B; the legacy aliases manylinux1,
// manylinux2010 and manylinux2014 stand for 2_5, 2_12 and 2_17), musllinux_A_B_<arch> (musl >= A.B) and
// linux_<arch> (what pip builds locally); "any" fits every platform; the tags of other operating systems
// (macosx_, win32, win_, android_, ios_, cygwin, freebsd, emscripten) never install there. An arch is
// written as uname -m writes it, so normalize_arch maps its spellings to elf::machine_name's.
// Whether a tag fits an image is the verdict's question (inspector/verdict/wheel_checks.cpp).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::wheel {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// "2_28_x86_64" -> floor 2.28, arch x86_64.
bool parse_floor_arch(std::string_view rest, Platform& p) {
  const std::size_t u1 = rest.find('_');
  if (u1 == std::string_view::npos) return false;
  const std::size_t u2 = rest.find('_', u1 + 1);
  if (u2 == std::string_view::npos) return false;
  auto major = small_number(rest.substr(0, u1));
  auto minor = small_number(rest.substr(u1 + 1, u2 - u1 - 1));
  if (!major || !minor || u2 + 1 >= rest.size()) return false;
  p.floor = {static_cast<std::uint64_t>(*major), static_cast<std::uint64_t>(*minor)};
  p.arch = std::string(rest.substr(u2 + 1));
  return true;
}

}  // namespace

std::string tag_text(const Tag& tag) {
  return tag.python + "-" + tag.abi + "-" + tag.platform;
}

Interpreter parse_interpreter(std::string_view python_tag) {
  Interpreter it;
  std::size_t i = 0;
  while (i < python_tag.size() && python_tag[i] >= 'a' && python_tag[i] <= 'z') ++i;
  it.impl = std::string(python_tag.substr(0, i));
  const std::string_view digits = python_tag.substr(i);
  if (it.impl.empty() || digits.empty() || !std::all_of(digits.begin(), digits.end(), is_digit)) return it;
  it.major = digits[0] - '0';
  if (digits.size() > 1) {
    auto minor = small_number(digits.substr(1));
    if (!minor) return it;
    it.minor = *minor;
  }
  it.valid = true;
  return it;
}

Platform parse_platform(std::string_view tag) {
  Platform p;
  auto starts = [&](std::string_view prefix) { return tag.substr(0, prefix.size()) == prefix; };
  if (tag == "any") {
    p.kind = Platform::Kind::Any;
    return p;
  }
  static const struct {
    const char* prefix;
    std::uint64_t major, minor;
  } legacy[] = {{"manylinux1_", 2, 5}, {"manylinux2010_", 2, 12}, {"manylinux2014_", 2, 17}};
  for (const auto& l : legacy) {
    const std::string_view prefix(l.prefix);
    if (starts(prefix) && tag.size() > prefix.size()) {
      p.kind = Platform::Kind::Manylinux;
      p.floor = {l.major, l.minor};
      p.arch = std::string(tag.substr(prefix.size()));
      p.policy = std::string(prefix.substr(0, prefix.size() - 1)) + " = manylinux_" + std::to_string(l.major) + "_" +
                 std::to_string(l.minor);
      return p;
    }
  }
  for (const auto& [prefix, kind] : {std::pair{std::string_view("manylinux_"), Platform::Kind::Manylinux},
                                     std::pair{std::string_view("musllinux_"), Platform::Kind::Musllinux}}) {
    if (starts(prefix)) {
      if (!parse_floor_arch(tag.substr(prefix.size()), p)) return p;
      p.kind = kind;
      p.policy = std::string(prefix) + std::to_string(p.floor[0]) + "_" + std::to_string(p.floor[1]);
      return p;
    }
  }
  if (starts("linux_") && tag.size() > 6) {
    p.kind = Platform::Kind::Linux;
    p.arch = std::string(tag.substr(6));
    return p;
  }
  static const std::pair<const char*, const char*> foreign[] = {
      {"macosx_", "macOS"}, {"win32", "Windows"}, {"win_", "Windows"},    {"android_", "Android"},
      {"ios_", "iOS"},      {"cygwin", "Cygwin"}, {"freebsd", "FreeBSD"}, {"emscripten", "Emscripten"}};
  for (const auto& [prefix, os] : foreign) {
    if (starts(prefix)) {
      p.kind = Platform::Kind::Foreign;
      p.os = os;
      return p;
    }
  }
  return p;
}

std::string normalize_arch(std::string_view arch) {
  const std::string a = ascii_lower(arch);
  if (a == "armv7l" || a == "armv6l" || a == "armv8l" || a == "armhf") return "armhf";
  if (a == "armv5l" || a == "armv5tel" || a == "armv4tl" || a == "armel") return "armel";
  if (a == "i386" || a == "i486" || a == "i586" || a == "i686" || a == "x86") return "i686";
  if (a == "amd64") return "x86_64";
  if (a == "arm64") return "aarch64";
  return a;
}

bool arch_matches(std::string_view tag_arch, std::string_view image_arch) {
  const std::string t = normalize_arch(tag_arch), i = normalize_arch(image_arch);
  if (t == i) return true;
  return t == "mips64" && i == "mips64el";  // uname -m says mips64 for either byte order
}

std::string tag_arch_of(std::string_view image_arch) {
  const std::string a = normalize_arch(image_arch);
  if (a == "armhf") return "armv7l";
  if (a == "armel") return "armv5l";
  return a;
}

}  // namespace wheelcheck::wheel
