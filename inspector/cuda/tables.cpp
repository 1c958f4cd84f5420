// NVIDIA's published tables, as numbers: the driver each CUDA toolkit release needs, the driver floor of
// each major's minor version compatibility, the first toolkit of each PTX ISA version, and the oldest GPU
// architecture each toolkit major still builds for.
//
// Every number below names the table it was read from. Where no source states a number, the table leaves
// it out (the function answers nullopt) and docs/cuda.md says it is not published; nothing here is
// interpolated from neighbouring rows.
#include <array>

#include "wheelcheck/cuda.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cuda {

namespace {

struct ToolkitDriver {
  int major;
  int minor;
  const char* driver;
};

// "CUDA Toolkit and Corresponding Driver Versions" (Table 3 of the CUDA Toolkit Release Notes), the Linux
// x86_64 column, the GA row of each release (an Update row may ask for more; a GA row is what a release's
// first runtime needs). Read from the CUDA 13.2 Update 2 notes, which carry every row from 7.0 to 13.2:
//   https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html (Table 3)
// CUDA 11.0's GA is the row "CUDA 11.0.2 GA" (11.0.1 was an RC). There is no 12.7 row: CUDA 12.7 was
// never released.
// CUDA 13.3 GA (610.43.02): the CUDA 13.3 and 13.3 Update 1 notes, Table 3, as quoted by users of those
// notes (https://docs.nvidia.com/cuda/archive/13.3.0/cuda-toolkit-release-notes/index.html; the copy of
// the page itself did not reach the table).
// CUDA 13.4 and 13.5: from 13.4 on the Linux driver is no longer bundled with the toolkit (the 13.4
// Developer Preview notes, as quoted: "the Linux driver is no longer bundled ... install the separately-
// released NVIDIA Developer Driver (R616, >=616.00)"), and no Table 3 GA row for 13.4 or 13.5 was found:
// not listed here.
constexpr std::array k_toolkit_drivers{
    ToolkitDriver{11, 0, "450.51.05"},  // CUDA 11.0.2 GA
    ToolkitDriver{11, 1, "455.23"},     // CUDA 11.1 GA
    ToolkitDriver{11, 2, "460.27.03"},  // CUDA 11.2.0 GA
    ToolkitDriver{11, 3, "465.19.01"},  // CUDA 11.3.0 GA
    ToolkitDriver{11, 4, "470.42.01"},  // CUDA 11.4.0 GA
    ToolkitDriver{11, 5, "495.29.05"},  // CUDA 11.5 GA
    ToolkitDriver{11, 6, "510.39.01"},  // CUDA 11.6 GA
    ToolkitDriver{11, 7, "515.43.04"},  // CUDA 11.7 GA
    ToolkitDriver{11, 8, "520.61.05"},  // CUDA 11.8 GA
    ToolkitDriver{12, 0, "525.60.13"},  // CUDA 12.0 GA
    ToolkitDriver{12, 1, "530.30.02"},  // CUDA 12.1 GA
    ToolkitDriver{12, 2, "535.54.03"},  // CUDA 12.2 GA
    ToolkitDriver{12, 3, "545.23.06"},  // CUDA 12.3 GA
    ToolkitDriver{12, 4, "550.54.14"},  // CUDA 12.4 GA
    ToolkitDriver{12, 5, "555.42.02"},  // CUDA 12.5 GA
    ToolkitDriver{12, 6, "560.28.03"},  // CUDA 12.6 GA
    ToolkitDriver{12, 8, "570.26"},     // CUDA 12.8 GA
    ToolkitDriver{12, 9, "575.51.03"},  // CUDA 12.9 GA
    ToolkitDriver{13, 0, "580.65.06"},  // CUDA 13.0 GA
    ToolkitDriver{13, 1, "590.44.01"},  // CUDA 13.1 GA
    ToolkitDriver{13, 2, "595.45.04"},  // CUDA 13.2 GA
    ToolkitDriver{13, 3, "610.43.02"},  // CUDA 13.3 GA (13.3 notes, Table 3; see above)
};

struct MajorDriver {
  int major;
  const char* driver;
};

// The driver floor of minor version compatibility ("CUDA Toolkit and Minimum Required Driver Version for
// CUDA Minor Version Compatibility", Table 2 of the CUDA Toolkit Release Notes; Table 1 of the CUDA
// Compatibility guide, https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html).
constexpr std::array k_major_drivers{
    // 11.x: ">= 450" with the footnote "by upgrading to Tesla Recommended Drivers 450.80.02 (Linux) ...
    // minor version compatibility is possible across the CUDA 11.x family" (CUDA 13.2 Update 2 notes,
    // Table 2 and its footnote ***; the CUDA 12.x notes printed "CUDA 11.x >= 450.80.02*").
    MajorDriver{11, "450.80.02"},
    // 12.x: "CUDA 12.x >=525.60.13" in Table 2 of the CUDA 12.x release notes and in the compatibility
    // guide of that time (read from copies of those tables that cite
    // https://docs.nvidia.com/deploy/cuda-compatibility/); the current notes print ">= 525".
    MajorDriver{12, "525.60.13"},
    // 13.x: the notes and the guide print ">= 580" (no finer number). The earliest driver any CUDA 13
    // release names is 580.65.06 (CUDA 13.0 GA, Table 3), so the floor is stated as that driver.
    MajorDriver{13, "580.65.06"},
};

struct IsaToolkit {
  int isa_major;
  int isa_minor;
  int cuda_major;
  int cuda_minor;
};

// The first CUDA release of each PTX ISA version ("PTX ISA release history" in the PTX ISA document,
// https://docs.nvidia.com/cuda/parallel-thread-execution/#release-notes-ptx-release-history). Up to 9.1 as
// NVIDIA's own cuda-python transcribes that table (cuda/bindings/utils/_ptx_utils.py, `_ptx_to_cuda`).
// 9.2: the CUDA 13.2 notes point their compiler features to "PTX ISA version 9.2"
// (https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html, 2.3).
// 9.3: the PTX ISA document in the CUDA 13.3.0 archive is "PTX ISA Version 9.3"
// (https://docs.nvidia.com/cuda/archive/13.3.0/parallel-thread-execution/index.html).
// 9.4: the CUDA 13.4 notes name PTX ISA 9.4 (CUDA 13.4 Developer Preview and 13.4 Update 1 notes).
// 9.5: "PTX ISA 9.5 (CUDA 13.5)" (apache tvm-tirx commit f43b3030d, 2026-11-12); no NVIDIA page with it
// was found, see docs/cuda.md.
constexpr std::array k_isa_toolkits{
    IsaToolkit{6, 0, 9, 0},  IsaToolkit{6, 1, 9, 1},  IsaToolkit{6, 2, 9, 2},  IsaToolkit{6, 3, 10, 0},
    IsaToolkit{6, 4, 10, 1}, IsaToolkit{6, 5, 10, 2}, IsaToolkit{7, 0, 11, 0}, IsaToolkit{7, 1, 11, 1},
    IsaToolkit{7, 2, 11, 2}, IsaToolkit{7, 3, 11, 3}, IsaToolkit{7, 4, 11, 4}, IsaToolkit{7, 5, 11, 5},
    IsaToolkit{7, 6, 11, 6}, IsaToolkit{7, 7, 11, 7}, IsaToolkit{7, 8, 11, 8}, IsaToolkit{8, 0, 12, 0},
    IsaToolkit{8, 1, 12, 1}, IsaToolkit{8, 2, 12, 2}, IsaToolkit{8, 3, 12, 3}, IsaToolkit{8, 4, 12, 4},
    IsaToolkit{8, 5, 12, 5}, IsaToolkit{8, 6, 12, 7}, IsaToolkit{8, 7, 12, 8}, IsaToolkit{8, 8, 12, 9},
    IsaToolkit{9, 0, 13, 0}, IsaToolkit{9, 1, 13, 1}, IsaToolkit{9, 2, 13, 2}, IsaToolkit{9, 3, 13, 3},
    IsaToolkit{9, 4, 13, 4}, IsaToolkit{9, 5, 13, 5},
};

struct CubinMajor {
  int format_major;
  int format_minor;
  int cuda_major;
};

// The cubin format each toolkit major's nvcc writes (the code version of a fatbin's SASS entries, which
// `cuobjdump` prints as "code version = [1,8]"). No NVIDIA table states it; it is read from the
// compilers' own output: CUDA 13.0's nvcc (V13.0.88, run while writing this table) writes 1.8 for every
// architecture from sm_75 to sm_120, and so do the sm_100 and sm_120 cubins cuobjdump prints in CUDA 13's
// documentation; CUDA 12.x (cubins beside PTX ISA 8.3 and 8.7) and CUDA 11.x write 1.7. Only 1.8 names a
// single major: 1.7 says "CUDA 12 or older", which sets no floor the runtime does not already set.
constexpr std::array k_cubin_majors{
    CubinMajor{1, 8, 13},
};

struct OldestArch {
  int toolkit_major;
  Arch arch;
};

// The oldest architecture a toolkit major compiles for and ships libraries for.
constexpr std::array k_oldest_archs{
    // CUDA 11.0: "GPU architecture SM30 is no longer supported. The minimum required architecture is SM35"
    // (cuFFT, "Deprecated Functionality",
    // https://docs.nvidia.com/cuda/archive/12.6.3/cufft/deprecated-functionality.html).
    OldestArch{11, Arch{3, 5, 0}},
    // CUDA 12.0: "GPU architectures SM35 and SM37 are no longer supported. The minimum required
    // architecture is SM50" (same page).
    OldestArch{12, Arch{5, 0, 0}},
    // CUDA 13.0: Maxwell, Pascal and Volta lose "offline compilation and library support" (CUDA 12.8/12.9
    // notes, https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#deprecated-architectures,
    // announcing it for the next major); CUDA 13.0's `nvcc --list-gpu-code` starts at sm_75 (V13.0.88,
    // run while writing this table).
    OldestArch{13, Arch{7, 5, 0}},
};

}  // namespace

std::optional<std::string> toolkit_driver(int major, int minor) {
  for (const auto& row : k_toolkit_drivers) {
    if (row.major == major && row.minor == minor) return std::string(row.driver);
  }
  return std::nullopt;
}

std::optional<std::string> major_driver(int major) {
  for (const auto& row : k_major_drivers) {
    if (row.major == major) return std::string(row.driver);
  }
  return std::nullopt;
}

std::optional<std::pair<int, int>> ptx_isa_toolkit(const PtxIsa& isa) {
  for (const auto& row : k_isa_toolkits) {
    if (row.isa_major == isa.major && row.isa_minor == isa.minor) return std::pair{row.cuda_major, row.cuda_minor};
  }
  return std::nullopt;
}

std::optional<int> cubin_toolkit_major(const CubinFormat& format) {
  for (const auto& row : k_cubin_majors) {
    if (row.format_major == format.major && row.format_minor == format.minor) return row.cuda_major;
  }
  return std::nullopt;
}

std::optional<Arch> oldest_supported_arch(int toolkit_major) {
  for (const auto& row : k_oldest_archs) {
    if (row.toolkit_major == toolkit_major) return row.arch;
  }
  return std::nullopt;
}

bool driver_at_least(std::string_view have, std::string_view need) {
  // compare_dotted: number by number, a missing number counting as 0; nullopt for text that is not a
  // dotted version, which proves nothing about the driver.
  const auto c = compare_dotted(trim(have), trim(need));
  return c && *c >= 0;
}

}  // namespace wheelcheck::cuda
