// Wheel file names, as the binary distribution format specification (PEP 427, PEP 491) defines them:
//   {distribution}-{version}(-{build tag})?-{python tag}-{abi tag}-{platform tag}.whl
// Each tag may be a compressed set ("py2.py3"): the file supports every combination of the parts.
#include <cctype>

#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::wheel {

namespace {

bool valid_component(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' || c == '!')) return false;
  }
  return true;
}

}  // namespace

std::string Filename::normalized_name() const {
  return normalize_project_name(name);
}

std::string normalize_project_name(std::string_view name) {
  std::string out;
  bool in_sep = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!in_sep) out.push_back('-');
      in_sep = true;
    } else {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      in_sep = false;
    }
  }
  return out;
}

Filename parse_filename(std::string_view path) {
  const auto slash = path.find_last_of('/');
  const std::string base = percent_decode(slash == std::string_view::npos ? path : path.substr(slash + 1));
  const std::string grammar = "expected NAME-VERSION[-BUILD]-PYTHON-ABI-PLATFORM.whl";
  if (base.size() < 4 || base.compare(base.size() - 4, 4, ".whl") != 0) {
    throw bad_input("'" + base + "' is not a wheel file name: it does not end in .whl (" + grammar + ")");
  }
  const auto parts = split(std::string_view(base).substr(0, base.size() - 4), "-", true);
  if (parts.size() != 5 && parts.size() != 6) {
    throw bad_input("'" + base + "' is not a wheel file name: " + std::to_string(parts.size()) +
                    " dash-separated parts, " + grammar);
  }
  Filename f;
  f.filename = base;
  f.name = parts[0];
  f.version = parts[1];
  if (parts.size() == 6) {
    f.build = parts[2];
    if (f.build->empty() || !std::isdigit(static_cast<unsigned char>((*f.build)[0]))) {
      throw bad_input("'" + base + "': the build tag '" + *f.build + "' must start with a digit");
    }
  }
  for (const auto* what : {&f.name, &f.version}) {
    if (!valid_component(*what)) throw bad_input("'" + base + "': '" + *what + "' is not a valid name or version");
  }
  const std::size_t t = parts.size() - 3;
  const auto py = split(parts[t], ".", true), abi = split(parts[t + 1], ".", true),
             plat = split(parts[t + 2], ".", true);
  for (const auto* set : {&py, &abi, &plat}) {
    for (const auto& tag : *set) {
      if (!valid_component(tag))
        throw bad_input("'" + base + "': empty or invalid tag in '" + parts[t] + "-" + parts[t + 1] + "-" +
                        parts[t + 2] + "'");
    }
  }
  for (const auto& p : py) {
    for (const auto& a : abi) {
      for (const auto& pl : plat) f.tags.push_back(Tag{p, a, pl});
    }
  }
  return f;
}

}  // namespace wheelcheck::wheel
