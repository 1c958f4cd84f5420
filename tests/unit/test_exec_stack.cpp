// Executable stacks (exec-stack): PT_GNU_STACK read by both ELF readers from libraries built here with
// -z execstack and -z noexecstack, and one whose PT_GNU_STACK is turned into PT_NULL (no header: an
// executable stack on x86_64, not on AArch64, as glibc's DEFAULT_STACK_PERMS says and
// tests/loader/execstack.py checks with the real loaders); the profile cache keeps it; and the check judges
// it against the image's glibc: 2.41 (debian13) refuses the import, 2.36 (debian12) warns, a version not
// stated is a condition, and an optional route's member only degrades the wheel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "readelf.hpp"
#include "support.hpp"
#include "verdict_support.hpp"
#include "wheelcheck/bytes.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/verdict.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_exec_stack {

using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

const char* const k_ext = "int PyInit__es(void) { return 42; }\n";

// The file's PT_GNU_STACK turned into PT_NULL (an ELF64 little-endian file): true when it had one.
bool drop_gnu_stack(const std::string& path) {
  std::string b = read_file(path);
  if (b.size() < 64 || b[4] != 2 || b[5] != 1) return false;
  std::uint64_t phoff = 0;
  std::uint16_t phentsize = 0, phnum = 0;
  std::memcpy(&phoff, b.data() + 32, 8);
  std::memcpy(&phentsize, b.data() + 54, 2);
  std::memcpy(&phnum, b.data() + 56, 2);
  bool found = false;
  for (std::uint16_t i = 0; i < phnum; ++i) {
    const std::size_t at = phoff + std::size_t{i} * phentsize;
    std::uint32_t type = 0;
    std::memcpy(&type, b.data() + at, 4);
    if (type != 0x6474e551) continue;
    const std::uint32_t null = 0;
    std::memcpy(b.data() + at, &null, 4);
    found = true;
  }
  write_binary(path, b);
  return found;
}

// Every way of reading the file: the scanner streaming it (in one pass and in several), through random access,
// and LIEF; they must agree with each other and with readelf.
elf::Binary read_every_way(const std::string& path) {
  const auto fast = elf::read_elf(FileSource(path), elf::ReaderKind::Fast);
  elf::ReaderLimits tiny;
  tiny.speculative_prefix = 64;
  EXPECT_EQ(elf::read_elf(FileSource(path), elf::ReaderKind::Fast, tiny).gnu_stack, fast.gnu_stack) << path;
  EXPECT_EQ(elf::read_elf_file(path).gnu_stack, fast.gnu_stack) << path;
  const auto lief = elf::read_elf(FileSource(path), elf::ReaderKind::Lief);
  EXPECT_EQ(lief.gnu_stack, fast.gnu_stack) << path;
  EXPECT_EQ(lief.executable_stack(), fast.executable_stack()) << path;
  expect_agrees_with_readelf(fast, path);
  return fast;
}

struct Built {
  std::string exec, plain, none;
};

Built build_three(const TempDir& dir, const std::string& compiler, const std::string& prefix) {
  Built b;
  b.exec = build(dir, prefix + "libexec.so", k_ext, "-Wl,-z,execstack", compiler);
  b.plain = build(dir, prefix + "libplain.so", k_ext, "-Wl,-z,noexecstack", compiler);
  b.none = build(dir, prefix + "libnone.so", k_ext, "-Wl,-z,noexecstack", compiler);
  EXPECT_TRUE(drop_gnu_stack(b.none)) << "no PT_GNU_STACK to drop in " << b.none;
  return b;
}

const verdict::Finding* exec_stack(const verdict::Report& r) {
  for (const auto& f : r.findings)
    if (f.kind == verdict::FindingKind::ExecStack) return &f;
  return nullptr;
}

std::string describe(const verdict::Report& r) {
  return verdict::render_text(r, false);
}

image::Image db_image(const std::string& name) {
  return image::Db(source_dir() + "/db").resolve(name);
}

}  // namespace

TEST(ExecStack, BothReadersReadPtGnuStack) {
  TempDir dir;
  const Built b = build_three(dir, "gcc", "");
  const auto exec = read_every_way(b.exec);
  ASSERT_TRUE(exec.gnu_stack);
  EXPECT_EQ(*exec.gnu_stack, 7U);  // RWE
  EXPECT_TRUE(exec.executable_stack());
  const auto plain = read_every_way(b.plain);
  ASSERT_TRUE(plain.gnu_stack);
  EXPECT_EQ(*plain.gnu_stack, 6U);  // RW
  EXPECT_FALSE(plain.executable_stack());
  const auto none = read_every_way(b.none);
  EXPECT_FALSE(none.gnu_stack);
  EXPECT_TRUE(none.executable_stack()) << "x86_64's glibc defaults to an executable stack";
}

TEST(ExecStack, NoHeaderOnAarch64IsNotAnExecutableStack) {
  if (!have_program("aarch64-linux-gnu-gcc"))
    GTEST_SKIP() << "aarch64-linux-gnu-gcc absent (Debian: gcc-aarch64-linux-gnu)";
  TempDir dir;
  const Built b = build_three(dir, "aarch64-linux-gnu-gcc", "a64-");
  EXPECT_TRUE(read_every_way(b.exec).executable_stack());
  EXPECT_FALSE(read_every_way(b.plain).executable_stack());
  const auto none = read_every_way(b.none);
  EXPECT_FALSE(none.gnu_stack);
  EXPECT_FALSE(none.executable_stack()) << "AArch64's glibc defaults to a non-executable stack";
}

// The profile cache carries PT_GNU_STACK: a profile read back from it says what the cold read said.
TEST(ExecStack, TheProfileCacheKeepsIt) {
  TempDir dir;
  const Built b = build_three(dir, "gcc", "");
  const auto whl = make_wheel(dir, "es-1.0-py3-none-linux_x86_64.whl",
                              {{"es/libexec.so", b.exec}, {"es/libplain.so", b.plain}, {"es/libnone.so", b.none}});
  const ProfileCache cache(dir.file("cache"));
  const auto cold = inspect_cached(whl, {}, &cache);
  ASSERT_FALSE(cold.from_cache);
  const auto warm = inspect_cached(whl, {}, &cache);
  ASSERT_TRUE(warm.from_cache);
  ASSERT_EQ(warm.profile.members.size(), cold.profile.members.size());
  int checked = 0;
  for (std::size_t i = 0; i < cold.profile.members.size(); ++i) {
    const auto& c = cold.profile.members[i];
    const auto& w = warm.profile.members[i];
    ASSERT_TRUE(c.elf && w.elf) << c.path;
    EXPECT_EQ(w.elf->gnu_stack, c.elf->gnu_stack) << c.path;
    EXPECT_EQ(w.elf->executable_stack(), c.elf->executable_stack()) << c.path;
    checked += c.elf->gnu_stack ? (*c.elf->gnu_stack == 7U ? 1 : 10) : 100;
  }
  EXPECT_EQ(checked, 111) << "one RWE, one RW, one without PT_GNU_STACK";
}

// glibc 2.41 refuses the import (an error on the member, the member does not load); 2.36 loads it (a warning);
// a glibc version not stated is a condition that says how to state it; a library no member needs is judged too.
TEST(ExecStack, JudgedAgainstTheImagesGlibc) {
  TempDir dir;
  const Built b = build_three(dir, "gcc", "");
  const auto whl =
      make_wheel(dir, "es-1.0-py3-none-linux_x86_64.whl", {{"es/_es.abi3.so", b.exec}, {"es/libplain.so", b.plain}});
  const auto profile = inspect_wheel(whl);
  const auto d13 = verdict::check(profile, db_image("debian13"), {});
  const auto* f13 = exec_stack(d13);
  ASSERT_NE(f13, nullptr) << describe(d13);
  EXPECT_EQ(f13->severity, verdict::Severity::Error);
  EXPECT_EQ(f13->member, "es/_es.abi3.so");
  EXPECT_NE(f13->explanation.find("cannot enable executable stack as shared object requires: Invalid argument"),
            std::string::npos)
      << f13->explanation;
  EXPECT_EQ(d13.verdict, verdict::Verdict::Incompatible) << describe(d13);
  for (const auto& m : d13.members) EXPECT_EQ(m.loads, m.path != "es/_es.abi3.so") << m.path;
  EXPECT_EQ(verdict::summary(*f13), "executable stack (PT_GNU_STACK RWE): glibc 2.41+ refuses to dlopen it");

  const auto d12 = verdict::check(profile, db_image("debian12"), {});
  const auto* f12 = exec_stack(d12);
  ASSERT_NE(f12, nullptr) << describe(d12);
  EXPECT_EQ(f12->severity, verdict::Severity::Warning);
  EXPECT_NE(f12->explanation.find("SELinux"), std::string::npos) << f12->explanation;
  EXPECT_NE(d12.verdict, verdict::Verdict::Incompatible) << describe(d12);
  for (const auto& m : d12.members) EXPECT_TRUE(m.loads) << m.path;

  auto unstated = db_image("debian12");
  unstated.libc_version = image::Fact{};
  const auto du = verdict::check(profile, unstated, {});
  const auto* fu = exec_stack(du);
  ASSERT_NE(fu, nullptr) << describe(du);
  EXPECT_EQ(fu->severity, verdict::Severity::Condition);
  EXPECT_NE(fu->explanation.find("not stated"), std::string::npos) << fu->explanation;
  EXPECT_NE(fu->explanation.find("--assume libc_version="), std::string::npos) << fu->explanation;
  EXPECT_EQ(du.verdict, verdict::Verdict::Unknown) << describe(du);
}

// A library that an extension module needs fails that module's import under 2.41 (loaded_by names it), and
// one that no root needs is refused on its own; without PT_GNU_STACK it is the same on x86_64.
TEST(ExecStack, TheImportThatLoadsItFails) {
  TempDir dir;
  build(dir, "libes.so", "int es(void) { return 1; }\n", "-Wl,-soname,libes.so -Wl,-z,execstack");
  const std::string ext = build(dir, "_core.abi3.so", "int es(void);\nint PyInit__core(void) { return es(); }\n",
                                "-L" + dir.path() + " -les -Wl,-rpath,'$ORIGIN'");
  const std::string none = build(dir, "libnone.so", "int none(void) { return 2; }\n", "");
  ASSERT_TRUE(drop_gnu_stack(none));
  const auto whl =
      make_wheel(dir, "es-1.0-py3-none-linux_x86_64.whl",
                 {{"es/_core.abi3.so", ext}, {"es/libes.so", dir.file("libes.so")}, {"es/libnone.so", none}});
  const auto r = verdict::check(inspect_wheel(whl), db_image("debian13"), {});
  std::map<std::string, const verdict::Finding*> by_member;
  for (const auto& f : r.findings)
    if (f.kind == verdict::FindingKind::ExecStack) by_member[f.member] = &f;
  ASSERT_EQ(by_member.size(), 2U) << describe(r);
  ASSERT_TRUE(by_member.count("es/libes.so"));
  EXPECT_EQ(by_member["es/libes.so"]->roots, std::vector<std::string>{"es/_core.abi3.so"});
  ASSERT_TRUE(by_member.count("es/libnone.so"));
  EXPECT_EQ(by_member["es/libnone.so"]->required_version, "no PT_GNU_STACK (an executable stack on x86_64)");
  for (const auto& m : r.members) EXPECT_FALSE(m.loads) << m.path << "\n" << describe(r);
}

// A library only a program of the wheel loads, as it starts: glibc 2.41 still makes the stack executable then
// (tests/loader/execstack.py runs such a program), so it is information, not an error.
TEST(ExecStack, AProgramsStartStillAllowsIt) {
  TempDir dir;
  build(dir, "libes.so", "int es(void) { return 1; }\n", "-Wl,-soname,libes.so -Wl,-z,execstack");
  const std::string main_c = dir.write("prog.c", "int es(void);\nint main(void) { return es() - 1; }\n");
  const std::string prog = dir.file("prog");
  const auto r = wheelcheck::test::run("gcc -o " + shell_quote(prog) + " " + shell_quote(main_c) + " -L" +
                                       shell_quote(dir.path()) + " -les -Wl,-rpath,'$ORIGIN/../lib'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto whl = make_wheel(dir, "es-1.0-py3-none-linux_x86_64.whl",
                              {{"es/bin/prog", prog}, {"es/lib/libes.so", dir.file("libes.so")}});
  const auto report = verdict::check(inspect_wheel(whl), db_image("debian13"), {});
  const auto* f = exec_stack(report);
  ASSERT_NE(f, nullptr) << describe(report);
  EXPECT_EQ(f->member, "es/lib/libes.so");
  EXPECT_EQ(f->severity, verdict::Severity::Info) << f->explanation;
  for (const auto& m : report.members) EXPECT_TRUE(m.loads) << m.path << "\n" << describe(report);
}

// Like any member error, one in an optional route that is off degrades the wheel only.
TEST(ExecStack, InAnOptionalRouteItDegrades) {
  TempDir dir;
  const std::string core = build(dir, "_core.abi3.so", "int PyInit__core(void) { return 1; }\n", "");
  const std::string opt = build(dir, "_opt.abi3.so", "int PyInit__opt(void) { return 1; }\n", "-Wl,-z,execstack");
  const auto whl =
      make_wheel(dir, "es-1.0-py3-none-linux_x86_64.whl", {{"pkg/_core.abi3.so", core}, {"pkg/_opt.abi3.so", opt}});
  const auto rules = rules::parse(R"({"schema": "wheelcheck-rules/1", "name": "t", "routes": [{"name": "opt",
      "optional": true, "members": ["pkg/_opt*"], "gates": {"USE_OPT": "0"}}]})",
                                  "test rules");
  verdict::CheckOptions o;
  o.rules = &rules;
  // debian13 and debian12 with Python 3.12 stated: nothing else leaves the answer open.
  TempDir d;
  const std::string d13 = d.file("d13.json");
  write_binary(d13, R"({"schema": "wheelcheck-image/1", "name": "d13", "summary": "test image",
      "layers": ["debian13", "python3.12"]})");
  const auto r = verdict::check(inspect_wheel(whl), db_image(d13), o);
  ASSERT_NE(exec_stack(r), nullptr) << describe(r);
  EXPECT_EQ(r.verdict, verdict::Verdict::Degraded) << describe(r);
  // The same wheel on glibc 2.36: the route is on, and the wheel compatible (a warning says 2.41 refuses it).
  const auto old = verdict::check(inspect_wheel(whl), db_image(image_file(d, "d12")), o);
  EXPECT_EQ(old.verdict, verdict::Verdict::Compatible) << describe(old);
}

// lint: a warning with no image; a library asking for none is not named.
TEST(ExecStack, LintWarnsWithNoImage) {
  TempDir dir;
  const Built b = build_three(dir, "gcc", "");
  const auto whl = make_wheel(dir, "es-1.0-py3-none-linux_x86_64.whl",
                              {{"es/libexec.so", b.exec}, {"es/libplain.so", b.plain}, {"es/libnone.so", b.none}});
  const auto report = lint::lint(inspect_wheel(whl), lint::Options{});
  std::vector<std::string> named;
  for (const auto& f : report.findings) {
    if (f.kind != verdict::FindingKind::ExecStack) continue;
    EXPECT_EQ(f.severity, verdict::Severity::Warning) << f.member;
    named.push_back(f.member);
  }
  std::sort(named.begin(), named.end());
  EXPECT_EQ(named, (std::vector<std::string>{"es/libexec.so", "es/libnone.so"}));
}

}  // namespace unity_test_exec_stack
