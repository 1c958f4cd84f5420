// The zip container read strictly, beside libzip (inspector/wheel/zip_check.cpp): the end records (zip64
// included), the central directory entry by entry, and each member's local header against its central
// one. Two readers of one archive must never see two different wheels (an installer that reads the local
// headers, another that reads the central directory), so every place where the archive states a fact twice
// is compared, and a disagreement names the member and both values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wheelcheck/bytes.hpp"
#include "wheelcheck/problem.hpp"

namespace wheelcheck::wheel {

// One member as the central directory states it, zip64 extra field applied.
struct CentralEntry {
  std::string name;  // the stored bytes
  std::uint64_t local_offset = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;
  std::uint32_t crc = 0;
  std::uint16_t method = 0;
  std::uint16_t flags = 0;
  std::uint16_t extra_length = 0;  // of the central header's extra field
};

struct ZipDirectory {
  bool zip64 = false;  // the zip64 end records are there
  std::uint64_t cd_offset = 0;
  std::uint64_t cd_size = 0;
  std::vector<CentralEntry> entries;  // in the central directory's order (libzip's indices)
};

// Reads the end of central directory record, the zip64 locator and end record where there are any, and
// every central directory entry (read in 1 MiB pieces, never whole). Throws Error(BadInput) naming the
// record and both values where two of them disagree: the locator pointing where no zip64 end record lies,
// the end records giving different counts, sizes or offsets, the central directory holding another count
// of members than they say, a member whose central header says 0xFFFFFFFF with no zip64 value for it.
// `max_members`: more than this is refused before anything is allocated for them.
ZipDirectory read_zip_directory(const RandomAccess& file, std::uint64_t max_members);

// Where a member's bytes lie, from its local header: [begin, end) spans the local header, the data and the
// data descriptor.
struct MemberSpan {
  std::uint64_t begin = 0;
  std::uint64_t data = 0;  // where the (compressed) data starts
  std::uint64_t end = 0;
};

// Compares the local header of `e` with `e`: the name, the compression method, the encryption flag, the
// CRC-32 and both sizes (zip64 extra field applied; with the data descriptor flag, the descriptor's
// values), and that the member ends before the central directory. nullopt when they agree, else the
// disagreement in words ("its local header says size 1234, the central directory 5678"); `span` is set
// whenever the local header could be read.
std::optional<std::string> check_local_header(const RandomAccess& file, const ZipDirectory& dir, const CentralEntry& e,
                                              MemberSpan* span = nullptr);

// Every member's local header (check_local_header), and no two members' bytes overlapping (one archive
// whose members share bytes: a zip bomb of overlapping members, or two readers reading different bytes).
// At most one Problem per member ("header-mismatch", "overlapping-members"), with the member's index;
// `display_names[i]` names member i.
std::vector<std::pair<std::size_t, Problem>> check_local_headers(const RandomAccess& file, const ZipDirectory& dir,
                                                                 const std::vector<std::string>& display_names);

}  // namespace wheelcheck::wheel
