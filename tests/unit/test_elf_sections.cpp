// The ELF readers' SectionReader (wheelcheck/elf.hpp), the hook through which a room above elf/ (the CUDA
// fatbins, inspector/cuda/sections.cpp) reads some sections' contents along with the one ELF read: every
// reader hands over the same section table, with its names; a streamed read passes every byte once; a
// reader that does not want the table hears none.
#include <gtest/gtest.h>

#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "support.hpp"
#include "wheelcheck/bytes.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/util.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_elf_sections {

using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

// A section of its own, with bytes the test can recognize, beside the usual ones.
constexpr const char* k_blob_source = R"(
__attribute__((section(".wc_blob"), used)) const char wc_blob[100] = "the blob's own bytes";
int wc_answer(void) { return 42; }
)";

using Row = std::tuple<std::string, std::uint32_t, std::uint64_t, std::uint64_t, std::uint64_t>;

// Records what a read hands it: the table (as rows), how often, and what streamed by.
class Recorder final : public elf::SectionReader {
 public:
  explicit Recorder(bool wanted = true) : m_wanted(wanted) {}
  bool wants(elf::Endian) const override { return m_wanted; }
  void stream(std::uint64_t offset, std::span<const std::byte> data) override {
    if (offset != streamed) contiguous = false;
    streamed = offset + data.size();
  }
  void sections(const std::vector<elf::SectionHeader>& headers, bool names) override {
    ++calls;
    named = names;
    rows.clear();
    for (const auto& h : headers) rows.emplace_back(h.name.value_or("?"), h.type, h.flags, h.offset, h.size);
  }
  const Row* find(const std::string& name) const {
    for (const auto& r : rows) {
      if (std::get<0>(r) == name) return &r;
    }
    return nullptr;
  }

  int calls = 0;
  bool named = false;
  std::vector<Row> rows;
  std::uint64_t streamed = 0;
  bool contiguous = true;

 private:
  bool m_wanted;
};

std::string build_blob_library(const TempDir& dir) {
  std::string error;
  const auto lib = build_shared(dir, "libblob.so", "blob.c", k_blob_source, "", "gcc", &error);
  if (!lib) ADD_FAILURE() << error;
  return lib.value_or("");
}

}  // namespace

TEST(ElfSections, EveryReaderHandsOverTheSameNamedTable) {
  TempDir dir;
  const auto lib = build_blob_library(dir);
  ASSERT_FALSE(lib.empty());
  const auto size = FileSource(lib).size();

  Recorder streamed;
  const auto b = elf::read_elf(FileSource(lib), elf::ReaderKind::Fast, {}, &streamed);
  EXPECT_EQ(streamed.calls, 1);
  EXPECT_TRUE(streamed.named);
  EXPECT_EQ(streamed.streamed, size) << "a streamed read passes every byte of its first pass";
  EXPECT_TRUE(streamed.contiguous);
  const Row* blob = streamed.find(".wc_blob");
  ASSERT_NE(blob, nullptr);
  EXPECT_EQ(std::get<1>(*blob), 1U);       // SHT_PROGBITS
  EXPECT_NE(std::get<2>(*blob) & 2U, 0U);  // SHF_ALLOC
  EXPECT_EQ(std::get<4>(*blob), 100U);
  // The section's bytes are where the header says.
  const auto bytes = read_file_bytes(lib);
  ASSERT_LE(std::get<3>(*blob) + 20, bytes.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data() + std::get<3>(*blob)), 20), "the blob's own bytes");
  EXPECT_NE(streamed.find(".dynsym"), nullptr);
  EXPECT_NE(streamed.find(".shstrtab"), nullptr);

  // Several passes (nothing but the header kept on the first): the table once, the same.
  elf::ReaderLimits tiny;
  tiny.speculative_prefix = 64;
  Recorder passes;
  EXPECT_EQ(elf::read_elf(FileSource(lib), elf::ReaderKind::Fast, tiny, &passes), b);
  EXPECT_EQ(passes.calls, 1);
  EXPECT_EQ(passes.rows, streamed.rows);

  // Random access: .shstrtab is fetched for the names; the same table.
  Recorder random;
  EXPECT_EQ(elf::read_elf_file(lib, {}, &random), b);
  EXPECT_EQ(random.calls, 1);
  EXPECT_TRUE(random.named);
  EXPECT_EQ(random.rows, streamed.rows);

  // LIEF: the same named sections where the scanner found them.
  Recorder lief;
  EXPECT_EQ(elf::read_elf(FileSource(lib), elf::ReaderKind::Lief, {}, &lief), b);
  EXPECT_EQ(lief.calls, 1);
  ASSERT_NE(lief.find(".wc_blob"), nullptr);
  EXPECT_EQ(*lief.find(".wc_blob"), *blob);
  for (const auto& r : streamed.rows) {
    if (std::get<0>(r).empty()) continue;
    const Row* l = lief.find(std::get<0>(r));
    ASSERT_NE(l, nullptr) << std::get<0>(r);
    EXPECT_EQ(*l, r);
  }
}

TEST(ElfSections, AReaderThatDoesNotWantTheTableHearsNone) {
  TempDir dir;
  const auto lib = build_blob_library(dir);
  ASSERT_FALSE(lib.empty());
  Recorder streamed(false);
  const auto b = elf::read_elf(FileSource(lib), elf::ReaderKind::Fast, {}, &streamed);
  EXPECT_EQ(streamed.calls, 0);
  EXPECT_EQ(streamed.streamed, FileSource(lib).size());  // it still hears the stream
  Recorder random(false), lief(false);
  EXPECT_EQ(elf::read_elf_file(lib, {}, &random), b);
  EXPECT_EQ(elf::read_elf(FileSource(lib), elf::ReaderKind::Lief, {}, &lief), b);
  EXPECT_EQ(random.calls + lief.calls, 0);
  // And without a reader the Binary is the same.
  EXPECT_EQ(elf::read_elf_file(lib), b);
}

}  // namespace unity_test_elf_sections
