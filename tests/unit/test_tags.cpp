// Wheel-level checks (inspector/verdict/wheel_checks.cpp): tag triples against an image's Pythons, C
// library and arch, Requires-Python against the image's Pythons, and each ELF member's machine against the
// image's arch. Images and profiles are built in code; the last tests use the db's real images and the
// file names of real wheels. PEP 440 itself is tested in test_wheel_version.cpp, tag parsing in
// test_wheel_tags.cpp.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/verdict.hpp"
#include "wheelcheck/wheel.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_tags {

using namespace wheelcheck;
using namespace wheelcheck::test;
using verdict::Finding;
using verdict::Severity;

namespace {

constexpr std::uint16_t k_em_386 = 3, k_em_arm = 40, k_em_x86_64 = 62, k_em_aarch64 = 183;

WheelProfile wheel_named(const std::string& filename, std::optional<std::string> requires_python = std::nullopt) {
  WheelProfile w;
  w.filename = wheel::parse_filename(filename);
  w.metadata.name = w.filename.name;
  w.metadata.requires_python = std::move(requires_python);
  return w;
}

void add_member(WheelProfile& w, const std::string& path, std::uint16_t machine, elf::Class cls = elf::Class::Elf64,
                std::uint32_t e_flags = 0) {
  MemberProfile m;
  m.path = path;
  elf::Binary b;
  b.machine = machine;
  b.elf_class = cls;
  b.endian = elf::Endian::Little;
  b.e_flags = e_flags;
  b.type = elf::FileType::Shared;
  m.elf = b;
  w.members.push_back(std::move(m));
}

image::Python python(const std::string& version, std::vector<std::string> abi_tags) {
  image::Python p;
  p.version = version;
  p.abi_tags = std::move(abi_tags);
  p.layer = "python" + version;
  return p;
}

// An image with glibc `glibc` on `arch` and the given Pythons ("3.12" gets abi tags cp312, abi3).
image::Image glibc_image(const std::string& arch, const std::string& glibc, std::vector<std::string> pythons) {
  image::Image im;
  im.name = "test-image";
  im.arch = image::Fact::known_as(arch, "", image::Origin::Declared);
  im.libc_kind = image::Fact::known_as("glibc", "", image::Origin::Declared);
  im.libc_version = image::Fact::known_as(glibc, "", image::Origin::Declared);
  im.libc_version.layer = "ubuntu-test";
  for (const auto& v : pythons) {
    const std::string cp = "cp" + v.substr(0, v.find('.')) + v.substr(v.find('.') + 1);
    im.pythons.push_back(python(v, {cp, "abi3"}));
  }
  return im;
}

image::Image musl_image(const std::string& arch, const std::string& musl, std::vector<std::string> pythons) {
  image::Image im = glibc_image(arch, musl, std::move(pythons));
  im.libc_kind = image::Fact::known_as("musl", "", image::Origin::Declared);
  return im;
}

std::vector<std::string> kinds(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(verdict::kind_name(f.kind));
  return out;
}

const Finding* find(const std::vector<Finding>& findings, const std::string& kind) {
  for (const auto& f : findings) {
    if (verdict::kind_name(f.kind) == kind) return &f;
  }
  return nullptr;
}

bool has_evidence(const Finding& f, const std::string& needle) {
  for (const auto& e : f.evidence) {
    if (e.find(needle) != std::string::npos) return true;
  }
  return false;
}

std::string dump(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    out += verdict::kind_name(f.kind) + " [" + std::to_string(static_cast<int>(f.severity)) + "] " + f.explanation +
           " | fix: " + f.fix + " | required: " + f.required_version + "\n";
    for (const auto& e : f.evidence) out += "    " + e + "\n";
  }
  return out;
}

std::vector<Finding> check(const std::string& filename, const image::Image& im) {
  return verdict::check_wheel_tags(wheel_named(filename), im);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Tags: the Python and ABI tags

TEST(TagsPython, CPythonTagNeedsTheSameMinor) {
  const auto im = glibc_image("x86_64", "2.39", {"3.11"});
  const auto findings = check("name-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", im);
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-python"}) << dump(findings);
  const Finding& f = findings[0];
  EXPECT_EQ(f.severity, Severity::Error);
  EXPECT_EQ(f.required_version, "3.12");
  EXPECT_NE(f.explanation.find("CPython 3.12"), std::string::npos) << f.explanation;
  EXPECT_NE(f.explanation.find("CPython 3.11"), std::string::npos) << f.explanation;
  EXPECT_NE(f.fix.find("cp311"), std::string::npos) << f.fix;
  EXPECT_TRUE(has_evidence(f, "wheel tags: cp312-cp312-manylinux_2_28_x86_64"));
  EXPECT_TRUE(has_evidence(f, "image Python 3.11"));
  EXPECT_TRUE(check("name-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", glibc_image("x86_64", "2.39", {"3.12"})).empty());
}

TEST(TagsPython, PurePythonTagsMatchAnyCPython3) {
  const auto im = glibc_image("x86_64", "2.39", {"3.12"});
  EXPECT_TRUE(check("name-1.0-py3-none-any.whl", im).empty());
  EXPECT_TRUE(check("name-1.0-py2.py3-none-any.whl", im).empty());
  EXPECT_TRUE(check("name-1.0-py310-none-any.whl", im).empty());               // pyXY-none: any 3.W with W >= Y
  EXPECT_TRUE(check("name-1.0-cp312-none-linux_x86_64.whl", im).size() == 1);  // only the linux_ warning
  const auto py2 = check("name-1.0-py2-none-any.whl", im);
  ASSERT_EQ(kinds(py2), std::vector<std::string>{"tag-python"}) << dump(py2);
  EXPECT_EQ(py2[0].severity, Severity::Error);
  const auto py313 = check("name-1.0-py313-none-any.whl", im);
  ASSERT_EQ(kinds(py313), std::vector<std::string>{"tag-python"}) << dump(py313);
  EXPECT_EQ(py313[0].required_version, ">=3.13");
}

TEST(TagsPython, CompressedPythonSetsNameEveryAlternative) {
  const std::string name = "name-1.0-cp311.cp312-cp311.cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl";
  EXPECT_TRUE(check(name, glibc_image("x86_64", "2.39", {"3.11"})).empty());
  EXPECT_TRUE(check(name, glibc_image("x86_64", "2.39", {"3.12"})).empty());
  const auto findings = check(name, glibc_image("x86_64", "2.39", {"3.10"}));
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-python"}) << dump(findings);
  EXPECT_NE(findings[0].explanation.find("CPython 3.11 or CPython 3.12"), std::string::npos) << dump(findings);
  EXPECT_EQ(findings[0].required_version, "3.11 or 3.12");
  EXPECT_TRUE(has_evidence(findings[0], "closest tag: "));
}

TEST(TagsPython, OtherInterpretersNeverMatchCPython) {
  const auto im = glibc_image("x86_64", "2.39", {"3.10"});
  const auto findings = check("name-1.0-pp310-pypy310_pp73-manylinux_2_17_x86_64.whl", im);
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-python"}) << dump(findings);
  EXPECT_NE(findings[0].explanation.find("PyPy"), std::string::npos);
}

TEST(TagsPython, SeveralImagePythonsOneMatchingIsEnough) {
  const auto im = glibc_image("x86_64", "2.39", {"3.10", "3.12"});
  EXPECT_TRUE(check("name-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", im).empty());
  const auto findings = check("name-1.0-cp313-cp313-manylinux_2_28_x86_64.whl", im);
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-python"});
  EXPECT_NE(findings[0].explanation.find("CPython 3.10 and CPython 3.12"), std::string::npos) << dump(findings);
}

TEST(TagsPython, UnknownPythonIsACondition) {
  image::Image im = glibc_image("x86_64", "2.39", {});
  im.python = image::Fact::unknown("a venv whose Python version is UNCONFIRMED");
  const auto findings = check("name-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", im);
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-python"}) << dump(findings);
  EXPECT_EQ(findings[0].severity, Severity::Condition);
  EXPECT_EQ(findings[0].required_version, "3.12");
  EXPECT_NE(findings[0].explanation.find("Python version is unknown"), std::string::npos);
  EXPECT_NE(findings[0].explanation.find("UNCONFIRMED"), std::string::npos);

  // A description that says nothing about Python: the same.
  const auto silent = check("name-1.0-py3-none-any.whl", glibc_image("x86_64", "2.39", {}));
  ASSERT_EQ(kinds(silent), std::vector<std::string>{"tag-python"});
  EXPECT_EQ(silent[0].severity, Severity::Condition);
  const auto both = check("name-1.0-py2.py3-none-any.whl", glibc_image("x86_64", "2.39", {}));
  ASSERT_EQ(kinds(both), std::vector<std::string>{"tag-python"});
  EXPECT_NE(both[0].explanation.find("Python 2 or Python 3"), std::string::npos) << dump(both);
  EXPECT_EQ(both[0].required_version, "2 or 3");

  // A known python fact without a pythons entry: CPython with the default ABI tags.
  im.python = image::Fact::known_as("3.12", "", image::Origin::Declared);
  EXPECT_TRUE(check("name-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", im).empty());
  EXPECT_TRUE(check("name-1.0-cp39-abi3-manylinux_2_28_x86_64.whl", im).empty());
  EXPECT_EQ(kinds(check("name-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", im)), std::vector<std::string>{"tag-python"});
}

TEST(TagsAbi, Abi3CoversEveryLaterCPython) {
  const auto im = glibc_image("x86_64", "2.39", {"3.12"});
  EXPECT_TRUE(check("name-1.0-cp38-abi3-manylinux_2_17_x86_64.whl", im).empty());
  EXPECT_TRUE(check("name-1.0-cp312-abi3-manylinux_2_17_x86_64.whl", im).empty());
  // abi3 built against 3.13 needs CPython >= 3.13: the python tag is what the image does not meet.
  const auto newer = check("name-1.0-cp313-abi3-manylinux_2_17_x86_64.whl", im);
  ASSERT_EQ(kinds(newer), std::vector<std::string>{"tag-python"}) << dump(newer);
  EXPECT_EQ(newer[0].required_version, ">=3.13");
  EXPECT_NE(newer[0].explanation.find("CPython >= 3.13"), std::string::npos);
  // abi3 of another major version.
  EXPECT_EQ(kinds(check("name-1.0-cp27-abi3-manylinux_2_17_x86_64.whl", im)), std::vector<std::string>{"tag-python"});
}

TEST(TagsAbi, Abi3NeedsAnInterpreterThatReportsIt) {
  image::Image im = glibc_image("x86_64", "2.39", {});
  im.pythons.push_back(python("3.12", {"cp312"}));  // a build that does not list abi3
  const auto findings = check("name-1.0-cp38-abi3-manylinux_2_17_x86_64.whl", im);
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-abi"}) << dump(findings);
  EXPECT_EQ(findings[0].severity, Severity::Error);
  EXPECT_NE(findings[0].fix.find("cp312"), std::string::npos);
}

TEST(TagsAbi, FreeThreadedAbiNeedsAFreeThreadedPython) {
  const auto gil = glibc_image("x86_64", "2.39", {"3.13"});
  const auto findings = check("name-1.0-cp313-cp313t-manylinux_2_28_x86_64.whl", gil);
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-abi"}) << dump(findings);
  EXPECT_NE(findings[0].explanation.find("free-threaded"), std::string::npos);
  EXPECT_EQ(findings[0].required_version, "3.13");

  image::Image ft = glibc_image("x86_64", "2.39", {});
  ft.pythons.push_back(python("3.13", {"cp313t"}));
  EXPECT_TRUE(check("name-1.0-cp313-cp313t-manylinux_2_28_x86_64.whl", ft).empty());
  EXPECT_EQ(kinds(check("name-1.0-cp313-cp313-manylinux_2_28_x86_64.whl", ft)), std::vector<std::string>{"tag-abi"});
  const auto abi3 = check("name-1.0-cp39-abi3-manylinux_2_28_x86_64.whl", ft);
  ASSERT_EQ(kinds(abi3), std::vector<std::string>{"tag-abi"}) << dump(abi3);
  EXPECT_NE(abi3[0].explanation.find("stable ABI"), std::string::npos);
  EXPECT_TRUE(check("name-1.0-py3-none-any.whl", ft).empty());
}

TEST(TagsAbi, AbiTagsMustBeOnesTheInterpreterReports) {
  image::Image im = glibc_image("x86_64", "2.17", {});
  im.pythons.push_back(python("3.7", {"cp37m", "abi3"}));
  EXPECT_TRUE(check("name-1.0-cp37-cp37m-manylinux2014_x86_64.whl", im).empty());
  EXPECT_EQ(kinds(check("name-1.0-cp37-cp37dm-manylinux2014_x86_64.whl", im)), std::vector<std::string>{"tag-abi"});
  // pip pairs a cpXY ABI tag only with a cp python tag.
  EXPECT_EQ(kinds(check("name-1.0-py3-cp37m-manylinux2014_x86_64.whl", im)), std::vector<std::string>{"tag-abi"});
}

// ---------------------------------------------------------------------------------------------------
// Tags: the platform tag

TEST(TagsPlatform, ManylinuxNeedsTheGlibcFloor) {
  const std::string name = "name-1.0-cp312-cp312-manylinux_2_28_x86_64.whl";
  EXPECT_TRUE(check(name, glibc_image("x86_64", "2.28", {"3.12"})).empty());
  EXPECT_TRUE(check(name, glibc_image("x86_64", "2.39", {"3.12"})).empty());
  const auto findings = check(name, glibc_image("x86_64", "2.27", {"3.12"}));
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-platform"}) << dump(findings);
  const Finding& f = findings[0];
  EXPECT_EQ(f.severity, Severity::Error);
  EXPECT_EQ(f.required_version, "2.28");
  EXPECT_NE(f.explanation.find("needs glibc >= 2.28 (manylinux_2_28); the image has glibc 2.27"), std::string::npos)
      << f.explanation;
  EXPECT_NE(f.fix.find("manylinux_2_27 or older build"), std::string::npos) << f.fix;
  EXPECT_TRUE(has_evidence(f, "wheel tags: cp312-cp312-manylinux_2_28_x86_64"));
  EXPECT_TRUE(has_evidence(f, "image glibc 2.27 (declared in ubuntu-test)")) << dump(findings);
}

TEST(TagsPlatform, LegacyManylinuxAliases) {
  const auto im = glibc_image("x86_64", "2.16", {"3.12"});
  EXPECT_TRUE(check("name-1.0-cp312-cp312-manylinux1_x86_64.whl", im).empty());
  EXPECT_TRUE(check("name-1.0-cp312-cp312-manylinux2010_x86_64.whl", im).empty());
  const auto f2014 = check("name-1.0-cp312-cp312-manylinux2014_x86_64.whl", im);
  ASSERT_EQ(kinds(f2014), std::vector<std::string>{"tag-platform"});
  EXPECT_EQ(f2014[0].required_version, "2.17");
  EXPECT_NE(f2014[0].explanation.find("manylinux2014 = manylinux_2_17"), std::string::npos) << dump(f2014);
  const auto f2010 = check("name-1.0-cp312-cp312-manylinux2010_x86_64.whl", glibc_image("x86_64", "2.11", {"3.12"}));
  ASSERT_EQ(kinds(f2010), std::vector<std::string>{"tag-platform"});
  EXPECT_EQ(f2010[0].required_version, "2.12");
  const auto f1 = check("name-1.0-cp312-cp312-manylinux1_x86_64.whl", glibc_image("x86_64", "2.4", {"3.12"}));
  ASSERT_EQ(kinds(f1), std::vector<std::string>{"tag-platform"});
  EXPECT_EQ(f1[0].required_version, "2.5");
}

TEST(TagsPlatform, CompressedPlatformSets) {
  const std::string name = "name-1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl";
  EXPECT_TRUE(check(name, glibc_image("x86_64", "2.17", {"3.12"})).empty());
  // One wheel name for two arches: either arch is fine.
  const std::string both = "name-1.0-cp312-cp312-manylinux_2_28_x86_64.manylinux_2_28_aarch64.whl";
  EXPECT_TRUE(check(both, glibc_image("aarch64", "2.28", {"3.12"})).empty());
  EXPECT_TRUE(check(both, glibc_image("x86_64", "2.28", {"3.12"})).empty());
}

TEST(TagsPlatform, TheClosestTagIsReported) {
  // macOS or a too-new manylinux: the glibc floor is the specific reason.
  const auto findings = check("name-1.0-cp312-cp312-macosx_11_0_arm64.manylinux_2_34_x86_64.whl",
                              glibc_image("x86_64", "2.28", {"3.12"}));
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-platform"}) << dump(findings);
  EXPECT_NE(findings[0].explanation.find("glibc >= 2.34"), std::string::npos) << dump(findings);
  EXPECT_TRUE(has_evidence(findings[0], "closest tag: cp312-cp312-manylinux_2_34_x86_64"));
  // A usable linux_ tag beats a manylinux tag the image cannot meet: only its Warning remains.
  const auto local =
      check("name-1.0-cp312-cp312-manylinux_2_34_x86_64.linux_x86_64.whl", glibc_image("x86_64", "2.28", {"3.12"}));
  ASSERT_EQ(kinds(local), std::vector<std::string>{"tag-platform"});
  EXPECT_EQ(local[0].severity, Severity::Warning);
}

TEST(TagsPlatform, ArchMustMatch) {
  const auto findings =
      check("name-1.0-cp312-cp312-manylinux_2_28_aarch64.whl", glibc_image("x86_64", "2.39", {"3.12"}));
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-platform"}) << dump(findings);
  EXPECT_EQ(findings[0].severity, Severity::Error);
  EXPECT_NE(findings[0].explanation.find("aarch64"), std::string::npos);
  EXPECT_NE(findings[0].explanation.find("x86_64"), std::string::npos);
  EXPECT_NE(findings[0].fix.find("_x86_64"), std::string::npos);
  EXPECT_EQ(findings[0].required_version, "");  // the glibc floor is met: not what is wrong
  // Tag spellings of arches: armv7l is armhf, i686 is i686.
  EXPECT_EQ(kinds(check("name-1.0-cp312-cp312-linux_armv7l.whl", glibc_image("armhf", "2.36", {"3.12"}))),
            std::vector<std::string>{"tag-platform"});  // the linux_ Warning only
  EXPECT_TRUE(check("name-1.0-cp312-cp312-manylinux_2_17_armv7l.whl", glibc_image("armhf", "2.36", {"3.12"})).empty());
  EXPECT_TRUE(check("name-1.0-cp312-cp312-manylinux_2_17_i686.whl", glibc_image("i686", "2.36", {"3.12"})).empty());
  EXPECT_TRUE(
      check("name-1.0-cp312-cp312-manylinux_2_17_ppc64le.whl", glibc_image("ppc64le", "2.36", {"3.12"})).empty());
  EXPECT_TRUE(check("name-1.0-cp312-cp312-manylinux_2_17_s390x.whl", glibc_image("s390x", "2.36", {"3.12"})).empty());
  EXPECT_TRUE(
      check("name-1.0-cp312-cp312-manylinux_2_31_riscv64.whl", glibc_image("riscv64", "2.36", {"3.12"})).empty());
  EXPECT_TRUE(check("name-1.0-cp312-cp312-manylinux_2_36_loongarch64.whl", glibc_image("loongarch64", "2.36", {"3.12"}))
                  .empty());
  EXPECT_EQ(kinds(check("name-1.0-cp312-cp312-manylinux_2_17_ppc64.whl", glibc_image("ppc64le", "2.36", {"3.12"}))),
            std::vector<std::string>{"tag-platform"});
}

TEST(TagsPlatform, MusllinuxNeedsMusl) {
  const std::string name = "name-1.0-cp312-cp312-musllinux_1_2_x86_64.whl";
  const auto on_glibc = check(name, glibc_image("x86_64", "2.39", {"3.12"}));
  ASSERT_EQ(kinds(on_glibc), std::vector<std::string>{"tag-platform"}) << dump(on_glibc);
  EXPECT_EQ(on_glibc[0].severity, Severity::Error);
  EXPECT_NE(on_glibc[0].explanation.find("needs musl >= 1.2 (musllinux_1_2)"), std::string::npos);
  EXPECT_NE(on_glibc[0].explanation.find("C library is glibc"), std::string::npos);
  EXPECT_EQ(on_glibc[0].required_version, "1.2");
  EXPECT_TRUE(check(name, musl_image("x86_64", "1.2", {"3.12"})).empty());
  const auto old_musl = check(name, musl_image("x86_64", "1.1", {"3.12"}));
  ASSERT_EQ(kinds(old_musl), std::vector<std::string>{"tag-platform"});
  EXPECT_NE(old_musl[0].fix.find("musllinux_1_1 or older"), std::string::npos) << old_musl[0].fix;
  // manylinux on a musl image.
  const auto many = check("name-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", musl_image("x86_64", "1.2", {"3.12"}));
  ASSERT_EQ(kinds(many), std::vector<std::string>{"tag-platform"});
  EXPECT_NE(many[0].explanation.find("C library is musl"), std::string::npos);
}

TEST(TagsPlatform, UnknownGlibcIsACondition) {
  image::Image im = glibc_image("x86_64", "2.39", {"3.12"});
  im.libc_version = image::Fact::unknown("the image's base OS is not published");
  const auto findings = check("name-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", im);
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-platform"}) << dump(findings);
  const Finding& f = findings[0];
  EXPECT_EQ(f.severity, Severity::Condition);
  EXPECT_EQ(f.required_version, "2.28");
  EXPECT_NE(f.explanation.find("needs glibc >= 2.28 (manylinux_2_28); the image's glibc version is unknown"),
            std::string::npos)
      << f.explanation;
  EXPECT_TRUE(has_evidence(f, "image glibc unknown"));
  EXPECT_NE(f.fix.find("state the image's glibc version"), std::string::npos) << f.fix;
  // A wrong arch is still an Error, whatever the glibc.
  EXPECT_EQ(check("name-1.0-cp312-cp312-manylinux_2_28_aarch64.whl", im).at(0).severity, Severity::Error);
  // An unknown C library, an unknown arch.
  im.libc_kind = image::Fact::unknown("not probed");
  EXPECT_EQ(check("name-1.0-cp312-cp312-musllinux_1_2_x86_64.whl", im).at(0).severity, Severity::Condition);
  im.arch = image::Fact::unknown("not probed");
  const auto arch = check("name-1.0-cp312-cp312-linux_x86_64.whl", im);
  ASSERT_EQ(kinds(arch), std::vector<std::string>{"tag-platform"});
  EXPECT_EQ(arch[0].severity, Severity::Condition);
  EXPECT_NE(arch[0].explanation.find("arch is unknown"), std::string::npos);
}

TEST(TagsPlatform, LocalLinuxTagsAreAWarning) {
  const auto im = glibc_image("x86_64", "2.39", {"3.12"});
  const auto findings = check("name-1.0-cp312-cp312-linux_x86_64.whl", im);
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-platform"}) << dump(findings);
  EXPECT_EQ(findings[0].severity, Severity::Warning);
  EXPECT_NE(findings[0].explanation.find("PyPI"), std::string::npos);
  const auto other = check("name-1.0-cp312-cp312-linux_aarch64.whl", im);
  ASSERT_EQ(kinds(other), std::vector<std::string>{"tag-platform"});
  EXPECT_EQ(other[0].severity, Severity::Error);
}

TEST(TagsPlatform, OtherOperatingSystemsAreErrors) {
  const auto im = glibc_image("x86_64", "2.39", {"3.12"});
  for (const char* name : {"name-1.0-cp312-cp312-macosx_11_0_arm64.whl", "name-1.0-cp312-cp312-win_amd64.whl",
                           "name-1.0-cp312-cp312-win32.whl", "name-1.0-cp312-cp312-plan9_x86_64.whl"}) {
    const auto findings = check(name, im);
    ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-platform"}) << name;
    EXPECT_EQ(findings[0].severity, Severity::Error) << name;
    EXPECT_FALSE(findings[0].fix.empty());
  }
  EXPECT_NE(check("name-1.0-cp312-cp312-macosx_11_0_arm64.whl", im)[0].explanation.find("macOS"), std::string::npos);
}

TEST(TagsPlatform, PythonAndPlatformProblemsAreBothReported) {
  const auto findings =
      check("name-1.0-cp313-cp313-manylinux_2_28_aarch64.whl", glibc_image("x86_64", "2.39", {"3.12"}));
  EXPECT_EQ(kinds(findings), (std::vector<std::string>{"tag-python", "tag-platform"})) << dump(findings);
}

// ---------------------------------------------------------------------------------------------------
// Requires-Python

TEST(TagsRequiresPython, AgainstTheImagesPythons) {
  const auto im = glibc_image("x86_64", "2.39", {"3.12"});
  auto run = [&](const std::string& spec) {
    return verdict::check_wheel_tags(wheel_named("name-1.0-py3-none-any.whl", spec), im);
  };
  EXPECT_TRUE(run(">=3.9").empty());
  EXPECT_TRUE(run(">=3.8,<4").empty());
  EXPECT_TRUE(run("~=3.10").empty());
  const auto too_new = run(">=3.13");
  ASSERT_EQ(kinds(too_new), std::vector<std::string>{"requires-python"}) << dump(too_new);
  EXPECT_EQ(too_new[0].severity, Severity::Error);
  EXPECT_EQ(too_new[0].required_version, ">=3.13");
  EXPECT_NE(too_new[0].fix.find("name"), std::string::npos);
  EXPECT_TRUE(has_evidence(too_new[0], "Requires-Python: >=3.13"));
  EXPECT_EQ(run("<3.12").at(0).severity, Severity::Error);
  EXPECT_EQ(run("!=3.12.*").at(0).severity, Severity::Error);
  // Not a PEP 440 specifier set: pip ignores it, so a Warning that says so.
  const auto bad = run(">=3.6.*");
  ASSERT_EQ(kinds(bad), std::vector<std::string>{"requires-python"});
  EXPECT_EQ(bad[0].severity, Severity::Warning);
}

TEST(TagsRequiresPython, AnUnknownPatchReleaseIsACondition) {
  const auto im = glibc_image("x86_64", "2.39", {"3.12"});
  auto run = [&](const std::string& spec) {
    return verdict::check_wheel_tags(wheel_named("name-1.0-py3-none-any.whl", spec), im);
  };
  const auto below = run(">=3.9,<3.12.5");
  ASSERT_EQ(kinds(below), std::vector<std::string>{"requires-python"}) << dump(below);
  EXPECT_EQ(below[0].severity, Severity::Condition);
  EXPECT_NE(below[0].explanation.find("3.12.0 to 3.12.4"), std::string::npos) << below[0].explanation;
  const auto above = run(">3.12");
  ASSERT_EQ(kinds(above), std::vector<std::string>{"requires-python"});
  EXPECT_NE(above[0].explanation.find("3.12.1 and later"), std::string::npos) << above[0].explanation;
  EXPECT_NE(run("==3.12.4")[0].explanation.find("3.12.4 only"), std::string::npos);
  // Every patch release but one: still depends on the patch.
  EXPECT_NE(run("!=3.12.3")[0].explanation.find("3.12.0 to 3.12.2, 3.12.4 and later"), std::string::npos);
  // With the patch release stated the answer is exact.
  const auto exact = glibc_image("x86_64", "2.39", {"3.12.4"});
  EXPECT_TRUE(verdict::check_wheel_tags(wheel_named("name-1.0-py3-none-any.whl", "<3.12.5"), exact).empty());
  EXPECT_EQ(verdict::check_wheel_tags(wheel_named("name-1.0-py3-none-any.whl", ">3.12.4"), exact).at(0).severity,
            Severity::Error);
}

TEST(TagsRequiresPython, AnyImagePythonMaySatisfyIt) {
  const auto im = glibc_image("x86_64", "2.39", {"3.9", "3.12"});
  EXPECT_TRUE(verdict::check_wheel_tags(wheel_named("name-1.0-py3-none-any.whl", ">=3.10"), im).empty());
  const auto none = verdict::check_wheel_tags(wheel_named("name-1.0-py3-none-any.whl", ">=3.13"), im);
  ASSERT_EQ(kinds(none), std::vector<std::string>{"requires-python"});
  EXPECT_NE(none[0].explanation.find("3.9 and 3.12 do not"), std::string::npos) << none[0].explanation;
}

TEST(TagsRequiresPython, UnknownPythonIsACondition) {
  image::Image im = glibc_image("x86_64", "2.39", {});
  im.python = image::Fact::unknown("UNCONFIRMED");
  const auto findings = verdict::check_wheel_tags(wheel_named("name-1.0-py3-none-any.whl", ">=3.10"), im);
  const Finding* f = find(findings, "requires-python");
  ASSERT_NE(f, nullptr) << dump(findings);
  EXPECT_EQ(f->severity, Severity::Condition);
  EXPECT_NE(f->explanation.find("Python version is unknown"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------
// The ELF members' architecture

TEST(TagsArch, Aarch64MemberInAnX86_64Image) {
  WheelProfile w = wheel_named("name-1.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  add_member(w, "name/_good.so", k_em_x86_64);
  add_member(w, "name/_native.so", k_em_aarch64);
  const auto findings = verdict::check_wheel_tags(w, glibc_image("x86_64", "2.39", {"3.12"}));
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"wrong-arch"}) << dump(findings);
  const Finding& f = findings[0];
  EXPECT_EQ(f.severity, Severity::Error);
  EXPECT_EQ(f.member, "name/_native.so");
  EXPECT_NE(f.explanation.find("aarch64"), std::string::npos);
  EXPECT_NE(f.explanation.find("x86_64"), std::string::npos);
  EXPECT_TRUE(has_evidence(f, "e_machine 183 (AArch64)"));
  EXPECT_TRUE(has_evidence(f, "image arch x86_64"));
}

// The arch findings of a wheel, without the pure tag's warning (tag-pure-binary: these test wheels are tagged
// py3-none-any for brevity; TagsPure tests that finding).
std::vector<Finding> arch_findings(const WheelProfile& w, const image::Image& im) {
  auto out = verdict::check_wheel_tags(w, im);
  std::erase_if(out, [](const Finding& f) { return f.kind == verdict::FindingKind::TagPureBinary; });
  return out;
}

TEST(TagsArch, ClassAndFloatAbiCount) {
  WheelProfile w = wheel_named("name-1.0-py3-none-any.whl");
  add_member(w, "lib32.so", k_em_386, elf::Class::Elf32);
  const auto i686 = arch_findings(w, glibc_image("x86_64", "2.39", {"3.12"}));
  ASSERT_EQ(kinds(i686), std::vector<std::string>{"wrong-arch"});
  EXPECT_NE(i686[0].explanation.find("i686 (ELF32)"), std::string::npos) << i686[0].explanation;

  WheelProfile arm = wheel_named("name-1.0-py3-none-any.whl");
  add_member(arm, "hard.so", k_em_arm, elf::Class::Elf32, 0x400);
  add_member(arm, "soft.so", k_em_arm, elf::Class::Elf32, 0);
  const auto findings = arch_findings(arm, glibc_image("armhf", "2.36", {"3.12"}));
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"wrong-arch"}) << dump(findings);
  EXPECT_EQ(findings[0].member, "soft.so");
  EXPECT_NE(findings[0].explanation.find("armel"), std::string::npos);
}

TEST(TagsArch, UnknownArchIsOneCondition) {
  WheelProfile w = wheel_named("name-1.0-py3-none-any.whl");
  add_member(w, "a.so", k_em_x86_64);
  add_member(w, "b.so", k_em_x86_64);
  image::Image im = glibc_image("x86_64", "2.39", {"3.12"});
  im.arch = image::Fact::unknown("not published");
  const auto findings = arch_findings(w, im);
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"wrong-arch"}) << dump(findings);
  EXPECT_EQ(findings[0].severity, Severity::Condition);
  EXPECT_EQ(findings[0].required_version, "x86_64");
  // Members the reader could not parse are not judged.
  WheelProfile broken = wheel_named("name-1.0-py3-none-any.whl");
  broken.members.push_back(MemberProfile{"bad.so", 10, std::nullopt, std::nullopt, "truncated"});
  EXPECT_TRUE(verdict::check_wheel_tags(broken, glibc_image("x86_64", "2.39", {"3.12"})).empty());
}

// ---------------------------------------------------------------------------------------------------
// The db's images against the names of real wheels (../shared/fixtures/auditwheel-wheels)

namespace {

std::string fixture_name(const std::string& relative) {
  const std::string path = shared_dir() + "/fixtures/auditwheel-wheels/" + relative;
  if (!std::filesystem::exists(path)) return "";
  return std::filesystem::path(path).filename().string();
}

}  // namespace

TEST(TagsDb, RealWheelNamesAgainstTheFlagosCudaImage) {
  const auto im = image::Db(source_dir() + "/db").get("cuda13.0");  // Ubuntu 24.04, x86_64, CPython 3.12
  const std::string pure = fixture_name("plumbum-1.6.8-py2.py3-none-any.whl");
  const std::string mscl = fixture_name("python_mscl-67.0.1.0-cp313-cp313-manylinux2014_aarch64.whl");
  const std::string local313 = fixture_name("glibc/testsimple-0.0.1-cp313-cp313-linux_x86_64.whl");
  const std::string musl312 = fixture_name("musllinux_1_2/testsimple-0.0.1-cp312-cp312-linux_x86_64.whl");
  const std::string cffi27 = fixture_name("cffi-1.5.0-cp27-none-linux_x86_64.whl");
  const std::string pypy = fixture_name("python_snappy-0.5.2-pp260-pypy_41-linux_x86_64.whl");
  const std::string android = fixture_name("android/spam-0.1.0-cp313-cp313-android_24_arm64_v8a.whl");
  for (const auto* n : {&pure, &mscl, &local313, &musl312, &cffi27, &pypy, &android}) {
    if (n->empty()) GTEST_SKIP() << "../shared/fixtures/auditwheel-wheels is not there";
  }
  EXPECT_TRUE(check(pure, im).empty());
  // CPython 3.13 for aarch64: both the interpreter and the arch are wrong.
  const auto m = check(mscl, im);
  EXPECT_EQ(kinds(m), (std::vector<std::string>{"tag-python", "tag-platform"})) << dump(m);
  EXPECT_NE(m[1].explanation.find("aarch64"), std::string::npos);
  EXPECT_TRUE(has_evidence(m[1], "image arch x86_64 (declared in ubuntu24.04)")) << dump(m);
  // A local cp313 build: the interpreter is wrong, the linux_x86_64 tag a Warning.
  const auto l = check(local313, im);
  ASSERT_EQ(kinds(l), (std::vector<std::string>{"tag-python", "tag-platform"})) << dump(l);
  EXPECT_EQ(l[0].severity, Severity::Error);
  EXPECT_EQ(l[1].severity, Severity::Warning);
  // auditwheel's musl test build is only tagged linux_x86_64: its tags cannot tell, a Warning only.
  const auto mu = check(musl312, im);
  ASSERT_EQ(kinds(mu), std::vector<std::string>{"tag-platform"}) << dump(mu);
  EXPECT_EQ(mu[0].severity, Severity::Warning);
  EXPECT_EQ(check(cffi27, im).at(0).required_version, "2.7");
  EXPECT_NE(check(pypy, im).at(0).explanation.find("PyPy"), std::string::npos);
  const auto a = check(android, im);
  ASSERT_NE(find(a, "tag-platform"), nullptr) << dump(a);
  EXPECT_NE(find(a, "tag-platform")->explanation.find("Android"), std::string::npos);
}

TEST(TagsDb, RealWheelNamesAgainstTheManylinux228Target) {
  const auto im = image::Db(source_dir() + "/db").get("manylinux_2_28");  // a policy: glibc 2.28, no Python
  const std::string pure = fixture_name("plumbum-1.6.8-py2.py3-none-any.whl");
  const std::string mscl = fixture_name("python_mscl-67.0.1.0-cp313-cp313-manylinux2014_aarch64.whl");
  if (pure.empty() || mscl.empty()) GTEST_SKIP() << "../shared/fixtures/auditwheel-wheels is not there";
  const auto p = check(pure, im);
  ASSERT_EQ(kinds(p), std::vector<std::string>{"tag-python"}) << dump(p);
  EXPECT_EQ(p[0].severity, Severity::Condition);
  const auto m = check(mscl, im);
  ASSERT_EQ(kinds(m), (std::vector<std::string>{"tag-python", "tag-platform"})) << dump(m);
  EXPECT_EQ(m[0].severity, Severity::Condition);
  EXPECT_EQ(m[1].severity, Severity::Error);  // aarch64 against x86_64
  // manylinux2014 (glibc 2.17) fits a glibc 2.28 image on the right arch.
  EXPECT_EQ(kinds(check("name-1.0-py3-none-manylinux2014_x86_64.whl", im)), std::vector<std::string>{"tag-python"});
  const auto too_new = check("name-1.0-py3-none-manylinux_2_34_x86_64.whl", im);
  ASSERT_NE(find(too_new, "tag-platform"), nullptr);
  EXPECT_TRUE(has_evidence(*find(too_new, "tag-platform"), "image glibc 2.28 (derived in manylinux_2_28"))
      << dump(too_new);
}

TEST(TagsDb, RealWheelNamesAgainstTheAscendImage) {
  const auto im = image::Db(source_dir() + "/db").get("ascend-cann9");  // aarch64, glibc unknown, CPython 3.12
  const std::string mscl = fixture_name("python_mscl-67.0.1.0-cp313-cp313-manylinux2014_aarch64.whl");
  const std::string local = fixture_name("musllinux_1_2/testsimple-0.0.1-cp312-cp312-linux_aarch64.whl");
  const std::string x86 = fixture_name("glibc/testsimple-0.0.1-cp313-cp313-linux_x86_64.whl");
  if (mscl.empty() || local.empty() || x86.empty()) GTEST_SKIP() << "../shared/fixtures/auditwheel-wheels is not there";
  const auto m = check(mscl, im);
  ASSERT_EQ(kinds(m), (std::vector<std::string>{"tag-python", "tag-platform"})) << dump(m);
  EXPECT_EQ(m[0].severity, Severity::Error);      // CPython 3.13 against 3.12
  EXPECT_EQ(m[1].severity, Severity::Condition);  // the right arch, glibc unknown
  EXPECT_NE(m[1].explanation.find("needs glibc >= 2.17"), std::string::npos) << dump(m);
  EXPECT_NE(m[1].explanation.find("glibc version is unknown"), std::string::npos);
  const auto l = check(local, im);
  ASSERT_EQ(kinds(l), std::vector<std::string>{"tag-platform"}) << dump(l);
  EXPECT_EQ(l[0].severity, Severity::Warning);
  const auto x = check(x86, im);
  ASSERT_NE(find(x, "tag-platform"), nullptr);
  EXPECT_EQ(find(x, "tag-platform")->severity, Severity::Error);
  // The image's Python is 3.12 with no patch release.
  const auto rp = verdict::check_wheel_tags(wheel_named(mscl, ">=3.8"), im);
  EXPECT_EQ(find(rp, "requires-python"), nullptr);
}

// A binary wheel relabelled py3-none-any (FlagOS's repacks of opencv and xgrammar): a warning naming its
// native members, their machine and the tag they are built for; a wheel whose tags name a platform has none.
TEST(TagsPure, NativeCodeInAPureWheelIsAWarningNamingTheRealTag) {
  WheelProfile w = wheel_named("opencv_python_headless-4.12.0.88-py3-none-any.whl");
  add_member(w, "cv2/cv2.abi3.so", k_em_x86_64);
  add_member(w, "cv2/_ext.cpython-310-x86_64-linux-gnu.so", k_em_x86_64);
  const auto findings = verdict::check_wheel_tags(w, glibc_image("x86_64", "2.39", {"3.10"}));
  ASSERT_EQ(kinds(findings), std::vector<std::string>{"tag-pure-binary"}) << dump(findings);
  const Finding& f = findings[0];
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_EQ(f.required_version, "x86_64");
  EXPECT_NE(f.explanation.find("py3-none-any"), std::string::npos) << f.explanation;
  EXPECT_NE(f.explanation.find("cv2/cv2.abi3.so"), std::string::npos) << f.explanation;
  EXPECT_NE(f.fix.find("cp310-cp310"), std::string::npos) << f.fix;
  EXPECT_NE(f.fix.find("cp3X-abi3"), std::string::npos) << f.fix;
  EXPECT_NE(f.fix.find("linux_x86_64"), std::string::npos) << f.fix;

  WheelProfile tagged = wheel_named("opencv_python_headless-4.12.0.88-cp37-abi3-manylinux_2_28_x86_64.whl");
  add_member(tagged, "cv2/cv2.abi3.so", k_em_x86_64);
  EXPECT_TRUE(kinds(verdict::check_wheel_tags(tagged, glibc_image("x86_64", "2.39", {"3.10"}))).empty());
  WheelProfile pure = wheel_named("flag_gems-5.4.0-py3-none-any.whl");
  EXPECT_TRUE(kinds(verdict::check_wheel_tags(pure, glibc_image("x86_64", "2.39", {"3.10"}))).empty());
}

// Toolkit targeting from FlagOS's and PyTorch's label conventions (toolkit::wheel_toolkits, run::not_targeted): the
// SDK and its release, or the vendor and the Triton line FlagTree builds on; a label decides the vendor.
TEST(TagsToolkit, EveryVendorsLabelConventionNamesItsSdkAndRelease) {
  auto toolkit = [](const std::string& filename) {
    const auto t = toolkit::wheel_toolkits(wheel_named(filename));
    return t.empty() ? std::string("-")
                     : image::toolkit_kind_name(t.front().kind) + " " + t.front().version + " " + t.front().chip;
  };
  EXPECT_EQ(toolkit("flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl"), "cuda 13.0 ");
  EXPECT_EQ(toolkit("flagcx-0.14.0+cuda13.3-cp312-cp312-linux_x86_64.whl"), "cuda 13.3 ");
  EXPECT_EQ(toolkit("flagcx-0.14.0+cann9.0.0.910c-cp311-cp311-linux_aarch64.whl"), "cann 9.0.0 910C");
  EXPECT_EQ(toolkit("flagcx-0.14.0+dtk2604-cp310-cp310-linux_x86_64.whl"), "dtk 26.04 ");
  EXPECT_EQ(toolkit("torch-2.9.0+das.opt1.dtk2604-cp310-cp310-linux_x86_64.whl"), "dtk 26.04 ");
  EXPECT_EQ(toolkit("flagcx-0.14.0+tsm260610-cp310-cp310-linux_x86_64.whl"), "tsm 26.06.10 ");
  EXPECT_EQ(toolkit("torch-2.9.0+musa.4.3.6-cp310-cp310-linux_x86_64.whl"), "musa 4.3.6 ");
  EXPECT_EQ(toolkit("torch-2.8.0+metax3.7.2.0-cp312-cp312-linux_x86_64.whl"), "maca 3.7.2.0 ");
  EXPECT_EQ(toolkit("flagcx-0.14.0+neuware4.4.3-cp310-cp310-linux_x86_64.whl"), "neuware 4.4.3 ");
  EXPECT_EQ(toolkit("flagcx-0.14.0+corex4.5.0-cp312-cp312-linux_x86_64.whl"), "corex 4.5.0 ");
  EXPECT_EQ(toolkit("flagcx-0.14.0+xre5.37.1-cp310-cp310-linux_x86_64.whl"), "xre 5.37.1 ");
  EXPECT_EQ(toolkit("flagcx-0.14.0+tangrt1.2.0-cp310-cp310-linux_x86_64.whl"), "tangrt 1.2.0 ");
  // FlagTree's labels name the vendor and its Triton line, not an SDK release.
  EXPECT_EQ(toolkit("flagtree-0.7.0+metax3.6-cp312-cp312-linux_x86_64.whl"), "maca  ");
  EXPECT_EQ(toolkit("flagtree-0.7.0+hcu3.6-cp310-cp310-linux_x86_64.whl"), "dtk  ");
  EXPECT_EQ(toolkit("flagtree-0.7.0+xpu3.6-cp310-cp310-linux_x86_64.whl"), "xre  ");
  EXPECT_EQ(toolkit("flagtree-0.7.0+triton3.6-cp312-cp312-linux_x86_64.whl"), "cuda  ");
  EXPECT_EQ(toolkit::wheel_toolkits(wheel_named("flagtree-0.7.0+ascend3.5-cp311-cp311-linux_aarch64.whl")).front().line,
            "3.5");
  EXPECT_EQ(toolkit("torch-2.11.0+cpu-cp312-cp312-linux_x86_64.whl"), "-");
  EXPECT_EQ(toolkit("torch_mlu-1.29.2+torch2.7.1-cp310-cp310-linux_x86_64.whl"), "neuware  ") << "by its name";
  // A label decides the vendor: Iluvatar's FlagCX links a CUDA-compatible libcudart and is a CoreX build.
  WheelProfile corex = wheel_named("flagcx-0.14.0+corex4.5.0-cp312-cp312-linux_x86_64.whl");
  add_member(corex, "flagcx/lib/libflagcx.so", k_em_x86_64);
  corex.members.back().elf->needed = {"libcudart.so.12"};
  ASSERT_EQ(toolkit::wheel_toolkits(corex).size(), 1U);
  EXPECT_EQ(toolkit::wheel_toolkits(corex).front().kind, image::ToolkitKind::Corex);
}

// Every local version label ../shared/reference/flagos-release.md shows, and the spellings people write that
// it does not (PyTorch's cuXY, the major alone): what each is read as, "kind version chip line" ("-" where it
// names no toolkit). A version is never guessed: +cu13 is CUDA 13 (not 1.3), +cu1300 names no version.
TEST(TagsToolkit, EveryLabelIsReadAsPeopleWriteIt) {
  auto read = [](const std::string& label) {
    const auto t = toolkit::of_label("1.0+" + label);
    return t ? image::toolkit_kind_name(t->kind) + " " + t->version + " " + t->chip + " " + t->line : std::string("-");
  };
  const std::pair<const char*, const char*> k_table[] = {
      // FlagCX's 20 SDK builds (the backend key without its vendor prefix)
      {"cuda12.8", "cuda 12.8  "},
      {"cuda13.3", "cuda 13.3  "},
      {"cann8.5.0", "cann 8.5.0  "},
      {"cann8.5.0.910c", "cann 8.5.0 910C "},
      {"cann9.0.0", "cann 9.0.0  "},
      {"cann9.0.0.910c", "cann 9.0.0 910C "},
      {"dtk2604", "dtk 26.04  "},
      {"tops1.9.10", "tops 1.9.10  "},
      {"tops1.10.6", "tops 1.10.6  "},
      {"musa4.3.6", "musa 4.3.6  "},
      {"musa5.2.0", "musa 5.2.0  "},
      {"maca3.7.2.1", "maca 3.7.2.1  "},
      {"maca3.8.1.3", "maca 3.8.1.3  "},
      {"neuware4.4.3", "neuware 4.4.3  "},
      {"neuware4.7.2", "neuware 4.7.2  "},
      {"corex4.4.0", "corex 4.4.0  "},
      {"corex4.5.0", "corex 4.5.0  "},
      {"xre5.37.1", "xre 5.37.1  "},
      {"tangrt1.2.0", "tangrt 1.2.0  "},
      {"tsm260610", "tsm 26.06.10  "},
      // FlagCX's branch builds append .<date>.g<sha>: the build's, not the SDK's
      {"cuda13.3.20260101.g1a2b3c4", "cuda 13.3  "},
      {"cann9.0.0.20260101.g1a2b3c4", "cann 9.0.0  "},
      // FlagTree: the vendor and its Triton line; build-infra's rebuilds append .<UTC date>
      {"triton3.5", "cuda   3.5"},
      {"triton3.6", "cuda   3.6"},
      {"ascend3.2", "cann   3.2"},
      {"ascend3.5", "cann   3.5"},
      {"ascend3.5.20260101", "cann   3.5"},
      {"enflame3.6", "tops   3.6"},
      {"hcu3.6", "dtk   3.6"},
      {"hcu3.1", "dtk   3.1"},
      {"iluvatar3.6", "corex   3.6"},
      {"metax3.6", "maca   3.6"},
      {"mthreads3.6", "musa   3.6"},
      {"sunrise3.6", "tangrt   3.6"},
      {"sunrise3.4", "tangrt   3.4"},
      {"tsingmicro3.6", "tsm   3.6"},
      {"xpu3.6", "xre   3.6"},
      {"xpu3.0", "xre   3.0"},
      // torch builds of the vendors
      {"corex.4.5.0.20260804", "corex 4.5.0  "},
      {"corex.4.4.0", "corex 4.4.0  "},
      {"corex", "corex   "},
      {"das.opt1.dtk2604", "dtk 26.04  "},
      {"musa.4.3.6", "musa 4.3.6  "},
      {"metax3.7.2.0", "maca 3.7.2.0  "},
      {"metax3.8.1.0", "maca 3.8.1.0  "},
      // PyTorch's CUDA spellings, and the major alone
      {"cu128", "cuda 12.8  "},
      {"cu129", "cuda 12.9  "},
      {"cu130", "cuda 13.0  "},
      {"cu118", "cuda 11.8  "},
      {"cu92", "cuda 9.2  "},
      {"cu13", "cuda 13  "},
      {"cu12", "cuda 12  "},
      {"cuda13", "cuda 13  "},
      {"cuda13.0", "cuda 13.0  "},
      {"cann9", "cann 9  "},
      {"cu1300", "cuda   "},
      // no toolkit
      {"cpu", "-"},
      {"git8f5b0609", "-"},
      {"a48aedef", "-"},
      {"torch2.11.0", "-"},
      {"flagos", "-"}};
  for (const auto& [label, want] : k_table) EXPECT_EQ(read(label), want) << "+" << label;
}

// A shorter version matches every longer one it prefixes (+cann9 every CANN 9 release, +cu13 every CUDA 13),
// and a label that names another release is a claim beside the verdict, never "not targeted".
TEST(TagsToolkit, AShorterLabelMatchesEveryReleaseItPrefixes) {
  auto image = [](const std::string& kind, const std::string& version) {
    image::Image im = glibc_image("x86_64", "2.39", {"3.11", "3.12"});
    image::Toolkit t;
    t.kind = image::parse_toolkit_kind(kind);
    t.version = image::Fact::known_as(version, "", image::Origin::Declared);
    im.toolkit = t;
    im.chips = image::Fact::known_as("Ascend 910B", "", image::Origin::Declared);
    return im;
  };
  auto claim = [](const std::string& label, const image::Image& im) {
    const WheelProfile w = wheel_named("flagcx-0.14.0+" + label + "-cp312-cp312-linux_x86_64.whl");
    EXPECT_EQ(run::not_targeted(w, im), "") << label;
    return run::label_elsewhere(w, im);
  };
  const auto cuda130 = image("cuda", "13.0"), cuda128 = image("cuda", "12.8"), cuda133 = image("cuda", "13.3");
  const auto cann900 = image("cann", "9.0.0"), cann850 = image("cann", "8.5.0");
  EXPECT_EQ(claim("cu13", cuda130), "");
  EXPECT_EQ(claim("cu13", cuda133), "");
  EXPECT_EQ(claim("cuda13", cuda133), "");
  EXPECT_EQ(claim("cu130", cuda133), "") << "CUDA's minor version compatibility: a release is the major";
  EXPECT_EQ(claim("cu13", cuda128), "a CUDA 13 build, a CUDA 12.8 image");
  EXPECT_EQ(claim("cu128", cuda130), "a CUDA 12.8 build, a CUDA 13.0 image");
  EXPECT_EQ(claim("cann9", cann900), "");
  EXPECT_EQ(claim("cann9.0", cann900), "");
  EXPECT_EQ(claim("cann9.0.0", cann900), "");
  EXPECT_EQ(claim("cann9", cann850), "a CANN 9 build, a CANN 8.5.0 image");
  EXPECT_EQ(claim("cann9.0.1", cann900), "a CANN 9.0.1 build, a CANN 9.0.0 image");
  EXPECT_EQ(claim("cu130", cann900), "a CUDA build, a CANN image");
}

TEST(TagsToolkit, ALabelForAnotherReleaseOrChipIsAClaimNeverNotTargeted) {
  auto image = [](const std::string& kind, const std::string& version, const std::string& chips) {
    image::Image im = glibc_image("x86_64", "2.39", {"3.11", "3.12"});
    image::Toolkit t;
    t.kind = image::parse_toolkit_kind(kind);
    t.version = image::Fact::known_as(version, "", image::Origin::Declared);
    im.toolkit = t;
    if (!chips.empty()) im.chips = image::Fact::known_as(chips, "", image::Origin::Declared);
    return im;
  };
  // The label's claim (run::label_elsewhere); pip ignores local version labels, so the wheel is never "not
  // targeted" for it: not_targeted stays "" for every one of these (their tags fit the image).
  auto why = [](const std::string& filename, const image::Image& im) {
    EXPECT_EQ(run::not_targeted(wheel_named(filename), im), "") << filename;
    return run::label_elsewhere(wheel_named(filename), im);
  };
  const auto cann9b = image("cann", "9.0.0", "Ascend 910B"), cann9c = image("cann", "9.0.0", "Ascend 910C");
  EXPECT_EQ(why("flagcx-0.14.0+cann9.0.0-cp311-cp311-linux_x86_64.whl", cann9b), "");
  EXPECT_EQ(why("flagcx-0.14.0+cann8.5.0-cp311-cp311-linux_x86_64.whl", cann9b),
            "a CANN 8.5.0 build, a CANN 9.0.0 image");
  EXPECT_EQ(why("flagcx-0.14.0+cann9.0.0.910c-cp311-cp311-linux_x86_64.whl", cann9b),
            "a CANN build for 910C, an image with Ascend 910B");
  EXPECT_EQ(why("flagcx-0.14.0+cann9.0.0.910c-cp311-cp311-linux_x86_64.whl", cann9c), "");
  EXPECT_NE(why("flagcx-0.14.0+cann9.0.0-cp311-cp311-linux_x86_64.whl", cann9c).find("910B build"), std::string::npos);
  EXPECT_EQ(why("flagtree-0.7.0+ascend3.5-cp311-cp311-linux_x86_64.whl", cann9c), "") << "a vendor label names no chip";
  // CUDA by major version (minor version compatibility); a vendor SDK by its first three parts.
  const auto cuda133 = image("cuda", "13.3", "");
  EXPECT_EQ(why("flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl", cuda133), "");
  EXPECT_EQ(why("flagcx-0.14.0+cuda12.8-cp312-cp312-linux_x86_64.whl", cuda133),
            "a CUDA 12.8 build, a CUDA 13.3 image");
  EXPECT_EQ(why("torch-2.10.0+corex.4.5.0.20260804-cp312-cp312-linux_x86_64.whl", image("corex", "4.5.0", "")), "");
  EXPECT_EQ(why("torch-2.8.0+metax3.7.2.0-cp312-cp312-linux_x86_64.whl", image("maca", "3.7.2.1", "")), "");
  EXPECT_EQ(why("flagcx-0.14.0+dtk2604-cp312-cp312-linux_x86_64.whl", image("dtk", "26.04", "")), "");
  EXPECT_EQ(why("flagcx-0.14.0+xre5.37.1-cp312-cp312-linux_x86_64.whl", cuda133), "an XRE build, a CUDA image");
  // The Triton line against the image's own FlagTree.
  image::Image cann85 = image("cann", "8.5.0", "Ascend 910B");
  image::Distribution ft;
  ft.name = "flagtree";
  ft.version = "0.6.0+ascend3.2";
  cann85.distributions.push_back(ft);
  EXPECT_EQ(why("flagtree-0.7.0+ascend3.5-cp311-cp311-linux_x86_64.whl", cann85),
            "a CANN build on the Triton 3.5 line; the image's flagtree 0.6.0+ascend3.2 is on the 3.2 line");
  EXPECT_EQ(why("flagtree-0.6.0+ascend3.2-cp311-cp311-linux_x86_64.whl", cann85), "");
}

}  // namespace unity_test_tags
