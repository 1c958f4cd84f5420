// Internal helpers shared by the two ELF readers: bounds-checked, endian-aware field access and the
// GNU property note decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::elf::detail {

// Checked a + b (never wraps): throws Error(BadInput) with `what` on overflow.
std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what);
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what);

// Reads fixed-width fields from a span in the file's byte order, every read bounds checked.
class FieldReader {
 public:
  FieldReader(std::span<const std::byte> bytes, Endian endian, Class cls, const char* what)
      : m_bytes(bytes), m_endian(endian), m_class(cls), m_what(what) {}
  std::uint8_t u8(std::uint64_t off) const;
  std::uint16_t u16(std::uint64_t off) const;
  std::uint32_t u32(std::uint64_t off) const;
  std::uint64_t u64(std::uint64_t off) const;
  std::uint64_t word(std::uint64_t off) const { return m_class == Class::Elf64 ? u64(off) : u32(off); }
  std::int64_t sword(std::uint64_t off) const;
  std::uint64_t size() const { return m_bytes.size(); }
  std::span<const std::byte> bytes() const { return m_bytes; }

 private:
  void check(std::uint64_t off, std::uint64_t len) const;
  std::span<const std::byte> m_bytes;
  Endian m_endian;
  Class m_class;
  const char* m_what;
};

// The x86 ISA level (1..4) from the descriptor of an NT_GNU_PROPERTY_TYPE_0 note, if it names one.
std::optional<int> x86_isa_level_from_property(std::span<const std::byte> desc, Endian endian, Class cls);
// Walks a note segment or section and applies the decoder above to every GNU property note.
std::optional<int> x86_isa_level_from_notes(std::span<const std::byte> notes, Endian endian, Class cls);

// A NUL-terminated string at `off` inside a string table; throws when unterminated or out of range.
std::string string_at(std::span<const std::byte> table, std::uint64_t off, const char* table_name);

std::vector<std::string> split_path_list(const std::string& s);

}  // namespace wheelcheck::elf::detail
