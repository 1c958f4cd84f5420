// NVIDIA's GPU-code rules and tables (include/wheelcheck/cuda.hpp; inspector/cuda/arch.cpp, coverage.cpp,
// tables.cpp): architecture names, which SASS runs and which PTX JIT-compiles on which GPU, the sentences
// that explain a member's coverage, and the published driver, PTX ISA and architecture tables.
#include <gtest/gtest.h>

#include "wheelcheck/cuda.hpp"

namespace wheelcheck::cuda {
namespace {

Arch arch(std::string_view text) {
  const auto a = parse_arch(text);
  if (!a) ADD_FAILURE() << "not an architecture: " << text;
  return a.value_or(Arch{});
}

Variant sass(std::string_view name, std::uint64_t entries = 1) {
  return Variant{CodeKind::Sass, arch(name), false, std::nullopt, entries};
}

Variant ptx(std::string_view name, std::optional<PtxIsa> isa, std::uint64_t entries = 1) {
  return Variant{CodeKind::Ptx, arch(name), false, isa, entries};
}

Fatbins fatbins(std::vector<Variant> variants) {
  Fatbins f;
  f.containers = 1;
  for (const auto& v : variants) f.entries += v.entries;
  f.variants = std::move(variants);
  return f;
}

std::vector<std::string> sm_names(const std::vector<Arch>& archs) {
  std::vector<std::string> out;
  for (const auto& a : archs) out.push_back(sm_name(a));
  return out;
}

// --- names -------------------------------------------------------------------------------------------

TEST(CudaArch, ParsesEveryToolsSpelling) {
  EXPECT_EQ(parse_arch("sm_90a"), (Arch{9, 0, 'a'}));
  EXPECT_EQ(parse_arch("compute_80"), (Arch{8, 0, 0}));
  EXPECT_EQ(parse_arch("sm_100f"), (Arch{10, 0, 'f'}));
  EXPECT_EQ(parse_arch("compute_120f"), (Arch{12, 0, 'f'}));
  EXPECT_EQ(parse_arch("sm_120"), (Arch{12, 0, 0}));
  EXPECT_EQ(parse_arch("sm_121"), (Arch{12, 1, 0}));
  EXPECT_EQ(parse_arch("sm_75"), (Arch{7, 5, 0}));
  EXPECT_EQ(parse_arch("9.0"), (Arch{9, 0, 0}));  // nvidia-smi's compute_cap
  EXPECT_EQ(parse_arch("12.0"), (Arch{12, 0, 0}));
  EXPECT_EQ(parse_arch("8.6"), (Arch{8, 6, 0}));
  EXPECT_EQ(parse_arch("9.0a"), (Arch{9, 0, 'a'}));  // TORCH_CUDA_ARCH_LIST
  EXPECT_EQ(parse_arch("90"), (Arch{9, 0, 0}));      // CMAKE_CUDA_ARCHITECTURES
  EXPECT_EQ(parse_arch("120"), (Arch{12, 0, 0}));
  EXPECT_EQ(parse_arch("100a"), (Arch{10, 0, 'a'}));
  EXPECT_EQ(parse_arch(" sm_86\n"), (Arch{8, 6, 0}));
  EXPECT_EQ(parse_arch("sm_10"), (Arch{1, 0, 0}));    // the lowest major
  EXPECT_EQ(parse_arch("sm_999"), (Arch{99, 9, 0}));  // the highest
  EXPECT_EQ(parse_arch("99.9"), (Arch{99, 9, 0}));
}

TEST(CudaArch, RejectsJunk) {
  for (const char* junk :
       {"",       "sm_",  "compute_", "sm_9",    "9",     "sm_90b", "sm_90aa", "sm_9a0", "sm90",   "SM_90",
        "sm_-90", "-9.0", "9.-1",     "sm_1000", "100.0", "9.10",   "9.",      ".9",     "9.0.1",  "sm_9.0",
        "sm_075", "075",  "0.5",      "sm_05",   "sm_00", "abc",    "sm_90 a", "9,0",    "ptx_80", "1e2"}) {
    EXPECT_EQ(parse_arch(junk), std::nullopt) << "accepted: '" << junk << "'";
  }
}

TEST(CudaArch, NamesRoundTrip) {
  EXPECT_EQ(sm_name(Arch{9, 0, 'a'}), "sm_90a");
  EXPECT_EQ(sm_name(Arch{10, 0, 'f'}), "sm_100f");
  EXPECT_EQ(sm_name(Arch{12, 1, 0}), "sm_121");
  EXPECT_EQ(compute_name(Arch{9, 0, 'a'}), "compute_90a");
  EXPECT_EQ(compute_name(Arch{8, 0, 0}), "compute_80");
  for (const char* name : {"sm_75", "sm_90a", "sm_100f", "sm_121"}) EXPECT_EQ(sm_name(arch(name)), name);
  EXPECT_EQ(compute_name(arch("compute_103a")), "compute_103a");
  EXPECT_EQ((PtxIsa{9, 0}).text(), "9.0");
  EXPECT_EQ((PtxIsa{8, 8}).text(), "8.8");
  EXPECT_EQ(kind_name(CodeKind::Sass), "sass");
  EXPECT_EQ(kind_name(CodeKind::Ptx), "ptx");
}

TEST(CudaArch, FatbinsListDistinctArchitecturesAscending) {
  auto f = fatbins({sass("sm_90"), sass("sm_80", 40), ptx("compute_90", PtxIsa{8, 4}), sass("sm_90a"),
                    ptx("compute_80", PtxIsa{9, 0}), ptx("compute_80", PtxIsa{8, 0}), sass("sm_80", 3), sass("sm_100f"),
                    sass("sm_100")});
  f.variants[6].compressed = true;  // the same architecture, compressed: one architecture still
  EXPECT_EQ(sm_names(f.sass()), (std::vector<std::string>{"sm_80", "sm_90", "sm_90a", "sm_100", "sm_100f"}));
  EXPECT_EQ(f.ptx(), (std::vector<Arch>{Arch{8, 0, 0}, Arch{9, 0, 0}}));
  EXPECT_EQ(f.newest_ptx_isa(), (PtxIsa{9, 0}));
}

TEST(CudaArch, FatbinsWithoutPtxHaveNoIsa) {
  const auto f = fatbins({sass("sm_80"), ptx("compute_80", std::nullopt)});
  EXPECT_TRUE(fatbins({}).sass().empty());
  EXPECT_TRUE(fatbins({}).ptx().empty());
  EXPECT_EQ(fatbins({sass("sm_80")}).newest_ptx_isa(), std::nullopt);
  EXPECT_EQ(f.newest_ptx_isa(), std::nullopt);  // a PTX entry whose header gave no ISA
  EXPECT_EQ(f.ptx().size(), 1u);
}

// --- rules -------------------------------------------------------------------------------------------

TEST(CudaRules, SassRunsOnLaterMinorsOfItsMajorOnly) {
  EXPECT_TRUE(sass_runs_on(arch("sm_80"), arch("sm_80")));
  EXPECT_TRUE(sass_runs_on(arch("sm_80"), arch("sm_86")));
  EXPECT_TRUE(sass_runs_on(arch("sm_80"), arch("sm_89")));
  EXPECT_FALSE(sass_runs_on(arch("sm_86"), arch("sm_80")));  // an older minor
  EXPECT_FALSE(sass_runs_on(arch("sm_80"), arch("sm_90")));  // never across majors
  EXPECT_FALSE(sass_runs_on(arch("sm_90"), arch("sm_100")));
  EXPECT_FALSE(sass_runs_on(arch("sm_120"), arch("sm_100")));
  EXPECT_FALSE(sass_runs_on(arch("sm_100"), arch("sm_90")));
  EXPECT_TRUE(sass_runs_on(arch("sm_120"), arch("sm_121")));
}

TEST(CudaRules, ArchitectureSpecificSassRunsOnThatGpuOnly) {
  EXPECT_TRUE(sass_runs_on(arch("sm_90a"), arch("sm_90")));
  EXPECT_TRUE(sass_runs_on(arch("sm_100a"), arch("sm_100")));
  EXPECT_FALSE(sass_runs_on(arch("sm_100a"), arch("sm_103")));  // not even a later minor
  EXPECT_FALSE(sass_runs_on(arch("sm_90a"), arch("sm_100")));
  EXPECT_FALSE(sass_runs_on(arch("sm_120a"), arch("sm_121")));
}

TEST(CudaRules, FamilySassRunsOnItsFamily) {
  EXPECT_TRUE(sass_runs_on(arch("sm_100f"), arch("sm_100")));
  EXPECT_TRUE(sass_runs_on(arch("sm_100f"), arch("sm_103")));
  EXPECT_FALSE(sass_runs_on(arch("sm_103f"), arch("sm_100")));
  EXPECT_FALSE(sass_runs_on(arch("sm_100f"), arch("sm_120")));  // another family
  EXPECT_TRUE(sass_runs_on(arch("sm_120f"), arch("sm_121")));
}

TEST(CudaRules, TheGpusSuffixIsIgnored) {
  EXPECT_TRUE(sass_runs_on(arch("sm_90"), arch("sm_90a")));  // an image may write sm_90a for an H100
  EXPECT_TRUE(sass_runs_on(arch("sm_90a"), arch("sm_90a")));
  EXPECT_TRUE(sass_runs_on(arch("sm_100f"), arch("sm_103a")));
  EXPECT_TRUE(ptx_jits_for(arch("compute_80"), arch("sm_90a")));
  EXPECT_TRUE(ptx_jits_for(arch("compute_90a"), arch("sm_90f")));
  EXPECT_EQ(coverage(fatbins({sass("sm_90")}), arch("sm_90a")).gpu, (Arch{9, 0, 0}));
}

TEST(CudaRules, PtxJitsForEveryNewerGpu) {
  EXPECT_TRUE(ptx_jits_for(arch("compute_80"), arch("sm_80")));
  EXPECT_TRUE(ptx_jits_for(arch("compute_80"), arch("sm_86")));
  EXPECT_TRUE(ptx_jits_for(arch("compute_80"), arch("sm_90")));  // a newer major
  EXPECT_TRUE(ptx_jits_for(arch("compute_80"), arch("sm_120")));
  EXPECT_TRUE(ptx_jits_for(arch("compute_86"), arch("sm_90")));   // a lower minor of a newer major
  EXPECT_FALSE(ptx_jits_for(arch("compute_86"), arch("sm_80")));  // an older GPU
  EXPECT_FALSE(ptx_jits_for(arch("compute_90"), arch("sm_89")));
  EXPECT_FALSE(ptx_jits_for(arch("compute_100"), arch("sm_90")));
}

TEST(CudaRules, ArchitectureAndFamilyPtxStayAtHome) {
  EXPECT_TRUE(ptx_jits_for(arch("compute_90a"), arch("sm_90")));
  EXPECT_FALSE(ptx_jits_for(arch("compute_90a"), arch("sm_100")));  // unlike compute_90
  EXPECT_FALSE(ptx_jits_for(arch("compute_100a"), arch("sm_103")));
  EXPECT_TRUE(ptx_jits_for(arch("compute_100f"), arch("sm_100")));
  EXPECT_TRUE(ptx_jits_for(arch("compute_100f"), arch("sm_103")));
  EXPECT_FALSE(ptx_jits_for(arch("compute_100f"), arch("sm_120")));  // a newer major: not the family
  EXPECT_FALSE(ptx_jits_for(arch("compute_103f"), arch("sm_100")));
}

// --- coverage ----------------------------------------------------------------------------------------

TEST(CudaCoverage, PrefersTheBestSass) {
  const auto f = fatbins({sass("sm_80"), sass("sm_86"), ptx("compute_80", PtxIsa{9, 0})});
  const auto c = coverage(f, arch("sm_89"));
  EXPECT_TRUE(c.runs);
  EXPECT_FALSE(c.needs_jit);
  EXPECT_EQ(c.by, arch("sm_86"));  // the highest that runs, not the first
  EXPECT_EQ(c.ptx_isa, std::nullopt);
  EXPECT_EQ(c.explanation, "SASS sm_86 runs on sm_89 (same major, equal or newer minor)");
  EXPECT_EQ(coverage(f, arch("sm_86")).explanation, "SASS sm_86 runs on sm_86 (same major, equal or newer minor)");
  EXPECT_EQ(coverage(fatbins({sass("sm_80")}), arch("sm_86")).explanation,
            "SASS sm_80 runs on sm_86 (same major, equal or newer minor)");
}

TEST(CudaCoverage, ExplainsArchitectureAndFamilySass) {
  const auto f = fatbins({sass("sm_90a"), sass("sm_100f")});
  const auto h100 = coverage(f, arch("sm_90"));
  EXPECT_TRUE(h100.runs);
  EXPECT_EQ(h100.by, arch("sm_90a"));
  EXPECT_EQ(h100.explanation, "SASS sm_90a runs on sm_90 (architecture-specific: that exact GPU only)");
  const auto b300 = coverage(f, arch("sm_103"));
  EXPECT_EQ(b300.by, arch("sm_100f"));
  EXPECT_EQ(b300.explanation, "SASS sm_100f runs on sm_103 (family-specific: same major, equal or newer minor)");
  EXPECT_FALSE(coverage(f, arch("sm_120")).runs);
}

TEST(CudaCoverage, FallsBackToTheNewestPtxThatJits) {
  const auto f = fatbins({sass("sm_80"), sass("sm_86"), ptx("compute_80", PtxIsa{9, 0}),
                          ptx("compute_90a", PtxIsa{9, 0}), ptx("compute_120", PtxIsa{9, 1})});
  const auto c = coverage(f, arch("sm_100"));
  EXPECT_TRUE(c.runs);
  EXPECT_TRUE(c.needs_jit);
  EXPECT_EQ(c.by, arch("compute_80"));  // compute_90a is for an H100 only, compute_120 is newer than the GPU
  EXPECT_EQ(c.ptx_isa, (PtxIsa{9, 0}));
  EXPECT_EQ(c.explanation, "no SASS runs on sm_100; PTX compute_80 is JIT-compiled by the driver (PTX ISA 9.0)");
  const auto h100 = coverage(f, arch("sm_90"));
  EXPECT_EQ(h100.by, arch("compute_90a"));
  const auto rtx = coverage(f, arch("sm_120"));
  EXPECT_EQ(rtx.by, arch("compute_120"));
  EXPECT_EQ(rtx.ptx_isa, (PtxIsa{9, 1}));
}

TEST(CudaCoverage, PtxIsaIsTheNewestAmongThatArchitecturesEntries) {
  auto f = fatbins({ptx("compute_80", PtxIsa{8, 0}), ptx("compute_80", PtxIsa{8, 8}), ptx("compute_75", std::nullopt)});
  EXPECT_EQ(coverage(f, arch("sm_90")).ptx_isa, (PtxIsa{8, 8}));
  const auto no_isa = coverage(fatbins({ptx("compute_75", std::nullopt)}), arch("sm_90"));
  EXPECT_TRUE(no_isa.needs_jit);
  EXPECT_EQ(no_isa.ptx_isa, std::nullopt);
  EXPECT_EQ(no_isa.explanation, "no SASS runs on sm_90; PTX compute_75 is JIT-compiled by the driver");
}

TEST(CudaCoverage, SaysWhatTheMemberCarriesWhenNothingRuns) {
  const auto c = coverage(fatbins({sass("sm_86"), sass("sm_80", 5)}), arch("sm_90"));
  EXPECT_FALSE(c.runs);
  EXPECT_FALSE(c.needs_jit);
  EXPECT_EQ(c.by, std::nullopt);
  EXPECT_EQ(c.explanation, "nothing runs on sm_90: the member carries SASS sm_80, sm_86 and no PTX");
  EXPECT_EQ(coverage(fatbins({sass("sm_90"), ptx("compute_90", PtxIsa{8, 0})}), arch("sm_80")).explanation,
            "nothing runs on sm_80: the member carries SASS sm_90 and PTX compute_90");
  EXPECT_EQ(coverage(fatbins({ptx("compute_90a", PtxIsa{8, 0})}), arch("sm_100")).explanation,
            "nothing runs on sm_100: the member carries no SASS, only PTX compute_90a");
  EXPECT_EQ(coverage(fatbins({}), arch("sm_80")).explanation,
            "nothing runs on sm_80: the member's fatbins hold no entries");
  Fatbins unread;
  unread.unread = "the member is deflated";
  EXPECT_EQ(coverage(unread, arch("sm_80")).explanation,
            "unknown for sm_80: the member's fatbin entries could not be read (the member is deflated)");
  EXPECT_FALSE(coverage(unread, arch("sm_80")).runs);
}

// --- runs_on_text -----------------------------------------------------------------------------------

TEST(CudaRunsOn, TheExampleFromTheHeader) {
  const auto f = fatbins({sass("sm_80"), sass("sm_86"), sass("sm_90a"), ptx("compute_80", PtxIsa{9, 0})});
  EXPECT_EQ(runs_on_text(f),
            "sm_80-sm_89 (SASS sm_80, sm_86), sm_90a only (SASS sm_90a), or any GPU from sm_80 up through PTX JIT "
            "(compute_80)");
}

TEST(CudaRunsOn, OneClauseAndTwo) {
  EXPECT_EQ(runs_on_text(fatbins({sass("sm_100f")})), "sm_100-sm_109 family (SASS sm_100f)");
  EXPECT_EQ(runs_on_text(fatbins({sass("sm_89")})), "sm_89 (SASS sm_89)");
  EXPECT_EQ(runs_on_text(fatbins({ptx("compute_75", PtxIsa{9, 0})})),
            "any GPU from sm_75 up through PTX JIT (compute_75)");
  EXPECT_EQ(runs_on_text(fatbins({sass("sm_120"), sass("sm_90")})),
            "sm_90-sm_99 (SASS sm_90) or sm_120-sm_129 (SASS sm_120)");
}

TEST(CudaRunsOn, FamiliesArchitecturesAndPtxKinds) {
  const auto f =
      fatbins({sass("sm_100"), sass("sm_100f"), sass("sm_103f"), ptx("compute_100a", PtxIsa{9, 0}),
               ptx("compute_120f", PtxIsa{9, 0}), ptx("compute_90", PtxIsa{9, 0}), ptx("compute_80", PtxIsa{9, 0})});
  EXPECT_EQ(runs_on_text(f),
            "sm_100-sm_109 (SASS sm_100, sm_100f, sm_103f), sm_100a only through PTX JIT (compute_100a), "
            "sm_120-sm_129 family through PTX JIT (compute_120f), or any GPU from sm_80 up through PTX JIT "
            "(compute_80, compute_90)");
  EXPECT_EQ(runs_on_text(fatbins({sass("sm_103f"), sass("sm_100f")})), "sm_100-sm_109 family (SASS sm_100f, sm_103f)");
}

TEST(CudaRunsOn, EmptyAndUnread) {
  EXPECT_EQ(runs_on_text(Fatbins{}), "no GPU: the fatbins hold no entries");
  Fatbins unread;
  unread.containers = 2;
  unread.unread = "a container's header does not hold together";
  EXPECT_EQ(runs_on_text(unread),
            "unknown: the fatbin entries could not be read (a container's header does not hold together)");
  auto partial = fatbins({sass("sm_80")});
  partial.unread = "the second container is cut short";
  EXPECT_EQ(runs_on_text(partial),
            "sm_80-sm_89 (SASS sm_80); some entries could not be read (the second container is cut short)");
}

// --- tables ------------------------------------------------------------------------------------------

TEST(CudaTables, ToolkitDrivers) {
  EXPECT_EQ(toolkit_driver(13, 0), "580.65.06");
  EXPECT_EQ(toolkit_driver(13, 1), "590.44.01");
  EXPECT_EQ(toolkit_driver(13, 2), "595.45.04");
  EXPECT_EQ(toolkit_driver(13, 3), "610.43.02");
  EXPECT_EQ(toolkit_driver(12, 0), "525.60.13");
  EXPECT_EQ(toolkit_driver(12, 4), "550.54.14");
  EXPECT_EQ(toolkit_driver(12, 8), "570.26");
  EXPECT_EQ(toolkit_driver(12, 9), "575.51.03");
  EXPECT_EQ(toolkit_driver(11, 0), "450.51.05");
  EXPECT_EQ(toolkit_driver(11, 8), "520.61.05");
  for (int minor = 0; minor <= 8; ++minor) EXPECT_TRUE(toolkit_driver(11, minor)) << "11." << minor;
  for (int minor : {0, 1, 2, 3, 4, 5, 6, 8, 9}) EXPECT_TRUE(toolkit_driver(12, minor)) << "12." << minor;
  EXPECT_EQ(toolkit_driver(12, 7), std::nullopt);  // never released
  EXPECT_EQ(toolkit_driver(13, 4), std::nullopt);  // driver no longer bundled; no row found
  EXPECT_EQ(toolkit_driver(11, 9), std::nullopt);
  EXPECT_EQ(toolkit_driver(10, 2), std::nullopt);  // before the table's CUDA 11 rows
  EXPECT_EQ(toolkit_driver(14, 0), std::nullopt);
  EXPECT_EQ(toolkit_driver(-1, 0), std::nullopt);
}

TEST(CudaTables, ToolkitDriversRiseWithTheRelease) {
  std::optional<std::string> previous;
  for (int major = 11; major <= 13; ++major) {
    for (int minor = 0; minor <= 9; ++minor) {
      const auto d = toolkit_driver(major, minor);
      if (!d) continue;
      if (previous) {
        EXPECT_TRUE(driver_at_least(*d, *previous)) << major << "." << minor << " " << *d;
      }
      previous = d;
    }
  }
}

TEST(CudaTables, MajorDrivers) {
  EXPECT_EQ(major_driver(11), "450.80.02");
  EXPECT_EQ(major_driver(12), "525.60.13");
  EXPECT_EQ(major_driver(13), "580.65.06");
  EXPECT_EQ(major_driver(10), std::nullopt);
  EXPECT_EQ(major_driver(14), std::nullopt);
  // Every release of a major runs on its floor (but CUDA 11.0, released before 450.80.02), and no
  // release of the major before reaches the next floor.
  for (int major : {11, 12, 13}) {
    for (int minor = 0; minor <= 9; ++minor) {
      const auto d = toolkit_driver(major, minor);
      if (!d || (major == 11 && minor == 0)) continue;
      EXPECT_TRUE(driver_at_least(*d, *major_driver(major))) << major << "." << minor;
      if (major < 13) {
        EXPECT_FALSE(driver_at_least(*d, *major_driver(major + 1))) << major << "." << minor;
      }
    }
  }
  EXPECT_FALSE(driver_at_least(*toolkit_driver(11, 0), *major_driver(11)));
}

TEST(CudaTables, PtxIsaToolkits) {
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{8, 0}), (std::pair{12, 0}));
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{8, 5}), (std::pair{12, 5}));
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{8, 6}), (std::pair{12, 7}));
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{8, 7}), (std::pair{12, 8}));
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{8, 8}), (std::pair{12, 9}));
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{9, 0}), (std::pair{13, 0}));
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{9, 1}), (std::pair{13, 1}));
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{9, 3}), (std::pair{13, 3}));
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{7, 0}), (std::pair{11, 0}));
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{7, 8}), (std::pair{11, 8}));
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{8, 9}), std::nullopt);  // there is no PTX ISA 8.9
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{9, 9}), std::nullopt);
  EXPECT_EQ(ptx_isa_toolkit(PtxIsa{0, 0}), std::nullopt);
}

TEST(CudaTables, OldestSupportedArchitectures) {
  EXPECT_EQ(oldest_supported_arch(13), arch("sm_75"));
  EXPECT_EQ(oldest_supported_arch(12), arch("sm_50"));
  EXPECT_EQ(oldest_supported_arch(11), arch("sm_35"));
  EXPECT_EQ(oldest_supported_arch(10), std::nullopt);
  EXPECT_EQ(oldest_supported_arch(14), std::nullopt);
}

TEST(CudaTables, DriverComparisons) {
  EXPECT_TRUE(driver_at_least("580.65.06", "580.65"));  // a missing field counts as 0
  EXPECT_FALSE(driver_at_least("580.65", "580.65.06"));
  EXPECT_TRUE(driver_at_least("590", "580.95.05"));
  EXPECT_FALSE(driver_at_least("580.95.05", "590"));
  EXPECT_TRUE(driver_at_least("580.65.06", "580.65.06"));
  EXPECT_TRUE(driver_at_least("580.65.6", "580.65.06"));  // numbers, not text
  EXPECT_TRUE(driver_at_least("580.100.01", "580.95.05"));
  EXPECT_FALSE(driver_at_least("575.57.08", "580"));
  EXPECT_TRUE(driver_at_least("610", "610.0.0"));
  EXPECT_TRUE(driver_at_least(" 580.65.06\n", "580"));
  EXPECT_FALSE(driver_at_least("", "580"));
  EXPECT_FALSE(driver_at_least("unknown", "580"));
  EXPECT_FALSE(driver_at_least("580.65.06-beta", "580"));
  EXPECT_FALSE(driver_at_least("580", "not a driver"));
}

}  // namespace
}  // namespace wheelcheck::cuda
