// The fatbin reader against the build itself: kernels compiled here with nvcc for chosen -gencode sets
// (tests/cuda_support.hpp) must read back as exactly what nvcc was asked to embed, through every reader
// (a file read with pread, a deflated member streamed once, a stored member read header by header,
// LIEF's whole copy), and the real CUDA 13.0 libraries of this machine must read without error. Damaged
// containers are cut and corrupted here to check that a bad fatbin never makes the member unreadable.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>

#include "cuda_support.hpp"
#include "inspector/cuda/fatbin.hpp"
#include "wheelcheck/cuda.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/profile.hpp"

namespace wheelcheck::test {
namespace {

std::vector<std::string> names(const std::vector<cuda::Arch>& v, bool ptx) {
  std::vector<std::string> out;
  for (const auto& a : v) out.push_back(ptx ? cuda::compute_name(a) : cuda::sm_name(a));
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) {
    auto num = [](const std::string& s) { return std::stoi(s.substr(s.find('_') + 1)); };
    return num(a) != num(b) ? num(a) < num(b) : a < b;
  });
  return v;
}

// What a case's library must read as, whichever reader read it (`loaded_code`: the sections outside
// .nv_fatbin are looked through, as every reader but a headers-only one does).
void expect_case(const KernelCase& c, const std::optional<cuda::Fatbins>& f, const std::string& how,
                 bool loaded_code = true) {
  SCOPED_TRACE(c.name + " via " + how + " (" + c.flags + (c.embed.empty() ? "" : "; embedded " + c.embed) + ")");
  ASSERT_TRUE(f.has_value()) << "no .nv_fatbin found";
  EXPECT_EQ(f->unread, "");
  EXPECT_EQ(names(f->sass(), false), sorted(c.sass));
  EXPECT_EQ(names(f->ptx(), true), sorted(c.ptx));
  EXPECT_GE(f->containers, 1U);
  EXPECT_EQ(f->embedded_unread, "");
  if (c.embed.empty()) {
    EXPECT_EQ(f->embedded_containers, 0U);
    EXPECT_TRUE(f->embedded_sections.empty());
  } else {
    EXPECT_EQ(f->embedded_containers, 1U);  // nvcc -fatbin writes one container
    EXPECT_EQ(f->embedded_sections, std::vector<std::string>{".cask_resource"});
  }
  std::uint64_t counted = 0;
  for (const auto& v : f->variants) {
    counted += v.entries;
    if (v.kind == cuda::CodeKind::Ptx) {
      ASSERT_TRUE(v.ptx_isa.has_value());
      EXPECT_EQ(v.ptx_isa->text(), "9.0");  // CUDA 13.0's nvcc writes PTX ISA 9.0
    } else {
      EXPECT_FALSE(v.ptx_isa.has_value());
    }
    if (c.compressed == 1) EXPECT_TRUE(v.compressed) << cuda::sm_name(v.arch);
    if (c.compressed == 0) EXPECT_FALSE(v.compressed) << cuda::sm_name(v.arch);
  }
  EXPECT_EQ(counted, f->entries + f->embedded_entries);
  EXPECT_GT(f->section_size, 0U);
}

class Fatbin : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    m_dir = kernel_dir(error);
    if (m_dir.empty()) GTEST_SKIP() << error;
  }
  std::string lib(const KernelCase& c) const { return m_dir + "/libk_" + c.name + ".so"; }
  std::string m_dir;
};

TEST_F(Fatbin, FilesReadAsBuilt) {
  for (const auto& c : kernel_cases()) expect_case(c, cuda::read_file(lib(c)).fatbins, "pread");
}

TEST_F(Fatbin, LiefReadsTheSame) {
  for (const auto& c : kernel_cases()) {
    const std::string bytes = read_file(lib(c));
    const std::vector<std::uint8_t> v(bytes.begin(), bytes.end());
    cuda::CodeReader code(std::as_bytes(std::span<const std::uint8_t>(v)));
    (void)elf::read_elf_lief(v, c.name, &code);
    expect_case(c, code.fatbins(), "LIEF");
    EXPECT_EQ(code.fatbins(), cuda::read_file(lib(c)).fatbins) << c.name;
  }
}

// Every kernel in one wheel, deflated: each member streams once through the seeking walker.
TEST_F(Fatbin, StreamedMembersReadAsBuilt) {
  TempDir tmp;
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& c : kernel_cases()) files.emplace_back("kern/libk_" + c.name + ".so", lib(c));
  const auto wheel = make_wheel(tmp, "kern-1.0-py3-none-linux_x86_64.whl", files);
  const auto p = inspect_wheel(wheel);
  ASSERT_EQ(p.members.size(), kernel_cases().size());
  for (const auto& c : kernel_cases()) {
    const auto it = std::find_if(p.members.begin(), p.members.end(),
                                 [&](const MemberProfile& m) { return m.path == "kern/libk_" + c.name + ".so"; });
    ASSERT_NE(it, p.members.end());
    ASSERT_TRUE(it->elf.has_value()) << it->error;
    expect_case(c, it->cuda, "stream");
    EXPECT_EQ(it->cuda, cuda::read_file(lib(c)).fatbins) << c.name;
  }
  // The cache's binary form keeps them.
  const auto back = deserialize_profile(serialize_profile(p));
  for (std::size_t i = 0; i < p.members.size(); ++i) EXPECT_EQ(back.members[i].cuda, p.members[i].cuda);
}

// Headers-only: a stored member's fatbin is read header by header; a deflated one's is named, unread.
TEST_F(Fatbin, HeadersOnlyStoredAndDeflated) {
  TempDir tmp;
  const auto& c = kernel_cases()[3];  // family: SASS and PTX, several containers
  const auto stored = make_wheel(tmp, "st-1.0-py3-none-linux_x86_64.whl", {{"k/libk.so", lib(c)}}, {"--stored"});
  const auto deflated = make_wheel(tmp, "de-1.0-py3-none-linux_x86_64.whl", {{"k/libk.so", lib(c)}});
  InspectOptions o;
  o.verify = Verify::Headers;
  const auto ps = inspect_wheel(stored, o);
  ASSERT_EQ(ps.members.size(), 1U);
  auto head = ps.members[0].cuda;
  ASSERT_TRUE(head.has_value());
  // A headers-only read fetches no data sections: it says so, and reads .nv_fatbin alone.
  EXPECT_NE(head->embedded_unread.find("headers-only"), std::string::npos);
  head->embedded_unread.clear();
  expect_case(c, head, "headers-only stored");
  const auto pd = inspect_wheel(deflated, o);
  ASSERT_EQ(pd.members.size(), 1U);
  ASSERT_TRUE(pd.members[0].cuda.has_value());
  EXPECT_NE(pd.members[0].cuda->unread.find("headers-only"), std::string::npos);
  EXPECT_TRUE(pd.members[0].cuda->variants.empty());
  EXPECT_EQ(pd.members[0].cuda->section_size, ps.members[0].cuda->section_size);
}

// Code a library keeps in another section to load itself: a full read finds it (the streamed member
// above, each reader), a headers-only read of the stored member reads .nv_fatbin alone and says why.
TEST_F(Fatbin, LoadedCodeOutsideNvFatbin) {
  const auto it =
      std::find_if(kernel_cases().begin(), kernel_cases().end(), [](const KernelCase& c) { return !c.embed.empty(); });
  ASSERT_NE(it, kernel_cases().end());
  TempDir tmp;
  const auto stored = make_wheel(tmp, "st-1.0-py3-none-linux_x86_64.whl", {{"k/libk.so", lib(*it)}}, {"--stored"});
  expect_case(*it, inspect_wheel(stored).members.at(0).cuda, "stored, full read");
  InspectOptions o;
  o.verify = Verify::Headers;
  const auto head = inspect_wheel(stored, o).members.at(0).cuda;
  ASSERT_TRUE(head.has_value());
  EXPECT_NE(head->embedded_unread.find("headers-only"), std::string::npos);
  EXPECT_EQ(head->embedded_containers, 0U);
  EXPECT_EQ(names(head->sass(), false), std::vector<std::string>{"sm_80"});  // .nv_fatbin's alone
  EXPECT_TRUE(head->ptx().empty());
}

// The section's bytes, cut and corrupted: never an exception, always a reason.
TEST_F(Fatbin, DamagedContainersSayWhy) {
  const auto& c = kernel_cases()[1];
  const auto r = run("objcopy -O binary --only-section=.nv_fatbin " + shell_quote(lib(c)) + " /dev/stdout");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::byte> section(r.out.size());
  std::memcpy(section.data(), r.out.data(), r.out.size());
  const auto whole = cuda::read_fatbins(section);
  EXPECT_EQ(whole.unread, "");
  EXPECT_EQ(whole, cuda::read_file(lib(c)).fatbins.value());

  auto cut = section;
  cut.resize(section.size() - 40);  // the last entry's payload runs past the end
  EXPECT_NE(cuda::read_fatbins(cut).unread.find("runs past"), std::string::npos);

  auto bad_magic = section;
  bad_magic[0] = std::byte{0x11};
  EXPECT_NE(cuda::read_fatbins(bad_magic).unread.find("no fatbin container"), std::string::npos);

  auto huge_entry = section;
  const std::uint32_t big = 1U << 30;
  std::memcpy(huge_entry.data() + 16 + 4, &big, sizeof big);  // the first entry's header size
  EXPECT_NE(cuda::read_fatbins(huge_entry).unread.find("entry header"), std::string::npos);

  // Zero padding between two containers (as a linker may leave): both are read, nothing is unread.
  std::uint64_t first_size = 0;
  std::memcpy(&first_size, section.data() + 8, sizeof first_size);
  ASSERT_LT(16 + first_size, section.size()) << "the case has two containers";
  auto padded = section;
  padded.insert(padded.begin() + static_cast<std::ptrdiff_t>(16 + first_size), 8, std::byte{0});
  auto read_padded = cuda::read_fatbins(padded);
  EXPECT_EQ(read_padded.unread, "");
  EXPECT_EQ(read_padded.containers, whole.containers);
  EXPECT_EQ(read_padded.variants, whole.variants);

  // Seeking over the same damage finds nothing rather than something false.
  cuda::FatbinWalker seek(0, bad_magic.size(), true);
  seek.feed(0, bad_magic);
  for (const auto& k : seek.containers()) EXPECT_GT(k.begin, 0U);
}

// Byte by byte: the seeking walker gathers headers that chunk boundaries cut.
TEST_F(Fatbin, SeekingAcrossTinyChunks) {
  const auto& c = kernel_cases()[2];
  const std::string bytes = read_file(lib(c));
  cuda::FatbinWalker whole(0, bytes.size(), true);
  whole.feed(0, std::as_bytes(std::span(bytes.data(), bytes.size())));
  cuda::FatbinWalker tiny(0, bytes.size(), true);
  for (std::size_t i = 0; i < bytes.size(); i += 7) {
    const std::size_t n = std::min<std::size_t>(7, bytes.size() - i);
    tiny.feed(i, std::as_bytes(std::span(bytes.data() + i, n)));
  }
  ASSERT_FALSE(whole.containers().empty());
  ASSERT_EQ(tiny.containers().size(), whole.containers().size());
  for (std::size_t i = 0; i < whole.containers().size(); ++i) {
    EXPECT_EQ(tiny.containers()[i].begin, whole.containers()[i].begin);
    EXPECT_EQ(tiny.containers()[i].variants, whole.containers()[i].variants);
  }
}

// The real CUDA 13.0 libraries of this machine: every shared library of lib64 (cuBLAS, cuDNN, cuFFT, NCCL,
// ...) is read, and every one with GPU code reads without error, for GPUs CUDA 13 builds for, its code
// outside .nv_fatbin too.
TEST(FatbinRealLibraries, Cuda13LibrariesRead) {
  namespace fs = std::filesystem;
  const std::string lib64 = "/usr/local/cuda-13.0/lib64";
  if (!is_dir(lib64)) GTEST_SKIP() << "no CUDA 13.0 under /usr/local/cuda-13.0 on this machine; " << k_cuda13_how;
  std::vector<std::string> libs;
  for (const auto& e : fs::directory_iterator(lib64)) {
    const auto name = e.path().filename().string();
    if (e.is_regular_file() && !e.is_symlink() && name.find(".so") != std::string::npos) libs.push_back(name);
  }
  std::sort(libs.begin(), libs.end());
  std::set<std::string> with_fatbins;
  std::uint64_t containers = 0;
  std::uint64_t entries = 0;
  std::uint64_t embedded = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const auto& name : libs) {
    SCOPED_TRACE(name);
    const auto t0 = std::chrono::steady_clock::now();
    const auto b = cuda::read_file(lib64 + "/" + name).fatbins;
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    if (!b) continue;
    with_fatbins.insert(name);
    containers += b->containers;
    entries += b->entries;
    EXPECT_EQ(b->unread, "");
    EXPECT_GT(b->entries + b->embedded_entries, 0U);
    EXPECT_EQ(b->section_size == 0, b->containers == 0);  // libcupti: its code is all elsewhere
    EXPECT_EQ(b->embedded_unread, "");
    EXPECT_FALSE(b->sass().empty() && b->ptx().empty());
    // The toolkit's own registered code is for sm_75 and up. cuDNN 9's precompiled engines (a product of
    // its own) still carry two sm_70 entries, and cuSPARSE keeps sm_70 SASS among the code it loads itself.
    if (name.rfind("libcudnn", 0) != 0 && b->embedded_containers == 0) {
      for (const auto& a : b->sass()) EXPECT_GE(a.number(), 75) << "CUDA 13 builds for sm_75 and up";
    }
    embedded += b->embedded_entries;
    std::printf(
        "  %s: %llu containers, %llu entries in .nv_fatbin; %llu containers, %llu entries in %s; SASS %zu "
        "archs, PTX %zu archs (%lld ms)\n",
        name.c_str(), static_cast<unsigned long long>(b->containers), static_cast<unsigned long long>(b->entries),
        static_cast<unsigned long long>(b->embedded_containers), static_cast<unsigned long long>(b->embedded_entries),
        b->embedded_sections.empty() ? "no other section" : join(b->embedded_sections, ", ").c_str(), b->sass().size(),
        b->ptx().size(), static_cast<long long>(ms));
    // cuFFT registers one small container and loads its kernels itself from .ldata: read only .nv_fatbin,
    // it would seem to run on Turing alone.
    if (name == "libcufft.so.12") {
      EXPECT_EQ(b->embedded_sections, std::vector<std::string>{".ldata"});
      EXPECT_GT(b->embedded_containers, 1000U);
      EXPECT_TRUE(cuda::coverage(*b, cuda::Arch{9, 0, 0}).runs);
      EXPECT_TRUE(cuda::coverage(*b, cuda::Arch{12, 0, 0}).runs);
    }
    if (name == "libcublasLt.so.13") {
      EXPECT_NE(std::find(b->embedded_sections.begin(), b->embedded_sections.end(), ".cask_resource"),
                b->embedded_sections.end());
    }
  }
  const auto total =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "  %zu libraries read, %zu with GPU code: %llu containers, %llu entries in .nv_fatbin, %llu entries "
      "elsewhere (%lld ms)\n",
      libs.size(), with_fatbins.size(), static_cast<unsigned long long>(containers),
      static_cast<unsigned long long>(entries), static_cast<unsigned long long>(embedded),
      static_cast<long long>(total));
  for (const auto* name : {"libcublasLt.so.13", "libcublas.so.13", "libcudnn_ops.so.9"}) {
    if (std::find(libs.begin(), libs.end(), name) != libs.end()) {
      EXPECT_TRUE(with_fatbins.count(name)) << name << " carries fatbins";
    }
  }
  EXPECT_GE(with_fatbins.size(), 2U) << "cuBLAS and cuDNN carry fatbins";
}

}  // namespace
}  // namespace wheelcheck::test
