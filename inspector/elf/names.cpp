// Names of ELF values as people read them: the short architecture names of platform tags (what
// auditwheel and `uname -m` say) and readelf's own long descriptions.
#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>

#include "wheelcheck/elf.hpp"

namespace wheelcheck::elf {

namespace {
constexpr std::uint16_t EM_386 = 3, EM_68K = 4, EM_MIPS = 8, EM_PARISC = 15, EM_PPC = 20, EM_PPC64 = 21, EM_S390 = 22,
                        EM_ARM = 40, EM_SH = 42, EM_SPARCV9 = 43, EM_IA_64 = 50, EM_X86_64 = 62, EM_AARCH64 = 183,
                        EM_RISCV = 243, EM_LOONGARCH = 258, EM_SPARC = 2, EM_ALPHA = 0x9026;
constexpr std::uint32_t EF_ARM_ABI_FLOAT_HARD = 0x400;
}  // namespace

std::string machine_name(std::uint16_t m, Class cls, Endian endian, std::uint32_t e_flags) {
  const bool b64 = cls == Class::Elf64;
  const bool le = endian == Endian::Little;
  switch (m) {
    case EM_X86_64: return b64 ? "x86_64" : "x32";
    case EM_386: return "i686";
    case EM_AARCH64: return le ? "aarch64" : "aarch64_be";
    // e_machine cannot tell armv6 from armv7: name the ABI, as Debian does (armv6l/armv7l wheels are armhf).
    case EM_ARM: return (e_flags & EF_ARM_ABI_FLOAT_HARD) != 0 ? "armhf" : "armel";
    case EM_PPC64: return le ? "ppc64le" : "ppc64";
    case EM_PPC: return "ppc";
    case EM_S390: return b64 ? "s390x" : "s390";
    case EM_RISCV: return b64 ? "riscv64" : "riscv32";
    case EM_MIPS: return std::string(b64 ? "mips64" : "mips") + (le ? "el" : "");
    case EM_LOONGARCH: return b64 ? "loongarch64" : "loongarch32";
    case EM_SPARCV9: return "sparc64";
    case EM_SPARC: return "sparc";
    case EM_IA_64: return "ia64";
    case EM_PARISC: return "parisc";
    case EM_68K: return "m68k";
    case EM_SH: return "sh4";
    case EM_ALPHA: return "alpha";
    default: return "em_" + std::to_string(m);
  }
}

std::string machine_description(std::uint16_t m) {
  switch (m) {
    case EM_X86_64: return "Advanced Micro Devices X86-64";
    case EM_386: return "Intel 80386";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM";
    case EM_PPC64: return "PowerPC64";
    case EM_PPC: return "PowerPC";
    case EM_S390: return "IBM S/390";
    case EM_RISCV: return "RISC-V";
    case EM_MIPS: return "MIPS R3000";
    case EM_LOONGARCH: return "LoongArch";
    case EM_SPARCV9: return "Sparc v9";
    case EM_SPARC: return "Sparc";
    case EM_IA_64: return "Intel IA-64";
    case EM_PARISC: return "HPPA";
    case EM_68K: return "MC68000";
    case EM_SH: return "Renesas / SuperH SH";
    case EM_ALPHA: return "Alpha";
    default:
      return "<unknown>: 0x" + [m] {
        char buf[8];
        std::snprintf(buf, sizeof buf, "%x", m);
        return std::string(buf);
      }();
  }
}

std::string type_name(FileType t) {
  switch (t) {
    case FileType::None: return "NONE";
    case FileType::Relocatable: return "REL";
    case FileType::Executable: return "EXEC";
    case FileType::Shared: return "DYN";
    case FileType::Core: return "CORE";
  }
  // Any other value: "0x" and the number in decimal, as profiles have always written it.
  return "0x" + std::to_string(static_cast<std::uint16_t>(t));
}

std::string os_abi_name(std::uint8_t a) {
  switch (a) {
    case 0: return "UNIX - System V";
    case 3: return "UNIX - GNU";
    case 6: return "UNIX - Solaris";
    case 9: return "UNIX - FreeBSD";
    case 97: return "ARM";
    case 255: return "Standalone App";
    default: return "<unknown: " + std::to_string(a) + ">";
  }
}

std::string binding_name(Binding b) {
  switch (b) {
    case Binding::Local: return "LOCAL";
    case Binding::Global: return "GLOBAL";
    case Binding::Weak: return "WEAK";
    case Binding::GnuUnique: return "UNIQUE";
    default: return "OTHER";
  }
}

std::string symbol_type_name(SymbolType t) {
  switch (t) {
    case SymbolType::NoType: return "NOTYPE";
    case SymbolType::Object: return "OBJECT";
    case SymbolType::Func: return "FUNC";
    case SymbolType::Section: return "SECTION";
    case SymbolType::File: return "FILE";
    case SymbolType::Common: return "COMMON";
    case SymbolType::Tls: return "TLS";
    case SymbolType::GnuIfunc: return "IFUNC";
    default: return "OTHER";
  }
}

namespace {
std::vector<std::string> bits(std::uint64_t value, std::initializer_list<std::pair<std::uint64_t, const char*>> names) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : names) {
    if (value & bit) {
      out.emplace_back(name);
      value &= ~bit;
    }
  }
  for (int i = 0; i < 64; ++i) {
    if (value & (std::uint64_t{1} << i)) out.push_back("0x" + std::to_string(std::uint64_t{1} << i));
  }
  return out;
}
}  // namespace

std::vector<std::string> dt_flags_names(std::uint64_t f) {
  return bits(f, {{0x1, "ORIGIN"}, {0x2, "SYMBOLIC"}, {0x4, "TEXTREL"}, {0x8, "BIND_NOW"}, {0x10, "STATIC_TLS"}});
}

std::vector<std::string> dt_flags_1_names(std::uint64_t f) {
  return bits(f, {{0x1, "NOW"},
                  {0x2, "GLOBAL"},
                  {0x4, "GROUP"},
                  {0x8, "NODELETE"},
                  {0x10, "LOADFLTR"},
                  {0x20, "INITFIRST"},
                  {0x40, "NOOPEN"},
                  {0x80, "ORIGIN"},
                  {0x100, "DIRECT"},
                  {0x200, "TRANS"},
                  {0x400, "INTERPOSE"},
                  {0x800, "NODEFLIB"},
                  {0x1000, "NODUMP"},
                  {0x2000, "CONFALT"},
                  {0x4000, "ENDFILTEE"},
                  {0x8000, "DISPRELDNE"},
                  {0x10000, "DISPRELPND"},
                  {0x20000, "NODIRECT"},
                  {0x40000, "IGNMULDEF"},
                  {0x80000, "NOKSYMS"},
                  {0x100000, "NOHDR"},
                  {0x200000, "EDITED"},
                  {0x400000, "NORELOC"},
                  {0x800000, "SYMINTPOSE"},
                  {0x1000000, "GLOBAUDIT"},
                  {0x2000000, "SINGLETON"},
                  {0x4000000, "STUB"},
                  {0x8000000, "PIE"}});
}

std::uint32_t copy_relocation_type(std::uint16_t e_machine) {
  switch (e_machine) {
    case 62: return 5;      // R_X86_64_COPY
    case 3: return 5;       // R_386_COPY
    case 183: return 1024;  // R_AARCH64_COPY
    case 21: return 19;     // R_PPC64_COPY
    case 20: return 19;     // R_PPC_COPY
    case 22: return 9;      // R_390_COPY
    case 40: return 20;     // R_ARM_COPY
    case 243: return 4;     // R_RISCV_COPY
    case 258: return 4;     // R_LARCH_COPY
    default: return 0;
  }
}

// glibc's _dl_map_object_from_fd starts from DEFAULT_STACK_PERMS and takes PT_GNU_STACK's p_flags when the
// file has one. DEFAULT_STACK_PERMS (sysdeps/*/stackinfo.h) holds PF_X on x86_64 and most machines, not on
// AArch64 ("Default to a non-executable stack"); tests/loader/execstack.py checks both with the real loaders.
bool Binary::executable_stack() const {
  constexpr std::uint32_t k_pf_x = 1;
  if (gnu_stack) return (*gnu_stack & k_pf_x) != 0;
  return machine != EM_AARCH64;
}

}  // namespace wheelcheck::elf
