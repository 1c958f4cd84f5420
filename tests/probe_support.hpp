// Roots for the tests of the probe: a root folder under construction, this machine's C and C++ runtime
// laid out in it as Debian does with its ld.so.cache, and the exports `nm -D --defined-only` sees against
// those of a table.
#pragma once

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "support.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"

namespace wheelcheck::test {

// A root folder under construction: image paths map to ROOT + path.
class RootBuilder {
 public:
  const std::string& root() const { return m_dir.path(); }
  std::string host(const std::string& image_path) const { return m_dir.path() + image_path; }
  void mkdir(const std::string& image_path) const { std::filesystem::create_directories(host(image_path)); }
  // Copies a host file (its real content, links followed) to an image path.
  void copy(const std::string& host_file, const std::string& image_path) const {
    mkdir(std::filesystem::path(image_path).parent_path().string());
    std::filesystem::copy_file(std::filesystem::canonical(host_file), host(image_path),
                               std::filesystem::copy_options::overwrite_existing);
  }
  void symlink(const std::string& target, const std::string& image_path) const {
    mkdir(std::filesystem::path(image_path).parent_path().string());
    std::filesystem::remove(host(image_path));
    std::filesystem::create_symlink(target, host(image_path));
  }
  void write(const std::string& image_path, const std::string& content) const {
    mkdir(std::filesystem::path(image_path).parent_path().string());
    write_binary(host(image_path), content);
  }
  TempDir& dir() { return m_dir; }

 private:
  TempDir m_dir;
};

struct NmExport {
  std::string name, version;
  bool hidden = false;
  bool operator<(const NmExport& o) const {
    return std::tie(name, version, hidden) < std::tie(o.name, o.version, o.hidden);
  }
  bool operator==(const NmExport& o) const = default;
};

inline std::set<NmExport> nm_defined(const std::string& path) {
  std::set<NmExport> out;
  const auto r = run("nm -D --defined-only " + shell_quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::stringstream ss(r.out);
  for (std::string line; std::getline(ss, line);) {
    std::stringstream ls(line);
    std::vector<std::string> cols;
    for (std::string c; ls >> c;) cols.push_back(c);
    if (cols.size() < 2) continue;
    std::string sym = cols.back();
    NmExport e;
    if (auto at = sym.find("@@"); at != std::string::npos) {
      e.name = sym.substr(0, at);
      e.version = sym.substr(at + 2);
    } else if (auto at1 = sym.find('@'); at1 != std::string::npos) {
      e.name = sym.substr(0, at1);
      e.version = sym.substr(at1 + 1);
      e.hidden = true;
    } else {
      e.name = sym;
    }
    out.insert(e);
  }
  return out;
}

inline std::set<NmExport> table_set(const exports::Table& t) {
  std::set<NmExport> out;
  for (const auto& e : t.symbols()) out.insert({std::string(e.name), std::string(e.version), e.hidden});
  return out;
}

inline bool have_host_glibc() {
  return std::filesystem::exists("/usr/lib/x86_64-linux-gnu/libc.so.6") && have_program("ldconfig");
}

// A Debian-like root with this machine's C and C++ runtime.
inline void lay_out_glibc(const RootBuilder& r) {
  const std::string lib = "/usr/lib/x86_64-linux-gnu";
  r.mkdir(lib);
  r.symlink("usr/lib", "/lib");
  for (const char* so : {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"}) {
    r.copy(std::string("/usr/lib/x86_64-linux-gnu/") + so, lib + "/" + so);
  }
  const std::string cxx = std::filesystem::canonical("/usr/lib/x86_64-linux-gnu/libstdc++.so.6").filename().string();
  r.copy("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", lib + "/" + cxx);
  r.symlink(cxx, lib + "/libstdc++.so.6");
  // An absolute link, as Debian ships it: it must resolve inside the root.
  r.symlink("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2");
  r.write("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  r.write("/etc/ld.so.conf.d/x86_64-linux-gnu.conf", "# Multiarch support\n/usr/lib/x86_64-linux-gnu\n");
}

inline void run_ldconfig(const RootBuilder& r) {
  const auto rc = run("ldconfig -X -r " + shell_quote(r.root()));
  ASSERT_EQ(rc.exit_code, 0) << rc.out << rc.err;
}

inline const image::Library* find_library(const image::Image& im, const std::string& soname) {
  for (const auto& l : im.libraries) {
    if (l.soname == soname) return &l;
  }
  return nullptr;
}

}  // namespace wheelcheck::test
