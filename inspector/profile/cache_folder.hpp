// The profile cache's folder and the framing of its entries (inspector/profile/cache_folder.cpp).
//
// The folder: opened once and checked (owned by the user, writable by nobody else: else it is not used);
// every entry below it is reached from that descriptor one component at a time with O_NOFOLLOW, so a
// link planted anywhere inside can neither be read through nor written through. A size cap removes the
// least recently used entries (a hit older than an hour refreshes its entry's mtime).
//
// An entry's framing: one header line, then the payload:
//   wcache1 <crc64, 16 hex> <kind> <flag 0|1> <payload bytes> <key>\n<payload>
// The CRC-64 (ISA-L's crc64_ecma_refl) covers everything after itself: kind, flag, size, key and payload.
// A read checks the kind and key it expects (the wheel's sha256, reader, schema and cache format; a path
// for the stat index), the size and the CRC: a truncated, flipped, swapped or foreign entry is a miss.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace wheelcheck::cache_folder {

std::string frame(std::string_view kind, std::string_view key, bool flag, std::string_view payload);
struct Unframed {
  std::string_view payload;
  bool flag = false;
};
std::optional<Unframed> unframe(std::string_view bytes, std::string_view kind, std::string_view key);
// A checked entry read in place: its file mapped read-only (unmapped when the last copy of `bytes` goes),
// the payload a view into it.
struct MappedEntry {
  std::shared_ptr<const void> bytes;
  std::string_view payload;
  bool flag = false;
};

class Folder {
 public:
  // Opens DIR, creating it. Throws Error(Io) saying why it cannot be used: not a folder, not writable,
  // not the user's, writable by others.
  Folder(const std::string& dir, std::uint64_t max_size);
  ~Folder();
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;

  const std::string& dir() const { return m_dir; }
  // The bytes of the regular file at REL ("profiles/ab/x.bin"), every component reached without
  // following a link; nullopt when absent, a link, not a regular file, larger than max, or unreadable.
  std::optional<std::string> read(const std::string& rel, std::uint64_t max) const;
  // The framed entry at REL, mapped and checked as unframe checks it (what `inspect --json` prints warm:
  // no copy of it is made).
  std::optional<MappedEntry> map_entry(const std::string& rel, std::uint64_t max, std::string_view kind,
                                       std::string_view key) const;
  // Writes REL atomically (temporary + rename, every write checked), creating its folders; a link or a
  // file where a folder belongs is removed first (the link, never what it points to). Leftover
  // temporaries of dead processes in that folder are swept. Throws Error(Io).
  void write(const std::string& rel, std::string_view content) const;
  // The path of the subfolder REL, made a real folder of this cache (for downloads).
  std::string subfolder(const std::string& rel) const;

 private:
  struct Opened {
    int fd;
    std::uint64_t size;
    std::int64_t mtime;
  };
  std::optional<Opened> open_file(const std::string& rel, std::uint64_t max) const;  // a regular file, opened
  int open_dir(const std::string& rel, bool create) const;                           // -1 when absent (create: made)
  void account(std::uint64_t bytes) const;
  void evict() const;

  std::string m_dir;
  int m_fd = -1;
  std::uint64_t m_max;
  mutable std::mutex m_mutex;
  mutable std::optional<std::uint64_t> m_total;  // bytes of entries, once counted
};

}  // namespace wheelcheck::cache_folder
