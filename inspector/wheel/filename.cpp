// Wheel file names, as the binary distribution format specification (PEP 427, PEP 491) defines them, with
// the variant label of the PEP 825 draft:
//   {distribution}-{version}(-{build tag})?-{python tag}-{abi tag}-{platform tag}(-{variant label})?.whl
// Each tag may be a compressed set ("py2.py3"): the file supports every combination of the parts. A build tag
// starts with a digit and a Python tag never does, which tells a six-part name's third part apart.
#include <algorithm>
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
  auto parts = split(std::string_view(base).substr(0, base.size() - 4), "-", true);
  if (parts.size() < 5 || parts.size() > 7) {
    throw bad_input("'" + base + "' is not a wheel file name: " + std::to_string(parts.size()) +
                    " dash-separated parts, " + grammar + " (or a variant's, with -LABEL before .whl)");
  }
  Filename f;
  f.filename = base;
  f.name = parts[0];
  f.version = parts[1];
  const auto starts_with_digit = [](std::string_view s) {
    return !s.empty() && std::isdigit(static_cast<unsigned char>(s[0]));
  };
  if (parts.size() == 7 || (parts.size() == 6 && !starts_with_digit(parts[2]))) {
    f.variant = parts.back();
    parts.pop_back();
    if (!valid_variant_label(*f.variant)) {
      throw bad_input("'" + base + "': the variant label '" + *f.variant +
                      "' is not one (PEP 825: lower-case letters, digits, '_' and '.')");
    }
  }
  if (parts.size() == 6) {
    f.build = parts[2];
    if (f.build->empty() || !starts_with_digit(*f.build)) {
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
    if (starts_with_digit(p)) {
      throw bad_input("'" + base + "': the Python tag '" + p + "' starts with a digit, which only a build tag does");
    }
  }
  for (const auto& p : py) {
    for (const auto& a : abi) {
      for (const auto& pl : plat) f.tags.push_back(Tag{p, a, pl});
    }
  }
  return f;
}

bool valid_variant_label(std::string_view label) {
  return !label.empty() && std::all_of(label.begin(), label.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' || c == '.';
  });
}

std::string canonical_filename(std::string_view name, std::string_view version, const std::optional<std::string>& build,
                               const std::vector<std::string>& tags, const std::optional<std::string>& variant) {
  std::string n;
  for (const char c : name) {
    const bool sep = c == '-' || c == '_' || c == '.';
    if (sep && !n.empty() && n.back() == '_') continue;
    n += sep ? '_' : c;
  }
  std::string v(version);
  std::replace(v.begin(), v.end(), '-', '_');
  if (n.empty() || v.empty() || tags.empty()) throw bad_input("no name, version or tag to make a wheel file name of");
  // The tag sets in first-seen order; their product is the tag list when the tags are one compressed set.
  std::vector<std::string> py, abi, plat;
  std::vector<std::string> seen;
  auto add = [](std::vector<std::string>& list, const std::string& x) {
    if (std::find(list.begin(), list.end(), x) == list.end()) list.push_back(x);
  };
  for (const auto& t : tags) {
    const auto parts = split(t, "-", true);
    if (parts.size() != 3) throw bad_input("'" + t + "' is not a PYTHON-ABI-PLATFORM tag");
    add(py, std::string(parts[0]));
    add(abi, std::string(parts[1]));
    add(plat, std::string(parts[2]));
    add(seen, t);
  }
  const bool product = py.size() * abi.size() * plat.size() == seen.size();
  const auto first = split(tags.front(), "-", true);
  const std::string tag = product ? join(py, ".") + "-" + join(abi, ".") + "-" + join(plat, ".")
                                  : std::string(first[0]) + "-" + std::string(first[1]) + "-" + std::string(first[2]);
  return n + "-" + v + (build && !build->empty() ? "-" + *build : "") + "-" + tag +
         (variant && !variant->empty() ? "-" + *variant : "") + ".whl";
}

}  // namespace wheelcheck::wheel
