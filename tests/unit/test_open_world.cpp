// "Unknown is not absent": a declared description lists some of an image's libraries, so a need it does not list
// is a condition that says what was not stated and how to state it; a probed (complete) image, and what an
// image states with certainty (its toolkit, its distributions, the archive of its release), keep their errors.
// Members are built here with gcc; the images are the db's and a root built and probed here.
#include <algorithm>
#include <filesystem>

#include "probe_support.hpp"
#include "support.hpp"
#include "verdict_support.hpp"
#include "wheelcheck/absence.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/probe.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/verdict.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_open_world {

using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

const image::Db& db() {
  static const image::Db d(source_dir() + "/db");
  return d;
}

std::vector<const verdict::Finding*> missing_libraries(const verdict::Report& r, const std::string& soname) {
  std::vector<const verdict::Finding*> out;
  for (const auto& f : r.findings) {
    if (f.kind == verdict::FindingKind::MissingLibrary && f.library == soname) out.push_back(&f);
  }
  return out;
}

verdict::Report check(const std::string& wheel, const image::Image& im) {
  verdict::CheckOptions o;
  o.providers = &toolkit::cached_providers(db());
  return verdict::check(inspect_wheel(wheel), im, o);
}

std::string describe(const verdict::Report& r) {
  return verdict::render_text(r, false);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A wheel whose one library needs `soname` (a stub of it is built to link against, and not shipped).
std::string wheel_needing(const TempDir& dir, const std::string& soname) {
  build(dir, soname, "int stated_elsewhere(void) { return 7; }\n", "-Wl,-soname," + soname);
  std::filesystem::create_symlink(dir.file(soname), dir.file("libstub.so"));
  return wheel_of(
      dir, "needs-1.0-py3-none-linux_x86_64.whl",
      {{"needs/libneeds.so", "int stated_elsewhere(void);\nint use(void) { return stated_elsewhere(); }\n", "-lstub"}});
}

// A wheel whose library is OpenMP code: gcc -fopenmp links libgomp.so.1.
std::string openmp_wheel(const TempDir& dir) {
  return wheel_of(dir, "omp-1.0-py3-none-linux_x86_64.whl",
                  {{"omp/libomp_sum.so",
                    "int sum(const int* v, int n) {\n  int s = 0;\n#pragma omp parallel for reduction(+ : s)\n"
                    "  for (int i = 0; i < n; ++i) s += v[i];\n  return s;\n}\n",
                    "-fopenmp"}});
}

image::Image parse(const std::string& text) {
  return image::parse_description(text, "test description");
}

}  // namespace

TEST(OpenWorld, AProbedDescriptionIsCompleteADeclaredOnePartial) {
  const auto declared = parse(R"({"schema": "wheelcheck-image/1", "name": "d"})");
  EXPECT_FALSE(declared.inventory.complete);
  const auto probed = parse(R"({"schema": "wheelcheck-image/1", "name": "p", "origin": "probed"})");
  EXPECT_TRUE(probed.inventory.complete);
  const auto said = parse(R"({"schema": "wheelcheck-image/1", "name": "s", "inventory": {"complete": true,
      "note": "dpkg -L of every package", "absent": ["libtinfo.so.5"]}})");
  EXPECT_TRUE(said.inventory.complete);
  // Written back as it was said, and read again the same.
  const auto again = parse(image::to_json(said).dump());
  EXPECT_TRUE(again.inventory.complete);
  EXPECT_EQ(again.inventory.note, "dpkg -L of every package");
  EXPECT_EQ(again.inventory.absent, std::vector<std::string>{"libtinfo.so.5"});
  EXPECT_FALSE(image::to_json(declared).contains("inventory"));
  EXPECT_THROW(parse(R"({"schema": "wheelcheck-image/1", "name": "x", "inventory": {"complete": "yes"}})"), Error);
}

TEST(OpenWorld, CompositionKeepsCompletenessOnlyWhereNothingDeclaredAddsLibraries) {
  const auto probed = parse(R"({"schema": "wheelcheck-image/1", "name": "root", "origin": "probed",
      "libraries": [{"path": "/usr/lib/libc.so.6", "soname": "libc.so.6"}]})");
  const auto python_only = parse(R"({"schema": "wheelcheck-image/1", "name": "py", "python": "3.12"})");
  EXPECT_TRUE(image::compose(probed, python_only).inventory.complete);
  const auto adds = parse(R"({"schema": "wheelcheck-image/1", "name": "more",
      "libraries": [{"soname": "libfoo.so.1"}]})");
  EXPECT_FALSE(image::compose(probed, adds).inventory.complete);
  const auto says = parse(R"({"schema": "wheelcheck-image/1", "name": "all", "inventory": {"complete": true},
      "libraries": [{"soname": "libfoo.so.1"}]})");
  EXPECT_TRUE(image::compose(probed, says).inventory.complete);
  // The db's images are built on declared Ubuntu layers: partial, and 24.04 states what its archive lacks.
  const auto cuda = db().get("cuda13.0");
  EXPECT_FALSE(cuda.inventory.complete);
  EXPECT_NE(std::find(cuda.inventory.absent.begin(), cuda.inventory.absent.end(), "libtinfo.so.5"),
            cuda.inventory.absent.end());
  EXPECT_TRUE(db().get("debian12").inventory.complete);
  EXPECT_TRUE(db().get("manylinux_2_28_x86_64").inventory.complete);
}

TEST(OpenWorld, AbsenceIsKnownOnlyWhereTheImageStatesIt) {
  const auto& providers = toolkit::cached_providers(db());
  const auto cuda = db().get("cuda13.0");
  const auto unstated = verdict::absence_of(cuda, "libnotstated.so.7", &providers);
  EXPECT_FALSE(unstated.known);
  EXPECT_EQ(unstated.basis, verdict::AbsenceBasis::NotStated);
  EXPECT_TRUE(contains(unstated.because, "libnotstated.so.7 is not stated in image cuda13.0")) << unstated.because;
  EXPECT_TRUE(contains(unstated.because, "does not say it lists all")) << unstated.because;
  EXPECT_TRUE(contains(unstated.because, "ubuntu24.04")) << unstated.because;
  EXPECT_TRUE(contains(unstated.state_it, "wheelcheck probe --root")) << unstated.state_it;
  EXPECT_TRUE(contains(unstated.state_it, "--assume library=libnotstated.so.7")) << unstated.state_it;
  EXPECT_TRUE(contains(unstated.state_it, "--assume library=!libnotstated.so.7")) << unstated.state_it;

  const auto cudart = verdict::absence_of(cuda, "libcudart.so.12", &providers);
  EXPECT_TRUE(cudart.known);
  EXPECT_EQ(cudart.basis, verdict::AbsenceBasis::Toolkit);
  EXPECT_TRUE(contains(cudart.because, "CUDA 12")) << cudart.because;
  EXPECT_TRUE(contains(cudart.because, "CUDA 13.0")) << cudart.because;
  // A runtime of CUDA 12 that a wheel carries (nvidia-cublas-cu12): db/providers.json names its toolkit.
  EXPECT_EQ(verdict::absence_of(cuda, "libcublas.so.12", &providers).basis, verdict::AbsenceBasis::Toolkit);
  // Another vendor's runtime on a CUDA image; but a CUDA runtime on Iluvatar's CoreX, which ships its own.
  EXPECT_EQ(verdict::absence_of(cuda, "libascendcl.so", &providers).basis, verdict::AbsenceBasis::Toolkit);
  EXPECT_FALSE(
      verdict::absence_of(db().get("flagos-runtime-iluvatar-corex4.5.0"), "libcudart.so.12", &providers).known);

  // torch 2.10.0+cpu lists its libraries: no libtorch_cuda.so among them.
  const auto torch_cuda = verdict::absence_of(cuda, "libtorch_cuda.so", &providers);
  EXPECT_EQ(torch_cuda.basis, verdict::AbsenceBasis::Distribution);
  EXPECT_TRUE(contains(torch_cuda.because, "torch 2.10.0+cpu")) << torch_cuda.because;
  // torch-npu is not installed on the Ascend CI image, which lists its distributions.
  const auto npu = verdict::absence_of(db().get("ascend-cann9"), "libtorch_npu.so", &providers);
  EXPECT_EQ(npu.basis, verdict::AbsenceBasis::Distribution);
  EXPECT_TRUE(contains(npu.because, "torch-npu")) << npu.because;
  // Without the providers that rule cannot speak.
  EXPECT_FALSE(verdict::absence_of(db().get("ascend-cann9"), "libtorch_npu.so", nullptr).known);

  // Ubuntu 24.04's archive has no libtinfo5.
  EXPECT_EQ(verdict::absence_of(cuda, "libtinfo.so.5", &providers).basis, verdict::AbsenceBasis::Stated);
  // glibc's libraries on a musl image.
  const auto musl = parse(R"({"schema": "wheelcheck-image/1", "name": "alpine", "libc": {"kind": "musl"}})");
  EXPECT_EQ(verdict::absence_of(musl, "libm.so.6", &providers).basis, verdict::AbsenceBasis::Libc);
  EXPECT_FALSE(verdict::absence_of(musl, "libfoo.so.1", &providers).known);
}

TEST(OpenWorld, AssumeStatesALibraryPresentOrAbsent) {
  auto im = db().get("cuda13.0");
  image::assume_all(im, {"library=libnotstated.so.7,!libalsonot.so.2"}, "--assume");
  EXPECT_TRUE(find_library(im, "libnotstated.so.7") != nullptr);
  EXPECT_FALSE(find_library(im, "libnotstated.so.7")->exports_unknown.empty());
  const auto gone = verdict::absence_of(im, "libalsonot.so.2", nullptr);
  EXPECT_EQ(gone.basis, verdict::AbsenceBasis::Stated);
  EXPECT_TRUE(contains(gone.because, "--assume library=!libalsonot.so.2")) << gone.because;
  ASSERT_EQ(im.assumptions.size(), 2U);
  EXPECT_TRUE(contains(im.assumptions[0], "not stated by the image")) << im.assumptions[0];
  // What the image lists cannot be assumed away; a value that is not a soname is refused.
  EXPECT_THROW(image::assume(im, "library", "!libc.so.6", "--assume"), Error);
  EXPECT_THROW(image::assume(im, "library", "/usr/lib/libz.so.1", "--assume"), Error);
}

// g++'s runtime libraries are what FlagOS's images install: an OpenMP member is no longer a missing library.
TEST(OpenWorld, OpenMpMemberFindsLibgompInTheUbuntuLayers) {
  TempDir dir;
  const std::string whl = openmp_wheel(dir);
  const auto profile = inspect_wheel(whl);
  ASSERT_FALSE(profile.members.empty());
  bool gomp = false;
  for (const auto& m : profile.members) {
    if (m.elf) gomp = gomp || std::count(m.elf->needed.begin(), m.elf->needed.end(), "libgomp.so.1") != 0;
  }
  ASSERT_TRUE(gomp) << "gcc -fopenmp did not link libgomp.so.1";
  // Ubuntu 22.04 (Neuware 4.4.3): GCC 12's libgomp with its table, every symbol bound.
  const auto jammy = check(whl, db().get("flagos-runtime-cambricon-neuware4.4.3"));
  EXPECT_TRUE(missing_libraries(jammy, "libgomp.so.1").empty()) << describe(jammy);
  EXPECT_EQ(jammy.verdict, verdict::Verdict::Compatible) << describe(jammy);
  // Ubuntu 24.04 (Neuware 4.7.2, the CUDA CI image): GCC 14's libgomp, bound against GCC 12's table as a
  // floor (libgomp.so.1 keeps every symbol version of earlier releases), and the answer says so.
  for (const char* name : {"flagos-runtime-cambricon-neuware4.7.2", "cuda13.0"}) {
    const auto noble = check(whl, db().get(name));
    EXPECT_TRUE(missing_libraries(noble, "libgomp.so.1").empty()) << name << "\n" << describe(noble);
    EXPECT_EQ(noble.verdict, verdict::Verdict::Compatible) << name << "\n" << describe(noble);
    EXPECT_TRUE(std::any_of(noble.notes.begin(), noble.notes.end(), [](const std::string& n) {
      return contains(n, "libgomp.so.1: its symbols are bound against GCC 12's") && contains(n, "floor");
    })) << describe(noble);
  }
}

// A floor is a floor: a libgomp symbol GCC 12's table lacks is unknown on Ubuntu 24.04 (GCC 14's may have it),
// and an error on Ubuntu 22.04, whose libgomp is GCC 12's own.
TEST(OpenWorld, ASymbolTheFloorTableLacksIsUnknownNotAbsent) {
  TempDir dir;
  build(dir, "libgomp.so.1", "int GOMP_from_a_later_gcc(void) { return 1; }\n", "-Wl,-soname,libgomp.so.1");
  std::filesystem::create_symlink(dir.file("libgomp.so.1"), dir.file("libgompstub.so"));
  const std::string whl = wheel_of(
      dir, "later-1.0-py3-none-linux_x86_64.whl",
      {{"later/liblater.so", "int GOMP_from_a_later_gcc(void);\nint use(void) { return GOMP_from_a_later_gcc(); }\n",
        "-lgompstub"}});
  const auto noble = check(whl, db().get("cuda13.0"));
  EXPECT_EQ(noble.verdict, verdict::Verdict::Unknown) << describe(noble);
  EXPECT_TRUE(contains(describe(noble), "GOMP_from_a_later_gcc")) << describe(noble);
  const auto jammy = check(whl, db().get("flagos-runtime-cambricon-neuware4.4.3"));
  EXPECT_EQ(jammy.verdict, verdict::Verdict::Incompatible) << describe(jammy);
}

TEST(OpenWorld, ANeedADescriptionDoesNotListIsAConditionNamingHowToStateIt) {
  TempDir dir;
  const std::string whl = wheel_needing(dir, "libnotstated.so.7");
  const auto r = check(whl, db().get("cuda13.0"));
  EXPECT_EQ(r.verdict, verdict::Verdict::Unknown) << describe(r);
  const auto missing = missing_libraries(r, "libnotstated.so.7");
  ASSERT_EQ(missing.size(), 1U) << describe(r);
  EXPECT_EQ(missing[0]->severity, verdict::Severity::Condition);
  EXPECT_TRUE(contains(missing[0]->explanation, "is not stated in image cuda13.0")) << missing[0]->explanation;
  EXPECT_TRUE(contains(missing[0]->fix, "--assume library=libnotstated.so.7")) << missing[0]->fix;
  EXPECT_TRUE(contains(describe(r), "not stated")) << describe(r);

  // Stated absent, it is an error; stated present, the need resolves (its symbols stay a question).
  auto without = db().get("cuda13.0");
  image::assume(without, "library", "!libnotstated.so.7", "--assume");
  const auto no = check(whl, without);
  EXPECT_EQ(no.verdict, verdict::Verdict::Incompatible) << describe(no);
  ASSERT_EQ(missing_libraries(no, "libnotstated.so.7").size(), 1U) << describe(no);
  EXPECT_EQ(missing_libraries(no, "libnotstated.so.7")[0]->severity, verdict::Severity::Error);
  auto with = db().get("cuda13.0");
  image::assume(with, "library", "libnotstated.so.7", "--assume");
  const auto yes = check(whl, with);
  EXPECT_TRUE(missing_libraries(yes, "libnotstated.so.7").empty()) << describe(yes);
  EXPECT_NE(yes.verdict, verdict::Verdict::Incompatible) << describe(yes);
}

// The same need on a root built here and probed: what the probe read is all there is.
TEST(OpenWorld, AProbedRootKeepsTheMissingLibraryAnError) {
  if (!have_host_glibc()) GTEST_SKIP() << "needs this machine's glibc and ldconfig";
  RootBuilder root;
  lay_out_glibc(root);
  run_ldconfig(root);
  probe::ProbeOptions o;
  o.root = root.root();
  o.name = "probed-root";
  o.jobs = 1;
  auto probed = probe::probe_root(o);
  EXPECT_TRUE(probed.image.inventory.complete) << "--image ROOT checks against the probe's image as it is";
  TempDir out;
  probe::write_probe(probed, out.file("probed-root.json"), out.file("exports"));
  const auto im = db().resolve(out.file("probed-root.json"));
  ASSERT_TRUE(im.inventory.complete);
  TempDir dir;
  const auto r = check(wheel_needing(dir, "libnotstated.so.7"), im);
  EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible) << describe(r);
  const auto missing = missing_libraries(r, "libnotstated.so.7");
  ASSERT_EQ(missing.size(), 1U) << describe(r);
  EXPECT_EQ(missing[0]->severity, verdict::Severity::Error);
  EXPECT_FALSE(contains(missing[0]->explanation, "not stated")) << missing[0]->explanation;
}

// What the image states with certainty stays certain: the CUDA 12 runtime on the CUDA 13.0 image.
TEST(OpenWorld, TheRuntimeOfAnotherToolkitStaysAnError) {
  TempDir dir;
  const auto r = check(wheel_needing(dir, "libcudart.so.12"), db().get("cuda13.0"));
  EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible) << describe(r);
  const auto missing = missing_libraries(r, "libcudart.so.12");
  ASSERT_EQ(missing.size(), 1U) << describe(r);
  EXPECT_EQ(missing[0]->severity, verdict::Severity::Error);
  EXPECT_TRUE(contains(missing[0]->explanation, "CUDA 12")) << missing[0]->explanation;
}

}  // namespace unity_test_open_world
