// The accelerator side of a wheel: the GPU code an ELF member embeds (its CUDA fatbins), which GPUs
// that code runs on, and the NVIDIA driver it needs.
//
// A fatbin (`.nv_fatbin`, one container per compiled object) holds entries of two kinds: SASS (a cubin
// for one real architecture, `sm_80`, `sm_90a`, `sm_100f`) and PTX (virtual code for `compute_80`, ...,
// that the driver compiles just in time for the GPU it finds, if it knows the PTX's ISA version). Only
// the entries' headers are read, never the code (inspector/cuda/fatbin.cpp). NVIDIA's compatibility
// rules (inspector/cuda/coverage.cpp) and published tables (inspector/cuda/tables.cpp, sources cited
// there and in docs/cuda.md) turn them into coverage and a driver floor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wheelcheck/elf.hpp"

namespace wheelcheck::cuda {

// A GPU architecture as nvcc names it: major.minor compute capability and a suffix. `a` (architecture-
// specific: that exact GPU only) and `f` (family-specific: the same major, an equal or newer minor).
struct Arch {
  int major = 0;
  int minor = 0;
  char suffix = 0;  // 0, 'a' or 'f'
  int number() const { return major * 10 + minor; }
  auto operator<=>(const Arch&) const = default;
};
// "sm_90a", "compute_80", "sm_100f", "9.0", "90", "12.0": nullopt when it is none of them.
std::optional<Arch> parse_arch(std::string_view text);
std::string sm_name(const Arch& a);       // sm_90a
std::string compute_name(const Arch& a);  // compute_90a

// A PTX ISA version (the `.version` directive: 9.0 for CUDA 13.0).
struct PtxIsa {
  int major = 0;
  int minor = 0;
  auto operator<=>(const PtxIsa&) const = default;
  std::string text() const;  // "9.0"
};

// The format version a SASS entry's header states for its cubin (what cuobjdump prints as "code version"):
// 1.8 from CUDA 13's nvcc, 1.7 from CUDA 11's and 12's (docs/cuda.md).
struct CubinFormat {
  int major = 0;
  int minor = 0;
  auto operator<=>(const CubinFormat&) const = default;
  std::string text() const;  // "1.8"
};

enum class CodeKind { Sass, Ptx };
std::string kind_name(CodeKind kind);  // "sass", "ptx"

// Entries alike in kind, architecture, compression and PTX ISA, counted (libcublasLt.so.13 has
// thousands of entries, a handful of distinct ones).
struct Variant {
  CodeKind kind = CodeKind::Sass;
  Arch arch;
  bool compressed = false;
  std::optional<PtxIsa> ptx_isa;  // PTX entries: the ISA version the entry's header states
  std::uint64_t entries = 0;
  bool operator==(const Variant&) const = default;
};

// What one ELF member's fatbins hold. Absent (no value in MemberProfile::cuda) for a member without any.
struct Fatbins {
  std::uint64_t containers = 0;
  std::uint64_t entries = 0;
  std::vector<Variant> variants;  // sorted: kind, then arch, then compression, then PTX ISA
  // Why the entries could not be read, when they could not ("" when read): a headers-only read of a
  // deflated member (its fatbin lies in the middle), or a container whose headers do not hold together.
  std::string unread;
  std::uint64_t section_size = 0;  // bytes of .nv_fatbin (0: the member has none)
  // GPU code outside .nv_fatbin, which the library loads itself (cuModuleLoadData on its own data): the
  // kernels of cuFFT in .ldata, of cuBLASLt and cuDNN in .cask_resource. Its variants are in `variants`
  // with .nv_fatbin's (a member serves the GPUs any of its code serves); `containers` and `entries` count
  // .nv_fatbin's alone. __nv_relfatbin (input to a later device link, never loaded) is not read.
  std::uint64_t embedded_containers = 0;
  std::uint64_t embedded_entries = 0;
  std::vector<std::string> embedded_sections;  // the sections that hold them, in file order
  // The newest cubin format among its SASS entries, all of its GPU code counted (nullopt without SASS):
  // which toolkit major built them (cubin_toolkit_major), so which driver their runtime needs.
  std::optional<CubinFormat> newest_cubin;
  // Why the other sections were not looked through ("" when they were): a headers-only read.
  std::string embedded_unread;
  bool operator==(const Fatbins&) const = default;

  std::vector<Arch> sass() const;                // distinct, ascending
  std::vector<Arch> ptx() const;                 // distinct, ascending
  std::optional<PtxIsa> newest_ptx_isa() const;  // the newest ISA of its PTX entries
};

// A section of an ELF file by name and file range (where GPU code may lie).
struct SectionSpan {
  std::string name;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  bool operator==(const SectionSpan&) const = default;
};

// --- NVIDIA's compatibility rules (inspector/cuda/coverage.cpp) --------------------------------------

// SASS for `sass` runs on `gpu`: the same major and an equal or newer minor; `a`: that exact GPU only;
// `f`: the family (the same major, an equal or newer minor).
bool sass_runs_on(const Arch& sass, const Arch& gpu);
// PTX for `ptx` can be JIT-compiled for `gpu`: any GPU at or above its compute capability; `a`: that
// exact GPU only; `f`: the family only.
bool ptx_jits_for(const Arch& ptx, const Arch& gpu);

// How a member's fatbins serve one GPU.
struct GpuCoverage {
  Arch gpu;
  bool runs = false;              // SASS runs on it, or PTX can be JIT-compiled for it
  bool needs_jit = false;         // runs only through PTX, JIT-compiled by the driver
  std::optional<Arch> by;         // the entry that serves it: the best SASS, else the newest usable PTX
  std::optional<PtxIsa> ptx_isa;  // that PTX's ISA version, when it is PTX
  std::string explanation;        // one sentence for people: what serves it, or what the member carries
};
GpuCoverage coverage(const Fatbins& fatbins, const Arch& gpu);
// The GPUs a member's code runs on, in words, for an image whose GPUs are unknown: "sm_80-sm_89 (SASS
// sm_80, sm_86), sm_90a only (SASS sm_90a), or any GPU newer than sm_80 through PTX JIT (compute_80)".
std::string runs_on_text(const Fatbins& fatbins);

// --- NVIDIA's published tables (inspector/cuda/tables.cpp; every number cites its source there and in
// docs/cuda.md) ----------------------------------------------------------------------------------------

// The Linux x86_64 driver a toolkit's GA release needs ("CUDA Toolkit and Corresponding Driver
// Versions"): 13.0 -> 580.65.06. nullopt for a release the table does not list.
std::optional<std::string> toolkit_driver(int major, int minor);
// The driver floor of a major's minor version compatibility (every X.y runtime runs on it, without PTX
// JIT of newer PTX): 12 -> 525.60.13, 13 -> 580.65.06.
std::optional<std::string> major_driver(int major);
// The first toolkit whose compiler emits (and whose driver JIT-compiles) a PTX ISA version: 9.0 -> 13.0.
std::optional<std::pair<int, int>> ptx_isa_toolkit(const PtxIsa& isa);
// The toolkit major whose nvcc writes a cubin format, where only one does: 1.8 -> 13 (CUDA 11 and 12 both
// write 1.7, which names no single major). nullopt otherwise.
std::optional<int> cubin_toolkit_major(const CubinFormat& format);
// The oldest GPU architecture a toolkit major still compiles for and ships libraries for (CUDA 13:
// sm_75; CUDA 12: sm_50). nullopt when not known.
std::optional<Arch> oldest_supported_arch(int toolkit_major);
// Driver versions compared field by field ("580.65.06" >= "580.65"): have >= need.
bool driver_at_least(std::string_view have, std::string_view need);

// Reads the fatbin containers of a `.nv_fatbin` section (or any run of containers) from its bytes:
// entries' headers only. A container whose headers do not hold together leaves `unread` saying where
// (a member's GPU code is beside the point of whether it loads, so this never throws).
Fatbins read_fatbins(std::span<const std::byte> section);

// --- The GPU code of an ELF file, read along with it (inspector/cuda/sections.cpp) ---------------------

// The ELF readers' SectionReader for the GPU code: the `.nv_fatbin` section's containers and those in the
// sections that may hold GPU code the library loads itself. The file is read once: the containers as a
// member streams by, or header by header through the random access the ELF read uses.
//
// Streamed, the section headers (which say where `.nv_fatbin` lies) are the last bytes of the file, so a
// seeking walk over the whole first pass finds containers by their magic and skips their payloads; once
// the headers are known, those inside `.nv_fatbin` are kept. Without the section names (an unusual
// layout), the section that holds the first container is taken for `.nv_fatbin`. `__nv_relfatbin`
// (relocatable device code kept for a later device link) is never read: the runtime loads what
// `.nv_fatbin` holds. NVIDIA's GPU code ships in little-endian files only.
class CodeReader final : public elf::SectionReader {
 public:
  // A member streamed whole (ElfScanner, read_elf with the fast reader): every byte of its first pass.
  explicit CodeReader(std::uint64_t file_size);
  // Random access to `file_size` bytes (read_elf_random, read_elf_file): the fatbin's entries header by
  // header through `read_at`, unless `skip_fatbins` says why not (a deflated member read headers-only: its
  // fatbin lies where only a full inflate reaches); the fatbins then name the section and give that
  // reason. The other sections are looked through (every byte between containers) unless
  // `skip_loaded_code` says why not (a headers-only read, which fetches no data sections); `embedded_unread`
  // then gives that reason.
  CodeReader(std::uint64_t file_size, elf::ReadAt read_at, std::string skip_fatbins = {},
             std::string skip_loaded_code = {});
  // The whole file in memory (the LIEF reader's copy), read with the LIEF reader.
  explicit CodeReader(std::span<const std::byte> whole);
  ~CodeReader() override;
  CodeReader(const CodeReader&) = delete;
  CodeReader& operator=(const CodeReader&) = delete;

  bool wants(elf::Endian endian) const override;
  void stream(std::uint64_t offset, std::span<const std::byte> data) override;
  void sections(const std::vector<elf::SectionHeader>& headers, bool names) override;

  // What the file's fatbins hold, once the read is done; nullopt without any (or before).
  const std::optional<Fatbins>& fatbins() const;

 private:
  struct State;
  std::unique_ptr<State> m;
};

// A file on disk read as elf::read_elf_file reads it, with its GPU code.
struct FileCode {
  elf::Binary binary;
  std::optional<Fatbins> fatbins;
};
FileCode read_file(const std::string& path, elf::ReaderLimits limits = {});

}  // namespace wheelcheck::cuda
