// The zip container read strictly, beside libzip (see zip_check.hpp). APPNOTE 6.3.10's layouts: the end
// of central directory record (4.3.16), the zip64 end record and its locator (4.3.14, 4.3.15), central and
// local headers (4.3.12, 4.3.7), the zip64 extended information extra field (4.5.3) and the data
// descriptor (4.3.9). Every count, offset and length is checked against the file before it is used.

#include "inspector/wheel/zip_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>

#include "wheelcheck/error.hpp"

namespace wheelcheck::wheel {

namespace {

constexpr std::uint32_t k_zc_eocd = 0x06054b50;
constexpr std::uint32_t k_zc_locator = 0x07064b50;
constexpr std::uint32_t k_zc_eocd64 = 0x06064b50;
constexpr std::uint32_t k_zc_central = 0x02014b50;
constexpr std::uint32_t k_zc_local = 0x04034b50;
constexpr std::uint32_t k_zc_descriptor = 0x08074b50;
constexpr std::uint64_t k_zc_max32 = 0xFFFFFFFF;
constexpr std::size_t k_zc_eocd_len = 22, k_zc_locator_len = 20, k_zc_eocd64_len = 56, k_zc_central_len = 46,
                      k_zc_local_len = 30;
constexpr std::size_t k_zc_piece = std::size_t{1} << 20;  // the central directory is read this much at a time

std::uint64_t zc_le(std::span<const std::byte> b, std::size_t at, int width) {
  std::uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i)
    v = (v << 8) | std::to_integer<std::uint64_t>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

std::vector<std::byte> zc_read(const RandomAccess& file, std::uint64_t offset, std::size_t length) {
  std::vector<std::byte> out(length);
  if (length != 0) file.read_at(offset, out);  // a remote file would ask for an empty range
  return out;
}

std::string zc_hex(std::uint64_t v) {
  return fmt::format("0x{:08x}", v);
}

// The zip64 extended information of an extra field block: the 8-byte values in their fixed order, each
// present only where the header's own field is 0xFFFFFFFF (a local header: both sizes whenever it has the
// field at all). nullopt when the block has no zip64 field; the values found otherwise, shorter than asked
// when the field is too short.
std::optional<std::vector<std::uint64_t>> zc_zip64_values(std::span<const std::byte> extra) {
  for (std::size_t x = 0; x + 4 <= extra.size();) {
    const auto id = zc_le(extra, x, 2), len = zc_le(extra, x + 2, 2);
    if (x + 4 + len > extra.size()) return std::nullopt;  // a malformed block: the field is not there
    if (id == 0x0001) {
      std::vector<std::uint64_t> values;
      for (std::size_t f = 0; f + 8 <= len; f += 8) values.push_back(zc_le(extra, x + 4 + f, 8));
      return values;
    }
    x += 4 + len;
  }
  return std::nullopt;
}

std::string zc_name(const CentralEntry& e, std::size_t index) {
  return e.name.empty() ? "#" + std::to_string(index) : e.name;
}

// The end of central directory record: the last one in the file's final 64 KiB whose comment reaches the
// file's end exactly (a signature inside a comment is not one).
std::uint64_t zc_find_eocd(const RandomAccess& file, std::vector<std::byte>& tail, std::uint64_t& tail_at) {
  const std::uint64_t size = file.size();
  if (size < k_zc_eocd_len) throw bad_input("not a zip archive: " + std::to_string(size) + " bytes, too short for one");
  tail_at = size - std::min<std::uint64_t>(size, k_zc_eocd_len + 65535);
  tail = zc_read(file, tail_at, static_cast<std::size_t>(size - tail_at));
  std::optional<std::size_t> first_seen;
  for (std::size_t at = tail.size() - k_zc_eocd_len + 1; at-- > 0;) {
    if (zc_le(tail, at, 4) != k_zc_eocd) continue;
    if (at + k_zc_eocd_len + zc_le(tail, at + 20, 2) == tail.size()) return tail_at + at;
    if (!first_seen) first_seen = at;
  }
  if (first_seen) {
    const std::uint64_t comment = zc_le(tail, *first_seen + 20, 2);
    throw bad_input(fmt::format(
        "the end of central directory record at offset {} says a comment of {} bytes follows it, but {} bytes do "
        "(bytes after the archive, or a truncated one)",
        tail_at + *first_seen, comment, tail.size() - *first_seen - k_zc_eocd_len));
  }
  throw bad_input("not a zip archive: no end of central directory record (truncated, or not a wheel at all)");
}

}  // namespace

ZipDirectory read_zip_directory(const RandomAccess& file, std::uint64_t max_members) {
  std::vector<std::byte> tail;
  std::uint64_t tail_at = 0;
  const std::uint64_t eocd = zc_find_eocd(file, tail, tail_at);
  const auto e = std::span<const std::byte>(tail).subspan(static_cast<std::size_t>(eocd - tail_at));
  if (zc_le(e, 4, 2) != 0 || zc_le(e, 6, 2) != 0) {
    if (zc_le(e, 4, 2) != 0xFFFF || zc_le(e, 6, 2) != 0xFFFF)
      throw bad_input("the end of central directory record names another disk: a split archive, not a wheel");
  }
  const std::uint64_t count16 = zc_le(e, 10, 2), count16_disk = zc_le(e, 8, 2), size32 = zc_le(e, 12, 4),
                      offset32 = zc_le(e, 16, 4);
  ZipDirectory dir;
  dir.cd_size = size32;
  dir.cd_offset = offset32;
  std::uint64_t count = count16, cd_end_expected = eocd;
  if (count16_disk != count16) {
    throw bad_input(fmt::format("the end of central directory record says {} members on this disk and {} in all",
                                count16_disk, count16));
  }
  const bool has_locator = eocd >= k_zc_locator_len && eocd - k_zc_locator_len >= tail_at &&
                           zc_le(tail, static_cast<std::size_t>(eocd - k_zc_locator_len - tail_at), 4) == k_zc_locator;
  if (has_locator) {
    dir.zip64 = true;
    const auto loc =
        std::span<const std::byte>(tail).subspan(static_cast<std::size_t>(eocd - k_zc_locator_len - tail_at));
    const std::uint64_t locator = eocd - k_zc_locator_len;
    const std::uint64_t at = zc_le(loc, 8, 8);
    if (zc_le(loc, 4, 4) != 0 || zc_le(loc, 16, 4) > 1)
      throw bad_input("the zip64 end of central directory locator names another disk: a split archive, not a wheel");
    // Where the zip64 end record lies when it has no extensible data (every writer): just before the locator.
    const std::uint64_t usual = locator >= k_zc_eocd64_len ? locator - k_zc_eocd64_len : 0;
    const bool usual_there = locator >= k_zc_eocd64_len && zc_le(zc_read(file, usual, 4), 0, 4) == k_zc_eocd64;
    if (at > locator || locator - at < k_zc_eocd64_len || zc_le(zc_read(file, at, 4), 0, 4) != k_zc_eocd64) {
      throw bad_input(
          usual_there
              ? fmt::format("the zip64 end of central directory locator says the zip64 end record lies at "
                            "offset {}, but it lies at {}",
                            at, usual)
              : fmt::format("the zip64 end of central directory locator points at offset {}, where no zip64 end "
                            "record lies",
                            at));
    }
    const auto z = zc_read(file, at, k_zc_eocd64_len);
    const std::uint64_t record_end = at + 12 + zc_le(z, 4, 8);
    if (record_end != locator) {
      throw bad_input(fmt::format("the zip64 end record at offset {} says it ends at {}, but its locator starts at {}",
                                  at, record_end, locator));
    }
    if (zc_le(z, 16, 4) != 0 || zc_le(z, 20, 4) != 0)
      throw bad_input("the zip64 end of central directory record names another disk: a split archive, not a wheel");
    const std::uint64_t count64 = zc_le(z, 32, 8), count64_disk = zc_le(z, 24, 8), size64 = zc_le(z, 40, 8),
                        offset64 = zc_le(z, 48, 8);
    if (count64_disk != count64) {
      throw bad_input(
          fmt::format("the zip64 end record says {} members on this disk and {} in all", count64_disk, count64));
    }
    // The 16- and 32-bit fields either say "see the zip64 record" (all ones) or give the same value.
    auto agree = [](const char* what, std::uint64_t narrow, std::uint64_t all_ones, std::uint64_t wide) {
      if (narrow != all_ones && narrow != wide) {
        throw bad_input(
            fmt::format("the end of central directory record says {} {}, the zip64 end record {}", what, narrow, wide));
      }
    };
    agree("a member count of", count16, 0xFFFF, count64);
    agree("a central directory size of", size32, k_zc_max32, size64);
    agree("a central directory offset of", offset32, k_zc_max32, offset64);
    count = count64;
    dir.cd_size = size64;
    dir.cd_offset = offset64;
    cd_end_expected = at;
  }
  if (dir.cd_offset > cd_end_expected || dir.cd_size > cd_end_expected - dir.cd_offset ||
      dir.cd_offset + dir.cd_size != cd_end_expected) {
    throw bad_input(
        fmt::format("the central directory (offset {}, {} bytes, as the {} says) ends at {}, but the {} starts at {}",
                    dir.cd_offset, dir.cd_size, dir.zip64 ? "zip64 end record" : "end of central directory record",
                    dir.cd_offset + dir.cd_size, dir.zip64 ? "zip64 end record" : "end of central directory record",
                    cd_end_expected));
  }
  if (count > max_members) {
    throw bad_input(
        fmt::format("{} members, more than the limit of {} (raise it with --max-members)", count, max_members));
  }
  // A central header is at least 46 bytes: a count the directory cannot hold is caught before allocating.
  dir.entries.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(count, dir.cd_size / k_zc_central_len)));
  const char* says = dir.zip64 ? "the zip64 end record" : "the end of central directory record";
  std::vector<std::byte> piece;
  std::uint64_t piece_at = dir.cd_offset;
  std::uint64_t at = dir.cd_offset;
  const std::uint64_t cd_end = dir.cd_offset + dir.cd_size;
  // The bytes [at, at + n) of the central directory, read in pieces of 1 MiB (an entry is at most 192 KiB).
  auto view = [&](std::uint64_t n) -> std::span<const std::byte> {
    if (at < piece_at || at + n > piece_at + piece.size()) {
      piece_at = at;
      piece = zc_read(
          file, at,
          static_cast<std::size_t>(std::min<std::uint64_t>(cd_end - at, std::max<std::uint64_t>(n, k_zc_piece))));
    }
    return std::span<const std::byte>(piece).subspan(static_cast<std::size_t>(at - piece_at),
                                                     static_cast<std::size_t>(n));
  };
  while (at < cd_end) {
    if (dir.entries.size() == count) {
      throw bad_input(fmt::format("{} says {} members, but the central directory holds more ({} bytes after the {}th)",
                                  says, count, cd_end - at, count));
    }
    const std::size_t index = dir.entries.size();
    if (cd_end - at < k_zc_central_len || zc_le(view(4), 0, 4) != k_zc_central) {
      throw bad_input(
          fmt::format("{} says {} members, but the central directory holds {} (no central header at offset {})", says,
                      count, index, at));
    }
    auto h = view(k_zc_central_len);
    const std::uint64_t name_len = zc_le(h, 28, 2), extra_len = zc_le(h, 30, 2), comment_len = zc_le(h, 32, 2);
    const std::uint64_t whole = k_zc_central_len + name_len + extra_len + comment_len;
    if (whole > cd_end - at) {
      throw bad_input(
          fmt::format("the central header of member #{} runs past the end of the central directory", index));
    }
    const auto b = view(whole);
    CentralEntry c;
    c.flags = static_cast<std::uint16_t>(zc_le(b, 8, 2));
    c.method = static_cast<std::uint16_t>(zc_le(b, 10, 2));
    c.crc = static_cast<std::uint32_t>(zc_le(b, 16, 4));
    c.compressed_size = zc_le(b, 20, 4);
    c.size = zc_le(b, 24, 4);
    c.local_offset = zc_le(b, 42, 4);
    c.extra_length = static_cast<std::uint16_t>(extra_len);
    c.name.assign(reinterpret_cast<const char*>(b.data()) + k_zc_central_len, static_cast<std::size_t>(name_len));
    const bool disk_max = zc_le(b, 34, 2) == 0xFFFF;
    if (c.size == k_zc_max32 || c.compressed_size == k_zc_max32 || c.local_offset == k_zc_max32 || disk_max) {
      const auto values = zc_zip64_values(
          b.subspan(static_cast<std::size_t>(k_zc_central_len + name_len), static_cast<std::size_t>(extra_len)));
      std::size_t next = 0;
      auto take = [&](std::uint64_t& field, const char* what) {
        if (field != k_zc_max32) return;
        if (!values || next >= values->size()) {
          throw bad_input(
              fmt::format("member {}: its central header says {} 0xFFFFFFFF (in the zip64 extra field), but "
                          "{}",
                          zc_name(c, index), what,
                          values ? "its zip64 extra field is too short to hold it" : "it has no zip64 extra field"));
        }
        field = (*values)[next++];
      };
      take(c.size, "size");
      take(c.compressed_size, "compressed size");
      take(c.local_offset, "local header offset");
    } else if (zc_le(b, 34, 2) != 0) {
      throw bad_input(fmt::format("member {}: its central header names another disk: a split archive, not a wheel",
                                  zc_name(c, index)));
    }
    dir.entries.push_back(std::move(c));
    at += whole;
  }
  if (dir.entries.size() != count) {
    throw bad_input(
        fmt::format("{} says {} members, but the central directory holds {}", says, count, dir.entries.size()));
  }
  return dir;
}

std::optional<std::string> check_local_header(const RandomAccess& file, const ZipDirectory& dir, const CentralEntry& e,
                                              MemberSpan* span) {
  if (e.local_offset > dir.cd_offset || dir.cd_offset - e.local_offset < k_zc_local_len) {
    return fmt::format(
        "the central directory says its local header lies at offset {}, at or past the central "
        "directory (offset {})",
        e.local_offset, dir.cd_offset);
  }
  // One read for the header, its name and extra field as the central directory's suggest (most agree).
  auto h = zc_read(file, e.local_offset,
                   static_cast<std::size_t>(std::min<std::uint64_t>(
                       k_zc_local_len + e.name.size() + e.extra_length + 32, dir.cd_offset - e.local_offset)));
  if (zc_le(h, 0, 4) != k_zc_local) {
    return fmt::format("no local header at offset {}, where the central directory says it lies (found {})",
                       e.local_offset, zc_hex(zc_le(h, 0, 4)));
  }
  const std::uint64_t name_len = zc_le(h, 26, 2), extra_len = zc_le(h, 28, 2);
  const std::uint64_t data = e.local_offset + k_zc_local_len + name_len + extra_len;
  if (data > dir.cd_offset) {
    return fmt::format("its local header (offset {}, {} bytes) runs into the central directory at offset {}",
                       e.local_offset, data - e.local_offset, dir.cd_offset);
  }
  if (h.size() < data - e.local_offset)
    h = zc_read(file, e.local_offset, static_cast<std::size_t>(data - e.local_offset));
  const auto rest =
      std::span<const std::byte>(h).subspan(k_zc_local_len, static_cast<std::size_t>(name_len + extra_len));
  const std::string name(reinterpret_cast<const char*>(rest.data()), static_cast<std::size_t>(name_len));
  if (name != e.name) return fmt::format("its local header names it '{}', the central directory '{}'", name, e.name);
  const std::uint64_t flags = zc_le(h, 6, 2), method = zc_le(h, 8, 2);
  if (method != e.method) {
    return fmt::format("its local header says compression method {}, the central directory {}", method, e.method);
  }
  if ((flags & 1U) != (e.flags & 1U)) {
    return fmt::format("its local header says {}, the central directory {}",
                       (flags & 1U) ? "encrypted" : "not encrypted", (e.flags & 1U) ? "encrypted" : "not encrypted");
  }
  std::uint64_t crc = zc_le(h, 14, 4), compressed = zc_le(h, 18, 4), size = zc_le(h, 22, 4);
  const auto values = zc_zip64_values(rest.subspan(static_cast<std::size_t>(name_len)));
  const char* where = "its local header";
  if (size == k_zc_max32 || compressed == k_zc_max32) {
    // APPNOTE 4.5.3: a local header's zip64 field holds both sizes, the uncompressed first.
    if (!values || values->size() < (compressed == k_zc_max32 ? 2U : 1U)) {
      return fmt::format("its local header says size 0xFFFFFFFF (in the zip64 extra field), but {}",
                         values ? "its zip64 extra field is too short to hold it" : "it has no zip64 extra field");
    }
    if (size == k_zc_max32) size = (*values)[0];
    if (compressed == k_zc_max32) compressed = (*values)[1];
    where = "its local header (zip64 extra field)";
  }
  const std::uint64_t data_end = data + e.compressed_size;
  std::uint64_t end = data_end;
  if (e.compressed_size > dir.cd_offset - data) {
    return fmt::format("its data (offset {}, {} bytes) runs into the central directory at offset {}", data,
                       e.compressed_size, dir.cd_offset);
  }
  if (flags & 8U) {
    // The sizes follow the data in a data descriptor: the local header's own may be zeros (else they count).
    const bool wide = values.has_value() || e.size >= k_zc_max32 || e.compressed_size >= k_zc_max32;
    const std::size_t len = wide ? 24 : 16;
    const auto d =
        zc_read(file, data_end, static_cast<std::size_t>(std::min<std::uint64_t>(len, dir.cd_offset - data_end)));
    const std::size_t skip = d.size() >= 4 && zc_le(d, 0, 4) == k_zc_descriptor ? 4 : 0;
    const std::size_t field = wide ? 8 : 4;
    if (d.size() < skip + 4 + 2 * field) {
      return fmt::format("its data descriptor (after its data, at offset {}) runs into the central directory",
                         data_end);
    }
    end = data_end + skip + 4 + 2 * field;
    if (crc == 0 && compressed == 0 && size == 0) {
      crc = zc_le(d, skip, 4);
      compressed = zc_le(d, skip + 4, static_cast<int>(field));
      size = zc_le(d, skip + 4 + field, static_cast<int>(field));
      where = "its data descriptor";
    }
  }
  if (span) *span = {e.local_offset, data, end};
  if (size != e.size) return fmt::format("{} says size {}, the central directory {}", where, size, e.size);
  if (compressed != e.compressed_size) {
    return fmt::format("{} says compressed size {}, the central directory {}", where, compressed, e.compressed_size);
  }
  if (crc != e.crc)
    return fmt::format("{} says CRC-32 {}, the central directory {}", where, zc_hex(crc), zc_hex(e.crc));
  return std::nullopt;
}

std::vector<std::pair<std::size_t, Problem>> check_local_headers(const RandomAccess& file, const ZipDirectory& dir,
                                                                 const std::vector<std::string>& display_names) {
  std::vector<std::pair<std::size_t, Problem>> out;
  std::vector<bool> bad(dir.entries.size(), false);
  std::vector<std::pair<MemberSpan, std::size_t>> spans;
  spans.reserve(dir.entries.size());
  for (std::size_t i = 0; i < dir.entries.size(); ++i) {
    MemberSpan span;
    span.begin = span.data = span.end = k_zc_max32;
    if (auto why = check_local_header(file, dir, dir.entries[i], &span)) {
      out.emplace_back(i, Problem{"header-mismatch", display_names.at(i), *why});
      bad[i] = true;
    }
    if (span.begin != k_zc_max32 || span.end != k_zc_max32) spans.emplace_back(span, i);
  }
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
  // Each member against the one before it that reaches furthest: members in offset order must not overlap.
  std::size_t reach = 0;
  for (std::size_t k = 1; k < spans.size(); ++k) {
    const auto& [cur, c] = spans[k];
    const auto& [prev, p] = spans[reach];
    if (cur.begin < prev.end && !bad[c]) {
      bad[c] = true;
      out.emplace_back(
          c,
          Problem{"overlapping-members", display_names.at(c),
                  fmt::format("its bytes (offset {} to {}) overlap those of member {} (offset {} to {}): two members "
                              "share bytes (a zip bomb of overlapping members, or a damaged archive)",
                              cur.begin, cur.end, display_names.at(p), prev.begin, prev.end)});
    }
    if (cur.end > spans[reach].first.end) reach = k;
  }
  return out;
}

}  // namespace wheelcheck::wheel
