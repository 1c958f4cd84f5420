// Helpers of the tests of probes/: building image roots (files, links) and reading findings.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/problem.hpp"

namespace wheelcheck::test {

inline void put(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_binary(path, content);
}

inline void link_at(const std::string& target, const std::string& link_path) {
  std::filesystem::create_directories(std::filesystem::path(link_path).parent_path());
  std::filesystem::create_symlink(target, link_path);
}

inline bool has_finding(const std::vector<Problem>& findings, const std::string& kind, const std::string& path) {
  return std::any_of(findings.begin(), findings.end(),
                     [&](const Problem& f) { return f.kind == kind && f.path == path; });
}

inline std::string describe(const std::vector<Problem>& findings) {
  std::string out;
  for (const auto& f : findings) out += "[" + f.kind + " " + f.path + ": " + f.detail + "] ";
  return out;
}

// Runs `fn`, which must throw wheelcheck::Error of kind BadInput whose message contains `part`.
template <class Fn>
testing::AssertionResult throws_bad_input(Fn&& fn, const std::string& part = "") {
  try {
    fn();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) {
      return testing::AssertionFailure() << "Error of kind " << static_cast<int>(e.kind()) << ": " << e.what();
    }
    if (std::string(e.what()).find(part) == std::string::npos) {
      return testing::AssertionFailure() << "message \"" << e.what() << "\" lacks \"" << part << "\"";
    }
    return testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return testing::AssertionFailure() << "threw something else: " << e.what();
  }
  return testing::AssertionFailure() << "did not throw";
}

}  // namespace wheelcheck::test
