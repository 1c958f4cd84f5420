// What the probe asks of names and lists: is it named like a shared library, and a list's add-if-absent.
#include <algorithm>

#include "probes/detail.hpp"

namespace wheelcheck::probe {

bool library_like(std::string_view name) {
  if (name.size() > 3 && name.substr(name.size() - 3) == ".so") return true;
  return name.find(".so.") != std::string_view::npos;
}

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

}  // namespace wheelcheck::probe
