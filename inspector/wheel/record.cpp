// RECORD verification, as the binary distribution format specification asks of an installer: every
// file in the archive except RECORD itself (and its signatures) is listed, with a sha256 (or stronger)
// digest, urlsafe base64 without padding, and its size; a listed file must exist.
#include "inspector/wheel/record.hpp"

#include <map>

namespace wheelcheck::wheel {

namespace {
bool is_record_or_signature(const std::string& path, const std::string& record_path) {
  return path == record_path || path == record_path + ".jws" || path == record_path + ".p7s";
}
}  // namespace

std::vector<Problem> verify_record(const std::vector<RecordEntry>& entries, const std::vector<MemberInfo>& members,
                                   const std::map<std::string, MemberDigest>& digests, const std::string& record_path) {
  std::vector<Problem> problems;
  std::map<std::string, const RecordEntry*> listed;
  for (const auto& e : entries) {
    if (!listed.emplace(e.path, &e).second) {
      problems.push_back({"duplicate-record-entry", e.path, "RECORD lists this path more than once"});
    }
    // An installer writes, and `pip uninstall` deletes, what RECORD names: a traversal there is an attack
    // even when no member carries the name (libzip shows a NUL in a member name as a space; RECORD keeps it).
    if (auto why = unsafe_member_name(e.path)) {
      problems.push_back({"unsafe-record-path", e.path, "RECORD names an unsafe path: " + *why});
    }
  }
  std::map<std::string, bool> present;
  for (const auto& m : members) {
    if (m.directory) continue;
    present[m.name] = true;
    if (is_record_or_signature(m.name, record_path)) continue;
    auto it = listed.find(m.name);
    if (it == listed.end()) {
      problems.push_back({"unlisted-member", m.name, "in the archive but not in RECORD"});
      continue;
    }
    const RecordEntry& e = *it->second;
    if (e.algorithm.empty()) {
      problems.push_back({"missing-hash", m.name, "RECORD gives no hash for this file"});
      continue;
    }
    if (e.algorithm == "md5" || e.algorithm == "sha1" || e.algorithm == "sha224") {
      problems.push_back({"weak-hash", m.name, "RECORD uses " + e.algorithm + "; sha256 or stronger is required"});
      continue;
    }
    auto d = digests.find(m.name);
    if (d == digests.end() || !d->second.read) continue;  // unreadable: reported where it was read
    if (d->second.algorithm != e.algorithm) {
      problems.push_back(
          {"unsupported-hash", m.name, "RECORD uses " + e.algorithm + ", which wheelcheck cannot check"});
      continue;
    }
    if (e.size && *e.size != d->second.size) {
      problems.push_back(
          {"size-mismatch", m.name,
           "RECORD says " + std::to_string(*e.size) + " bytes, the member has " + std::to_string(d->second.size)});
    }
    if (d->second.digest != e.digest) {
      problems.push_back(
          {"hash-mismatch", m.name,
           "RECORD says " + e.algorithm + "=" + e.digest + ", the member hashes to " + d->second.digest});
    }
  }
  for (const auto& e : entries) {
    if (!present.count(e.path))
      problems.push_back({"missing-member", e.path, "listed in RECORD but not in the archive"});
  }
  return problems;
}

}  // namespace wheelcheck::wheel
