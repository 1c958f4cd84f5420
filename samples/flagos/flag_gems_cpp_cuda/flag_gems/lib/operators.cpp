// flag_gems/lib/liboperators.so: FlagGems' C++ operator library (plain C++, needs only libstdc++/libc).
#include <stdexcept>
#include <string>
int flag_gems_op_index(const std::string& name) {
  if (name.empty()) throw std::invalid_argument("flag_gems: empty operator name");
  return static_cast<int>(name.size());
}
