// Wheels and images for the tests of the verdict: shared libraries built from sources, wheels packed from
// them, and image descriptions on the db's debian12 with Python 3.12.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "support.hpp"

namespace wheelcheck::test {

// A wheel's members from sources: {archive path, source text, compiler flags, compiler}.
struct Member {
  std::string path;
  std::string source;
  std::string flags;
  std::string compiler = "gcc";
};

inline std::string build(const TempDir& dir, const std::string& name, const std::string& source,
                         const std::string& flags, const std::string& compiler = "gcc") {
  std::string err;
  const bool cxx = compiler.find("++") != std::string::npos;
  auto so = build_shared(dir, name, name + (cxx ? ".cpp" : ".c"), source, flags, compiler, &err);
  if (!so) ADD_FAILURE() << "building " << name << ": " << err;
  return so.value_or("");
}

// Builds the members in order (later ones may link earlier ones: -L<dir> is the build folder).
inline std::string wheel_of(const TempDir& dir, const std::string& wheel_name, const std::vector<Member>& members,
                            const std::vector<std::string>& options = {}) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& m : members) {
    const std::string built = build(dir, std::filesystem::path(m.path).filename().string(), m.source,
                                    "-L" + dir.path() + " " + m.flags, m.compiler);
    files.emplace_back(m.path, built);
  }
  return make_wheel(dir, wheel_name, files, options);
}

// An image: the db's debian12 (glibc 2.36, this machine's) with Python 3.12, plus what `extra` adds.
inline std::string image_file(const TempDir& dir, const std::string& name, const std::string& extra = "") {
  const std::string path = dir.file(name + ".json");
  write_binary(path, R"({"schema": "wheelcheck-image/1", "name": ")" + name +
                         R"(", "summary": "test image", "layers": ["debian12", "python3.12"])" + extra + "}");
  return path;
}

}  // namespace wheelcheck::test
