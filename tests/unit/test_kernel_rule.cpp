// The kernel rule of consistent_with, on programs built here: a statically linked program carries its own
// glibc, configured for the oldest kernel its NT_GNU_ABI_TAG note names (gcc -static on Debian 12: Linux
// 3.2.0 for x86_64, 3.7.0 for aarch64), so it is consistent with no policy whose systems run an older
// kernel (manylinux_2_5 and _2_12: CentOS 5 and 6). Each reader must find the same note as `readelf -n`;
// a dynamically linked program with the same note is not bound by it; a damaged note names no kernel.
// Notes other than the ones gcc writes are made by rewriting the built program's note in place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <regex>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "wheelcheck/bytes.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/verdict.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_kernel_rule {

using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

const image::Db& db() {
  static const image::Db d(source_dir() + "/db");
  return d;
}

std::string dump(const policy::Consistency& c) {
  return policy::to_json(c, std::nullopt).dump(2);
}

const char* const k_main = "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n";

// `compiler [-static] -o NAME main.c`; nullopt with the compiler's message when it cannot.
std::optional<std::string> build_program(const TempDir& dir, const std::string& name, const std::string& compiler,
                                         bool static_link, std::string& error) {
  const auto src = dir.write(name + ".c", k_main);
  const auto out = dir.file(name);
  const auto r = run(compiler + (static_link ? " -static" : "") + " -o " + shell_quote(out) + " " + shell_quote(src));
  if (r.exit_code != 0) {
    error = r.err;
    return std::nullopt;
  }
  return out;
}

// `readelf -n`'s "OS: Linux, ABI: 3.2.0", as "Linux 3.2.0"; "" without an ABI tag.
std::string readelf_abi_tag(const std::string& path) {
  const auto r = run("readelf -nW " + shell_quote(path));
  std::smatch m;
  if (!std::regex_search(r.out, m, std::regex(R"(OS: (\w+), ABI: (\d+\.\d+\.\d+))"))) return "";
  return m[1].str() + " " + m[2].str();
}

std::string text(const std::optional<elf::AbiTag>& t) {
  return t ? t->os_name() + " " + t->version() : "";
}

// Every way of reading the file gives the same ABI tag: the scanner streaming it, in several passes,
// through random access, and LIEF.
std::optional<elf::AbiTag> abi_tag_of_every_reader(const std::string& path) {
  const auto fast = elf::read_elf(FileSource(path), elf::ReaderKind::Fast);
  elf::ReaderLimits tiny;
  tiny.speculative_prefix = 64;
  EXPECT_EQ(text(elf::read_elf(FileSource(path), elf::ReaderKind::Fast, tiny).abi_tag), text(fast.abi_tag)) << path;
  EXPECT_EQ(text(elf::read_elf_file(path).abi_tag), text(fast.abi_tag)) << path;
  EXPECT_EQ(text(elf::read_elf(FileSource(path), elf::ReaderKind::Lief).abi_tag), text(fast.abi_tag)) << path;
  return fast.abi_tag;
}

// The built program's ABI tag note, found by its header (namesz 4, descsz 16, type 1, "GNU"), in a
// little-endian file: the offset of its header.
std::size_t find_abi_note(const std::string& bytes) {
  const char header[] = {4, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0, 'G', 'N', 'U', 0};
  const auto at = bytes.find(std::string(header, sizeof header));
  EXPECT_NE(at, std::string::npos) << "no ABI tag note in the built program";
  return at;
}

void put_u32(std::string& bytes, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A copy of `path` whose ABI tag note names another kernel.
std::string with_kernel(const TempDir& dir, const std::string& path, const std::string& name, std::uint32_t major,
                        std::uint32_t minor, std::uint32_t patch) {
  auto bytes = read_file(path);
  const auto at = find_abi_note(bytes);
  if (at == std::string::npos) return path;
  put_u32(bytes, at + 20, major);
  put_u32(bytes, at + 24, minor);
  put_u32(bytes, at + 28, patch);
  const auto out = dir.file(name);
  write_binary(out, bytes);
  return out;
}

policy::Consistency analyze_in_wheel(const TempDir& dir, const std::string& program, const std::string& arch,
                                     WheelProfile* profile = nullptr) {
  const auto wheel = make_wheel(dir, "tool-1.0-py3-none-linux_" + arch + ".whl", {{"tool/bin/tool", program}});
  auto p = inspect_wheel(wheel);
  const auto c = policy::analyze(p, db().policies());
  if (profile != nullptr) *profile = std::move(p);
  return c;
}

const policy::Constraint* kernel_rule(const policy::Consistency& c) {
  for (const auto& k : c.constrained_by) {
    if (k.rule == policy::Rule::Kernel) return &k;
  }
  return nullptr;
}

std::vector<std::string> kinds_on(const WheelProfile& w, const std::string& target) {
  verdict::CheckOptions o;
  o.policies = &db().policies();
  std::vector<std::string> out;
  for (const auto& f : verdict::check(w, db().get(target), o).findings) out.push_back(verdict::kind_name(f.kind));
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST(KernelRule, StaticX86ProgramIsNotForCentos5Or6) {
  TempDir d;
  std::string err;
  const auto tool = build_program(d, "tool", "gcc", true, err);
  if (!tool) GTEST_SKIP() << "no static libc here: " << err;
  const auto tag = abi_tag_of_every_reader(*tool);
  ASSERT_TRUE(tag) << "gcc -static wrote no NT_GNU_ABI_TAG note";
  EXPECT_EQ(text(tag), readelf_abi_tag(*tool));
  EXPECT_EQ(tag->os_name(), "Linux");

  WheelProfile p;
  const auto c = analyze_in_wheel(d, *tool, "x86_64", &p);
  ASSERT_EQ(c.arch, "x86_64") << "this test builds for the host: x86_64 only";
  EXPECT_EQ(c.tag, "manylinux_2_17_x86_64") << dump(c);
  const auto* k = kernel_rule(c);
  ASSERT_NE(k, nullptr) << dump(c);
  EXPECT_EQ(k->member, "tool/bin/tool");
  EXPECT_EQ(k->version, "Linux " + tag->version());
  EXPECT_EQ(k->ceiling, "manylinux_2_17_x86_64");
  EXPECT_NE(k->detail.find("tool/bin/tool"), std::string::npos) << k->detail;
  EXPECT_NE(k->detail.find("manylinux_2_12_x86_64 is for Linux 2.6.32, CentOS 6"), std::string::npos) << k->detail;
  EXPECT_EQ(policy::rule_name(k->rule), "kernel");
  // On a packaging target: a policy-kernel finding below manylinux2014, none from it on.
  EXPECT_TRUE(has(kinds_on(p, "manylinux_2_12_x86_64"), "policy-kernel"));
  EXPECT_TRUE(has(kinds_on(p, "manylinux_2_5_x86_64"), "policy-kernel"));
  EXPECT_FALSE(has(kinds_on(p, "manylinux_2_17_x86_64"), "policy-kernel"));
  // inspect --json carries the note.
  const auto json = nlohmann::json::parse(profile_to_json(p));
  EXPECT_EQ(json["members"][0]["elf"]["abi_tag"], (nlohmann::json{{"os", "Linux"}, {"kernel", tag->version()}}));
  // Tagged manylinux1, it overclaims for a reason auditwheel does not judge, and the fix says so.
  TempDir e;
  const auto claimed =
      inspect_wheel(make_wheel(e, "tool-1.0-py3-none-manylinux1_x86_64.whl", {{"tool/bin/tool", *tool}}));
  verdict::CheckOptions o;
  o.policies = &db().policies();
  bool claim = false;
  for (const auto& f : verdict::check(claimed, db().get("manylinux_2_5_x86_64"), o).findings) {
    if (f.kind != verdict::FindingKind::TagClaim) continue;
    claim = true;
    EXPECT_NE(f.fix.find("judges no kernel"), std::string::npos) << f.fix;
  }
  EXPECT_TRUE(claim);
}

TEST(KernelRule, StaticAarch64ProgramFitsCentos7) {
  if (!have_program("aarch64-linux-gnu-gcc")) GTEST_SKIP() << "aarch64-linux-gnu-gcc is not installed";
  TempDir d;
  std::string err;
  const auto tool = build_program(d, "tool", "aarch64-linux-gnu-gcc", true, err);
  if (!tool) GTEST_SKIP() << "no static aarch64 libc here: " << err;
  const auto tag = abi_tag_of_every_reader(*tool);
  ASSERT_TRUE(tag);
  EXPECT_EQ(text(tag), readelf_abi_tag(*tool));
  // 3.7.0 on Debian 12: within CentOS 7's 3.10, and manylinux2014 is aarch64's oldest policy anyway.
  const auto c = analyze_in_wheel(d, *tool, "aarch64");
  EXPECT_EQ(c.tag, "manylinux_2_17_aarch64") << dump(c);
  EXPECT_EQ(kernel_rule(c), nullptr) << dump(c);
  // The same program with a note above CentOS 7's kernel: the rule names it and Debian 9's.
  TempDir e;
  const auto newer = with_kernel(e, *tool, "tool", 4, 4, 0);
  EXPECT_EQ(readelf_abi_tag(newer), "Linux 4.4.0");
  const auto c2 = analyze_in_wheel(e, newer, "aarch64");
  EXPECT_EQ(c2.tag, "manylinux_2_24_aarch64") << dump(c2);
  const auto* k = kernel_rule(c2);
  ASSERT_NE(k, nullptr) << dump(c2);
  EXPECT_EQ(k->member, "tool/bin/tool");
  EXPECT_NE(k->detail.find("manylinux_2_17_aarch64 is for Linux 3.10, CentOS 7"), std::string::npos) << k->detail;
}

// The table beyond the legacy policies: Debian 9 and AlmaLinux 8, then no published kernel at all.
TEST(KernelRule, PerennialPoliciesUseTheirImagesKernelAndSayWhenNoneIsPublished) {
  TempDir d;
  std::string err;
  const auto tool = build_program(d, "tool", "gcc", true, err);
  if (!tool) GTEST_SKIP() << "no static libc here: " << err;
  struct Case {
    std::uint32_t major, minor;
    const char *tag, *says;
  };
  for (const auto& t : {Case{4, 9, "manylinux_2_24_x86_64", "manylinux_2_17_x86_64 is for Linux 3.10, CentOS 7"},
                        Case{4, 10, "manylinux_2_28_x86_64", "manylinux_2_27_x86_64 is for Linux 4.9, Debian 9"},
                        Case{5, 4, "linux_x86_64", "no kernel is published for manylinux_2_"}}) {
    TempDir e;
    const auto program = with_kernel(e, *tool, "tool", t.major, t.minor, 0);
    const auto c = analyze_in_wheel(e, program, "x86_64");
    EXPECT_EQ(c.tag, t.tag) << dump(c);
    const auto* k = kernel_rule(c);
    ASSERT_NE(k, nullptr) << dump(c);
    EXPECT_NE(k->detail.find(t.says), std::string::npos) << k->detail;
  }
}

TEST(KernelRule, DynamicallyLinkedProgramIsNotBoundByItsNote) {
  TempDir d;
  std::string err;
  const auto tool = build_program(d, "tool", "gcc", false, err);
  ASSERT_TRUE(tool) << err;
  // A note no policy's kernel meets: it would make a static program linux_x86_64.
  const auto program = with_kernel(d, *tool, "tool-new-note", 9, 0, 0);
  const auto tag = abi_tag_of_every_reader(program);
  ASSERT_TRUE(tag);
  EXPECT_EQ(text(tag), "Linux 9.0.0");
  EXPECT_EQ(text(tag), readelf_abi_tag(program));
  const auto c = analyze_in_wheel(d, program, "x86_64");
  EXPECT_EQ(kernel_rule(c), nullptr) << dump(c);
  EXPECT_NE(c.tag, "linux_x86_64") << dump(c);
}

// A damaged note names no kernel, crashes nothing, and every reader agrees on it.
TEST(KernelRule, DamagedNotesNameNoKernel) {
  TempDir d;
  std::string err;
  const auto tool = build_program(d, "tool", "gcc", true, err);
  if (!tool) GTEST_SKIP() << "no static libc here: " << err;
  const auto original = read_file(*tool);
  const auto at = find_abi_note(original);
  ASSERT_NE(at, std::string::npos);
  struct Damage {
    const char* name;
    std::size_t offset;  // from the note's header
    std::uint32_t value;
  };
  for (const auto& damage : {Damage{"wrong-owner", 12, 0x00564e47},  // "GNV"
                             Damage{"short-desc", 4, 8},             // a descriptor of two words
                             Damage{"empty-desc", 4, 0},             //
                             Damage{"huge-desc", 4, 0xfffffff0},     // runs past the segment
                             Damage{"long-name", 0, 0xfffffff0},     // so does the name
                             Damage{"other-type", 8, 3}}) {          // NT_GNU_BUILD_ID's number
    TempDir e;
    auto bytes = original;
    put_u32(bytes, at + damage.offset, damage.value);
    const auto path = e.file(damage.name);
    write_binary(path, bytes);
    std::optional<elf::AbiTag> tag;
    ASSERT_NO_THROW(tag = abi_tag_of_every_reader(path)) << damage.name;
    EXPECT_FALSE(tag) << damage.name << ": " << text(tag);
    const auto c = analyze_in_wheel(e, path, "x86_64");
    EXPECT_EQ(kernel_rule(c), nullptr) << damage.name << dump(c);
    EXPECT_EQ(c.tag, "manylinux_2_5_x86_64") << damage.name << dump(c);
  }
}

}  // namespace unity_test_kernel_rule
