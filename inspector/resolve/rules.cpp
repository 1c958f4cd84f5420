// The loader's words and tokens: how each rule is named and an attempt said, which objects are programs,
// glibc's dynamic string tokens and $PLATFORM's values, and the Python a wheel's tags select. The search
// itself is inspector/resolve/resolve.cpp.
#include <algorithm>

#include "wheelcheck/resolve.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::resolve {

namespace {

std::string file_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

// On x86-64 glibc replaces the kernel's AT_PLATFORM ("x86_64") by "haswell" on CPUs with AVX2, BMI1/2,
// LZCNT, MOVBE and POPCNT, and by "xeon_phi" on AVX-512ER ones (sysdeps/x86/cpu-features.c), so the
// folder depends on the runner.
std::vector<std::string> platform_values(const std::string& arch) {
  if (arch == "x86_64") return {"haswell", "xeon_phi", "x86_64"};
  return {arch};
}

std::string how_name(How how) {
  switch (how) {
    case How::None: return "";
    case How::Path: return "path";
    case How::AlreadyLoaded: return "already loaded";
    case How::Rpath: return "rpath";
    case How::LdLibraryPath: return "LD_LIBRARY_PATH";
    case How::Runpath: return "runpath";
    case How::LdSoCache: return "ld.so.cache";
    case How::DefaultPath: return "default path";
    case How::Declared: return "declared";
  }
  return "";
}

std::string result_name(Attempt::Result result) {
  switch (result) {
    case Attempt::Result::NoFile: return "no such file";
    case Attempt::Result::OtherClass: return "other ELF class";
    case Attempt::Result::NotInFiles: return "not in the image's files";
    case Attempt::Result::Skipped: return "skipped";
    case Attempt::Result::Found: return "found";
  }
  return "";
}

std::string attempt_text(const Attempt& a) {
  std::string rule;
  switch (a.rule) {
    case How::Rpath: rule = "DT_RPATH " + a.entry + (a.owner.empty() ? "" : " of " + file_of(a.owner)); break;
    case How::Runpath: rule = "DT_RUNPATH " + a.entry; break;
    case How::LdLibraryPath: rule = "LD_LIBRARY_PATH"; break;
    case How::DefaultPath: rule = "default path"; break;
    case How::LdSoCache:
      rule = "ld.so.cache" +
             (a.detail.empty() || a.result == Attempt::Result::Skipped || a.result == Attempt::Result::NoFile
                  ? std::string()
                  : ", " + a.detail);
      break;
    case How::Path: rule = "a path in DT_NEEDED"; break;
    default: rule = how_name(a.rule);
  }
  if (!a.platform.empty()) rule += " ($PLATFORM " + a.platform + ")";
  switch (a.result) {
    case Attempt::Result::NoFile:
      if (a.rule == How::LdSoCache) return "ld.so.cache: " + a.detail;
      return a.path + " (" + rule + "): no such file";
    case Attempt::Result::OtherClass:
      if (a.rule == How::LdSoCache) return a.path + " (" + rule + "): another ELF class or machine";
      return a.path + " (" + rule + "): skipped, " + a.detail;
    case Attempt::Result::NotInFiles: return a.path + " (" + rule + "): not in the image's files";
    case Attempt::Result::Skipped:
      if (a.rule == How::Rpath) return "DT_RPATH ignored: " + a.detail;
      if (a.rule == How::DefaultPath) return "default folders skipped: " + a.detail;
      return (a.path.empty() ? rule : a.path + " (" + rule + ")") + ": skipped, " + a.detail;
    case Attempt::Result::Found: return a.path + " (" + rule + ")";
  }
  return "";
}

std::vector<std::string> tried_text(const Need& need) {
  std::vector<std::string> out;
  out.reserve(need.tried.size());
  for (const auto& a : need.tried) out.push_back(attempt_text(a));
  return out;
}

bool is_program(const elf::Binary& b) {
  constexpr std::uint64_t k_df_1_pie = 0x08000000;
  return b.type == elf::FileType::Executable ||
         (b.type == elf::FileType::Shared && (!b.interpreter.empty() || (b.flags_1 & k_df_1_pie) != 0));
}

std::string expand_tokens(const std::string& entry, const std::string& origin, const std::string& arch) {
  std::string out;
  for (std::size_t i = 0; i < entry.size();) {
    if (entry[i] != '$') {
      out += entry[i++];
      continue;
    }
    auto token = [&](std::string_view name) -> bool {
      const std::string plain = std::string("$") + std::string(name);
      const std::string braced = std::string("${") + std::string(name) + "}";
      if (entry.compare(i, braced.size(), braced) == 0) {
        i += braced.size();
        return true;
      }
      if (entry.compare(i, plain.size(), plain) == 0) {
        const std::size_t after = i + plain.size();
        if (after < entry.size() && (std::isalnum(static_cast<unsigned char>(entry[after])) || entry[after] == '_')) {
          return false;
        }
        i = after;
        return true;
      }
      return false;
    };
    if (token("ORIGIN")) {
      out += origin;
    } else if (token("LIB")) {
      out += arch;  // the caller passes $LIB's value here (see load_folders)
    } else if (token("PLATFORM")) {
      out += "$PLATFORM";
    } else {
      out += entry[i++];
    }
  }
  return out;
}

namespace {

std::pair<int, int> python_version_of(const std::string& v) {
  const auto dot = v.find('.');
  try {
    return {std::stoi(v.substr(0, dot)), dot == std::string::npos ? 0 : std::stoi(v.substr(dot + 1))};
  } catch (const std::exception&) {
    return {-1, -1};
  }
}

bool free_threaded(const image::Python& p) {
  return std::any_of(p.abi_tags.begin(), p.abi_tags.end(), [](const std::string& t) { return t.ends_with("t"); });
}

}  // namespace

const image::Python* python_for(const WheelProfile& wheel, const image::Image& image) {
  std::vector<const image::Python*> usable;
  for (const auto& p : image.pythons) {
    if (!p.site_packages.empty()) usable.push_back(&p);
  }
  if (usable.empty()) return nullptr;
  for (const auto& tag : wheel.filename.tags) {
    const wheel::Interpreter it = wheel::parse_interpreter(tag.python);
    if (!it.valid) continue;
    if (it.impl == "py" || tag.abi == "none") {
      // Pure Python ABI: the default Python, if its major version fits (and its minor, for pyXY).
      for (const auto* p : usable) {
        const auto [major, minor] = python_version_of(p->version);
        if (major == it.major && (it.minor < 0 || minor == it.minor)) return p;
      }
      continue;
    }
    if (it.impl != "cp") continue;
    const image::Python* best = nullptr;
    for (const auto* p : usable) {
      const auto [major, minor] = python_version_of(p->version);
      if (major != it.major) continue;
      if (tag.abi == "abi3") {
        if (free_threaded(*p) || minor < it.minor) continue;
        if (best == nullptr || minor > python_version_of(best->version).second) best = p;
      } else if (minor == it.minor && free_threaded(*p) == tag.abi.ends_with("t")) {
        return p;
      }
    }
    if (best != nullptr) return best;
  }
  return nullptr;
}

}  // namespace wheelcheck::resolve
