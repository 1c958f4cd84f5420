// The probe's path helpers (image paths are '/'-separated strings inside the root, see RootFs), and a
// list's add-if-absent.
#include <algorithm>

#include "probes/detail.hpp"

namespace wheelcheck::probe {

bool library_like(std::string_view name) {
  if (name.size() > 3 && name.substr(name.size() - 3) == ".so") return true;
  return name.find(".so.") != std::string_view::npos;
}

std::string base_name(std::string_view path) {
  const auto slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string dir_name(std::string_view path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string join_path(std::string_view dir, std::string_view name) {
  if (dir == "/") return "/" + std::string(name);
  return std::string(dir) + "/" + std::string(name);
}

std::vector<std::string> split_list(const std::string& s, std::string_view seps) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto pos = s.find_first_of(seps, start);
    std::string part = s.substr(start, pos == std::string::npos ? std::string::npos : pos - start);
    if (!part.empty()) out.push_back(std::move(part));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

}  // namespace wheelcheck::probe
