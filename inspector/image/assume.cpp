// Facts a user states where a description leaves them unknown (--assume FACT=VALUE, a description's
// "assumed" block): each sets the fact with origin "assumed" and is recorded in words, with what the
// image said before, so that every answer lists what it took for granted; and the facts still unknown.
#include <algorithm>
#include <cctype>

#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::image {

namespace {

bool dotted(std::string_view v, std::size_t min_parts) {
  if (v.empty() || v.front() == '.' || v.back() == '.') return false;
  std::size_t parts = 1;
  for (const char c : v) {
    if (c == '.') {
      ++parts;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return parts >= min_parts && v.find("..") == std::string_view::npos;
}

}  // namespace

namespace {

// library=NAME[,!NAME...]: a soname the image has (declared without a location, its exports unknown) or, with
// "!", has not (added to the inventory's absent list). What the image lists stays as it says.
void assume_libraries(Image& im, const std::string& value, const std::string& source) {
  for (const auto& item : split(value, ",", true)) {
    const std::string text(trim(item));
    const bool absent = !text.empty() && text.front() == '!';
    const std::string soname = absent ? text.substr(1) : text;
    const bool ok = soname.find(".so") != std::string::npos && std::none_of(soname.begin(), soname.end(), [](char c) {
                      return c == '/' || c == '=' || c == '!' || std::isspace(static_cast<unsigned char>(c));
                    });
    if (!ok) {
      throw usage_error("--assume library=" + value +
                        ": a library is a soname (library=libgomp.so.1: the image has it, its exports unknown; "
                        "library=!libgomp.so.1: it has not), several separated by commas");
    }
    const bool listed = std::any_of(im.libraries.begin(), im.libraries.end(), [&](const Library& l) {
      return l.soname == soname && l.origin != Origin::Assumed;
    });
    if (listed) {
      if (!absent) continue;  // already stated: nothing to assume
      throw usage_error("--assume library=!" + soname + ": " + im.name + " lists " + soname +
                        "; an assumption states what the image does not, it does not remove what it lists");
    }
    auto& gone = im.inventory.absent;
    const bool was_absent = std::find(gone.begin(), gone.end(), soname) != gone.end();
    const std::string before = was_absent ? "the image states it absent" : "not stated by the image";
    std::erase(gone, soname);
    std::erase_if(im.libraries, [&](const Library& l) { return l.soname == soname; });
    if (absent) {
      gone.push_back(soname);
    } else {
      Library l;
      l.soname = soname;
      l.exports_unknown = "assumed present (" + source + "): its exports are unknown";
      l.origin = Origin::Assumed;
      l.layer = source;
      im.libraries.push_back(std::move(l));
    }
    im.assumptions.push_back("library=" + text + " (" + soname +
                             (absent ? " is not in the image" : " is in the image, its exports unknown") + ", " +
                             source + "; " + before + ")");
  }
}

}  // namespace

void assume(Image& im, const std::string& fact, const std::string& value, const std::string& source) {
  if (fact == "library") {
    assume_libraries(im, value, source);
    return;
  }
  if (const auto sep = fact.find("::"); sep != std::string::npos) {
    // A wheel variant property the machine supports: NAMESPACE::FEATURE=V1,V2 (best first), or none.
    const std::string ns(trim(fact.substr(0, sep))), feature(trim(fact.substr(sep + 2)));
    const auto name_ok = [](std::string_view s) {
      return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
      });
    };
    std::vector<std::string> values;
    if (value != "none") {
      for (const auto& v : split(value, ",", true)) values.emplace_back(trim(v));
    }
    const bool values_ok = std::all_of(values.begin(), values.end(), [](const std::string& v) {
      return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
      });
    });
    if (!name_ok(ns) || !name_ok(feature) || value.empty() || !values_ok) {
      throw usage_error(
          "--assume " + fact + "=" + value +
          ": a variant property is NAMESPACE::FEATURE=VALUE[,VALUE...] in lower case (nvidia::sm_arch=90_real, "
          "amd::rocm_version=7.1), or =none");
    }
    im.variant_properties[ns + "::" + feature] = values;
    im.assumptions.push_back(ns + " :: " + feature + " = " + (values.empty() ? "none" : join(values, ", ")) +
                             " (a wheel variant property the machine supports, " + source + ")");
    return;
  }
  Fact* target = nullptr;
  std::string what = fact;
  bool ok = dotted(value, 2);
  if (fact == "driver") {
    target = &im.driver;
    what = "driver";
    ok = dotted(value, 2);
  } else if (fact == "gpu_archs") {
    target = &im.gpu_archs;
    what = "GPU architectures";
    ok = !value.empty();
    for (const auto& a : split(value, ",", true)) {
      const std::string_view t = trim(a);
      const bool sm = t.size() > 3 && t.substr(0, 3) == "sm_" && std::all_of(t.begin() + 3, t.end(), [](char c) {
                        return std::isdigit(static_cast<unsigned char>(c)) || c == 'a' || c == 'f';
                      });
      // AMD's: gfx942, gfx90a, gfx1100.
      const bool gfx = t.size() > 3 && t.substr(0, 3) == "gfx" && std::all_of(t.begin() + 3, t.end(), [](char c) {
                         return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
                       });
      ok = ok && (sm || gfx);
    }
  } else if (fact == "toolkit_version" || fact == "runtime") {
    if (!im.toolkit)
      throw usage_error("--assume " + fact + "=" + value + ": " + im.name + " has no accelerator toolkit");
    target = fact == "runtime" ? &im.toolkit->runtime : &im.toolkit->version;
    what = toolkit_kind_name(im.toolkit->kind) + (fact == "runtime" ? " runtime version" : " toolkit version");
  } else if (fact == "libc_version") {
    target = &im.libc_version;
    what = "C library version";
  } else if (fact == "python") {
    target = &im.python;
    what = "Python version";
    if (!im.pythons.empty()) {
      throw usage_error("--assume python=" + value + ": " + im.name + " describes its Pythons (" +
                        im.pythons.front().version + "...); a Python it does not have cannot be assumed");
    }
  } else if (fact == "glibcxx") {
    target = &im.glibcxx;
    what = "libstdc++ version (GLIBCXX_)";
    ok = value.rfind("GLIBCXX_", 0) == 0 && dotted(value.substr(8), 2);
  } else if (fact == "isa") {
    // The runner's x86-64 level (psABI x86-64-v1..v4), which a member's GNU_PROPERTY_X86_ISA_1_NEEDED asks for.
    if (im.arch.known() && *im.arch.value != "x86_64") {
      throw usage_error("--assume isa=" + value + ": an x86-64 level, and " + im.name + " is " + *im.arch.value);
    }
    target = &im.isa_level;
    what = "x86-64 level of the runner's CPUs";
    ok = value.size() == 9 && value.rfind("x86-64-v", 0) == 0 && value[8] >= '1' && value[8] <= '4';
  } else {
    throw usage_error("--assume " + fact + "=" + value + ": not a fact that can be assumed (" + k_assumable_facts +
                      ")");
  }
  if (!ok) {
    throw usage_error("--assume " + fact + "=" + value + ": not a value of the right form (" +
                      (fact == "gpu_archs" ? "sm_90,sm_100 or gfx942"
                       : fact == "glibcxx" ? "GLIBCXX_3.4.30"
                       : fact == "isa"     ? "x86-64-v1, x86-64-v2, x86-64-v3 or x86-64-v4"
                                           : "digits and dots, 580.95.05") +
                      ")");
  }
  const std::string before = target->known()
                                 ? "the image says " + *target->value
                                 : "unknown to the image" + (target->note.empty() ? "" : " (" + target->note + ")");
  *target = Fact::known_as(value, "assumed (" + source + ")", Origin::Assumed);
  target->set = true;
  im.assumptions.push_back(fact + "=" + value + " (" + what + ", " + source + "; " + before + ")");
}

void assume_all(Image& im, const std::vector<std::string>& assignments, const std::string& source) {
  for (const auto& kv : assignments) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw usage_error("--assume " + kv + ": expected FACT=VALUE");
    assume(im, kv.substr(0, eq), kv.substr(eq + 1), source);
  }
}

std::vector<std::string> Image::unknowns() const {
  std::vector<std::string> out;
  auto fact = [&](const Fact& f, const std::string& what) {
    if (f.set && !f.known()) out.push_back(what + (f.note.empty() ? "" : " (" + f.note + ")"));
  };
  fact(arch, "arch");
  fact(libc_kind, "C library");
  fact(libc_version, "libc version");
  if (pythons.empty()) fact(python, "Python version");
  fact(glibcxx, "libstdc++ version");
  if (toolkit) {
    fact(toolkit->version, toolkit_kind_name(toolkit->kind) + " toolkit version");
    fact(toolkit->runtime, toolkit_kind_name(toolkit->kind) + " runtime version");
    fact(toolkit->driver_floor, toolkit_kind_name(toolkit->kind) + " toolkit's minimum driver");
  }
  fact(driver, "driver version");
  fact(gpu_archs, "GPU architectures");
  for (const auto& d : distributions) {
    bool any_unknown = !d.exports_unknown.empty();
    for (const auto& l : d.libraries) any_unknown = any_unknown || (l.exports.empty() && !l.exports_unknown.empty());
    if (any_unknown) {
      const std::string why = !d.exports_unknown.empty() ? d.exports_unknown : "some libraries have no export table";
      out.push_back(d.name + " " + d.version + " export tables (" + why + ")");
    }
  }
  return out;
}

}  // namespace wheelcheck::image
