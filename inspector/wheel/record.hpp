#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "wheelcheck/wheel.hpp"

namespace wheelcheck::wheel {

// What reading a member gave: its size and digest (urlsafe base64, no padding, as RECORD writes it).
struct MemberDigest {
  bool read = false;
  std::uint64_t size = 0;
  std::string algorithm;
  std::string digest;
};

std::vector<Problem> verify_record(const std::vector<RecordEntry>& entries, const std::vector<MemberInfo>& members,
                                   const std::map<std::string, MemberDigest>& digests, const std::string& record_path);

}  // namespace wheelcheck::wheel
