// wheelcheck's ELF model: one struct per ELF concept, named as the ELF specification (and `readelf -d`,
// `readelf -V`, `readelf --dyn-syms`) names it. Two readers fill it: the fast streaming scanner
// (inspector/elf/scanner.cpp, with a file per ELF concept beside it) and LIEF (inspector/elf/lief_reader.cpp),
// the reference.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelcheck/bytes.hpp"

namespace wheelcheck::elf {

enum class Class : std::uint8_t { Elf32 = 1, Elf64 = 2 };
enum class Endian : std::uint8_t { Little = 1, Big = 2 };

// e_type, as LIEF's E_TYPE. A value the gABI does not name here (ET_LOOS..ET_HIPROC) is kept as it is:
// type_name() writes it as a number.
enum class FileType : std::uint16_t { None = 0, Relocatable = 1, Executable = 2, Shared = 3, Core = 4 };

// st_info's binding and type, st_other's visibility: the values of the ELF gABI.
enum class Binding : std::uint8_t { Local = 0, Global = 1, Weak = 2, GnuUnique = 10, Other = 255 };
enum class SymbolType : std::uint8_t {
  NoType = 0,
  Object = 1,
  Func = 2,
  Section = 3,
  File = 4,
  Common = 5,
  Tls = 6,
  GnuIfunc = 10,
  Other = 255
};
enum class Visibility : std::uint8_t { Default = 0, Internal = 1, Hidden = 2, Protected = 3 };

// One dynamic symbol (.dynsym), with its version from .gnu.version and .gnu.version_r/.gnu.version_d.
struct Symbol {
  std::string name;
  Binding binding = Binding::Global;
  SymbolType type = SymbolType::NoType;
  Visibility visibility = Visibility::Default;
  bool defined = false;         // st_shndx != SHN_UNDEF
  std::string version;          // "GLIBC_2.14"; empty when unversioned (index 0 or 1)
  bool version_hidden = false;  // the 0x8000 bit: a non-default version (foo@V rather than foo@@V)
  std::string version_file;     // for an undefined versioned symbol: the library it is required from
  std::uint64_t value = 0;
  std::uint64_t size = 0;
  // A program's data symbol under an R_*_COPY relocation: defined in the program's .dynsym, yet the
  // loader looks it up in the libraries (it fails to start when none defines it).
  bool copy_relocated = false;

  bool weak() const { return binding == Binding::Weak; }
  bool exported() const {
    return defined && binding != Binding::Local &&
           (visibility == Visibility::Default || visibility == Visibility::Protected);
  }
  bool operator==(const Symbol&) const = default;
};

// .gnu.version_r: "File: libc.so.6  Cnt: 2" with its auxiliary entries.
struct VersionNeedAux {
  std::string name;  // GLIBC_2.14
  std::uint32_t hash = 0;
  std::uint16_t flags = 0;  // VER_FLG_WEAK = 2
  std::uint16_t other = 0;  // the version index symbols use
  bool operator==(const VersionNeedAux&) const = default;
};
struct VersionNeed {
  std::string file;  // libc.so.6
  std::vector<VersionNeedAux> versions;
  bool operator==(const VersionNeed&) const = default;
};

// .gnu.version_d: "Rev: 1  Flags: BASE  Index: 1  Cnt: 1  Name: libfoo.so.1"
struct VersionDefinition {
  std::uint16_t index = 0;
  std::uint16_t flags = 0;  // VER_FLG_BASE = 1
  std::uint32_t hash = 0;
  std::string name;
  std::vector<std::string> parents;  // further auxiliary names
  bool base() const { return (flags & 1) != 0; }
  bool operator==(const VersionDefinition&) const = default;
};

// NT_GNU_ABI_TAG (.note.ABI-tag; `readelf -n`: "OS: Linux, ABI: 3.2.0"): the OS and the oldest kernel
// the file's C library was configured for (glibc's --enable-kernel). It binds a statically linked file,
// which carries that C library; a dynamically linked one runs on the system's own.
struct AbiTag {
  std::uint32_t os = 0;  // 0 Linux, 1 Hurd, 2 Solaris, 3 FreeBSD
  std::uint32_t major = 0, minor = 0, patch = 0;
  std::string os_name() const;  // "Linux", as readelf writes it; "OS 7" for a value it does not name
  std::string version() const;  // "3.2.0"
  bool linux_kernel() const { return os == 0; }
  bool operator==(const AbiTag&) const = default;
};

struct Binary {
  Class elf_class = Class::Elf64;
  Endian endian = Endian::Little;
  std::uint8_t os_abi = 0;         // EI_OSABI
  FileType type = FileType::None;  // e_type
  std::uint16_t machine = 0;       // e_machine
  std::uint32_t e_flags = 0;
  std::string interpreter;  // PT_INTERP
  std::vector<std::string> needed;
  std::optional<std::string> soname;
  std::vector<std::string> rpath;    // DT_RPATH entries split at ':'
  std::vector<std::string> runpath;  // DT_RUNPATH entries split at ':'
  std::uint64_t flags = 0;           // DT_FLAGS
  std::uint64_t flags_1 = 0;         // DT_FLAGS_1
  bool has_dynamic = false;          // PT_DYNAMIC present (a static executable has none)
  // No PT_INTERP and no DT_NEEDED: it carries its C library inside it (gcc -static, -static-pie).
  bool statically_linked() const { return interpreter.empty() && needed.empty(); }
  std::vector<Symbol> symbols;  // .dynsym without the null entry at index 0
  std::vector<VersionNeed> version_needs;
  std::vector<VersionDefinition> version_definitions;
  std::optional<int> x86_isa_level;  // 1..4 from GNU_PROPERTY_X86_ISA_1_NEEDED (x86-64-v1..v4)
  std::optional<AbiTag> abi_tag;     // NT_GNU_ABI_TAG; absent without one (or with a damaged one)
  // PT_GNU_STACK's p_flags (`readelf -l`'s GNU_STACK: RW is 6, RWE 7; PF_X is 1); nullopt when the file
  // has no PT_GNU_STACK, whose meaning is the machine's default (executable_stack()).
  std::optional<std::uint32_t> gnu_stack;
  // Whether the loader makes the stack executable for this file: PF_X in PT_GNU_STACK, or no PT_GNU_STACK
  // on a machine whose glibc defaults to an executable stack (DEFAULT_STACK_PERMS; inspector/elf/names.cpp).
  bool executable_stack() const;
  bool operator==(const Binary&) const = default;
};

// Names as `readelf -h` / platform tags write them.
std::string machine_name(std::uint16_t e_machine, Class cls, Endian endian, std::uint32_t e_flags);
std::string machine_description(std::uint16_t e_machine);  // readelf's long "Machine:" text
std::string type_name(FileType type);                      // readelf's NONE, REL, EXEC, DYN, CORE
// R_<arch>_COPY for an e_machine (R_X86_64_COPY is 5), 0 when not known.
std::uint32_t copy_relocation_type(std::uint16_t e_machine);
std::string os_abi_name(std::uint8_t os_abi);
std::string binding_name(Binding b);
std::string symbol_type_name(SymbolType t);
std::vector<std::string> dt_flags_names(std::uint64_t flags);
std::vector<std::string> dt_flags_1_names(std::uint64_t flags_1);

bool has_elf_magic(const void* data, std::size_t size);

// Limits against hostile input: every count and size is checked against these before anything is
// allocated, so a malformed header cannot ask for gigabytes.
struct ReaderLimits {
  std::uint64_t max_table_bytes = std::uint64_t{512} << 20;   // any one table (.dynstr, .dynsym, ...)
  std::uint64_t speculative_prefix = std::uint64_t{8} << 20;  // kept on the first pass, see scanner.cpp
  int max_passes = 4;
};

// One section header (`readelf -S`), with its name from .shstrtab.
struct SectionHeader {
  std::optional<std::string> name;  // nullopt when the names could not be read, or this one's lies outside them
  std::uint32_t type = 0;           // sh_type
  std::uint64_t flags = 0;          // sh_flags
  std::uint64_t offset = 0;         // sh_offset
  std::uint64_t size = 0;           // sh_size
};

// Something that reads the contents of some sections along with one read of an ELF file, for a caller
// that wants them (the GPU code of CUDA fatbins: inspector/cuda/sections.cpp); the ELF readers know
// nothing of what those sections hold, and the file is still read once.
class SectionReader {
 public:
  virtual ~SectionReader() = default;
  // Whether it wants this file's section table (asked once the ELF header is read). A reader that wants
  // it makes a read with random access fetch .shstrtab when the first pass did not keep it.
  virtual bool wants(Endian endian) const = 0;
  // A member streamed whole: each chunk of the first pass, in file order (every byte goes by once).
  virtual void stream(std::uint64_t offset, std::span<const std::byte> data) = 0;
  // The section headers in table order, once the read has everything else (once per read, when wanted);
  // `names`: whether .shstrtab could be read. A read with random access gives the reader the same access.
  virtual void sections(const std::vector<SectionHeader>& headers, bool names) = 0;
};

// The streaming scanner as a push sink, so a caller that already streams the bytes (hashing a wheel
// member) feeds the same chunks to it. Usage:
//   ElfScanner s(size);  for each chunk: s.feed(chunk);  then s.finish_pass() -> Binary or nullopt;
//   on nullopt, stream the member again from offset 0 (s.wants(offset) tells what to keep) and repeat.
class ElfScanner {
 public:
  // `sections`, when given, hears the sections (SectionReader; it must outlive the scanner). `random_access`:
  // the caller feeds only what next_wanted() asks for (read_elf_random), so .shstrtab is asked for when
  // the first pass did not keep it; otherwise every byte of the file passes through feed() on the first
  // pass (a member streamed whole).
  explicit ElfScanner(std::uint64_t file_size, ReaderLimits limits = {}, SectionReader* sections = nullptr,
                      bool random_access = false);
  ~ElfScanner();
  ElfScanner(const ElfScanner&) = delete;
  ElfScanner& operator=(const ElfScanner&) = delete;

  void feed(const std::byte* data, std::size_t size);
  // True once every byte this pass needs has been seen: a caller that is not hashing may stop reading.
  bool satisfied() const;
  // Ends a pass. Returns the Binary if everything needed was captured; nullopt if another pass is needed.
  // Throws Error(BadInput) for a malformed ELF.
  std::optional<Binary> finish_pass();
  // For random access: the next range [begin, end) this pass still wants, and a jump ahead to it.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> next_wanted() const;
  void skip_to(std::uint64_t offset);
  int passes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

enum class ReaderKind { Fast, Lief };
std::string reader_name(ReaderKind kind);

// Reads a whole ELF from a source with the chosen reader (the fast one streams, LIEF loads it whole);
// `sections`, when given, hears the sections (SectionReader).
Binary read_elf(const ByteSource& source, ReaderKind kind = ReaderKind::Fast, ReaderLimits limits = {},
                SectionReader* sections = nullptr);
// A file on disk, read with pread: only the header, tables and dynamic section, never the code (what
// `sections` reads it reads through the same file).
Binary read_elf_file(const std::string& path, ReaderLimits limits = {}, SectionReader* sections = nullptr);
// The same over any random access to `size` bytes (a zip member read headers-only): `read_at` fills the
// span with the bytes at the offset; it is asked only for what the scanner wants, in increasing order
// within a pass. `sections` hears the section headers after the last pass (and reads what it wants of
// them through its own access to the same bytes).
// `hint`, when given, first hears what the section headers predict about the dynamic section (see
// predict_dynamic): a reader that cannot seek (a deflate member's middle) uses it to place what it decodes.
using ReadAt = std::function<void(std::uint64_t, std::span<std::byte>)>;
Binary read_elf_random(std::uint64_t size, const ReadAt& read_at, ReaderLimits limits = {},
                       SectionReader* sections = nullptr, const std::function<void(const ContentHint&)>& hint = {});
// The dynamic section's content as the section headers predict it (inspector/elf/predict.cpp): anchors
// at exact offsets (the GOT's first word) and the DT_* entries whose values the headers give. nullopt
// when the file has no usable section headers or nothing to predict; throws what read_at throws.
std::optional<ContentHint> predict_dynamic(std::uint64_t size, const ReadAt& read_at);
// LIEF on bytes in memory (only the LIEF path ever holds a whole member); `sections` as read_elf's.
Binary read_elf_lief(const std::vector<std::uint8_t>& bytes, const std::string& name,
                     SectionReader* sections = nullptr);

}  // namespace wheelcheck::elf
