// Headers-only reads (`--verify headers`, remote wheels): a member's end decoded on its own
// (inspector/wheel/deflate_tail.cpp) and the MemberReader that serves the ELF reader. The reference is
// always the full read of the same bytes.
#include <zlib.h>

#include <random>

#include "inspector/wheel/deflate_tail.hpp"
#include "support.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck {
namespace {

using test::TempDir;

// Raw deflate (no zlib header), as a zip member holds it.
std::vector<std::byte> raw_deflate(const std::vector<std::byte>& data, int level) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<std::byte> out(deflateBound(&z, static_cast<uLong>(data.size())));
  z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Compressible data with many back-references, mostly to recent bytes (as in code and tables); a run of
// copies that always refers back to the unknown window stays unknown, which the decoder must say.
std::vector<std::byte> sample_data(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> out;
  out.reserve(size);
  while (out.size() < size) {
    if (out.size() < 4096 || rng() % 3 == 0) {
      for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>(rng() & 0xFF));
      continue;
    }
    const std::size_t len = 4 + rng() % 24;
    const std::size_t from = out.size() - 1 - rng() % 2048;
    for (std::size_t i = 0; i < len; ++i) out.push_back(out[from + i]);
  }
  out.resize(size);
  return out;
}

TEST(DeflateTail, KnownBytesAreExactlyTheStreamsEnd) {
  for (const int level : {1, 6, 9}) {
    const auto data = sample_data(6 << 20, 7U + static_cast<unsigned>(level));
    const auto packed = raw_deflate(data, level);
    const std::size_t tail_len = 512 << 10;
    ASSERT_GT(packed.size(), tail_len);
    const auto tail = std::span(packed).last(tail_len);
    const auto t = wheel::inflate_tail(tail, data.size(), std::uint64_t{64} << 20);
    ASSERT_TRUE(t.has_value()) << "level " << level << ": no block boundary found in the last " << tail_len << " bytes";
    ASSERT_EQ(t->first + t->bytes.size(), data.size());
    std::size_t known = 0;
    for (std::size_t i = 0; i < t->bytes.size(); ++i) {
      if (!t->known(i)) continue;
      ++known;
      ASSERT_EQ(t->bytes[i], data[t->first + i])
          << "level " << level << ": a byte marked known is wrong at " << t->first + i;
    }
    // Most of the decoded end is known, and the very last 64 KB entirely.
    EXPECT_GT(known, t->bytes.size() / 2) << "level " << level;
    EXPECT_TRUE(t->covers(data.size() - (64 << 10), 64 << 10)) << "level " << level;
  }
}

TEST(DeflateTail, RefusesWhatIsNotTheEndOfAStream) {
  const auto data = sample_data(2 << 20, 3);
  const auto packed = raw_deflate(data, 6);
  // A window of the stream that does not reach its end: no candidate ends with the final block there.
  const auto middle = std::span(packed).subspan(packed.size() / 4, packed.size() / 4);
  EXPECT_FALSE(wheel::inflate_tail(middle, data.size(), std::uint64_t{64} << 20).has_value());
  // Random bytes, and too little input.
  std::vector<std::byte> noise(256 << 10);
  std::mt19937 rng(11);
  for (auto& b : noise) b = static_cast<std::byte>(rng() & 0xFF);
  EXPECT_FALSE(wheel::inflate_tail(noise, 1 << 20, std::uint64_t{64} << 20).has_value());
  EXPECT_FALSE(wheel::inflate_tail(std::span(packed).last(4), data.size(), 1 << 20).has_value());
  // An output cap smaller than what the tail decodes to.
  EXPECT_FALSE(wheel::inflate_tail(std::span(packed).last(256 << 10), data.size(), 1024).has_value());
}

// A shared library whose dynamic section lies after 12 MB of incompressible read-only data, so that in a
// deflate wheel the headers-only read must decode the member's end on its own.
std::optional<std::string> build_big_library(const TempDir& dir) {
  std::vector<char> blob(12 << 20);
  std::mt19937 rng(5);
  for (auto& c : blob) c = static_cast<char>(rng() & 0xFF);
  test::write_binary(dir.file("blob.bin"), std::string(blob.begin(), blob.end()));
  const std::string source =
      "#include <stdio.h>\n"
      "__asm__(\".section .rodata\\n.globl big_blob\\nbig_blob:\\n.incbin \\\"" +
      dir.file("blob.bin") +
      "\\\"\\n.previous\\n\");\n"
      "extern const char big_blob[];\n"
      "int big_first(void) { return big_blob[0] + puts(\"x\"); }\n";
  std::string error;
  auto lib = test::build_shared(dir, "libbig.so", "big.c", source, "-Wl,-soname,libbig.so.1 -Wl,--no-as-needed -lm",
                                "gcc", &error);
  if (!lib) ADD_FAILURE() << error;
  return lib;
}

TEST(HeadersOnly, LargeMemberIsReadFromItsStartAndItsEnd) {
  TempDir dir;
  const auto lib = build_big_library(dir);
  ASSERT_TRUE(lib);
  const auto whl = test::make_wheel(dir, "big-1.0-cp311-cp311-linux_x86_64.whl", {{"big/libbig.so", *lib}});
  auto archive = wheel::ZipArchive::open(whl);
  const auto index = archive->find("big/libbig.so");
  ASSERT_TRUE(index);
  const auto& info = archive->members()[*index];
  ASSERT_GT(info.compressed_size, std::uint64_t{8} << 20) << "the blob should not compress";
  auto reader = archive->random_member(*index);
  // As a headers-only inspect reads it: no data section is looked through for GPU code.
  const auto headers = elf::read_elf_random(
      info.size, [&](std::uint64_t off, std::span<std::byte> out) { reader->read(off, out); }, {}, {},
      "a headers-only read");
  EXPECT_GT(reader->tail_bytes(), 0U) << "the dynamic section should come from the decoded end";
  EXPECT_LT(reader->inflated_from_start(), info.size / 4) << "the member was inflated nearly whole";
  const auto full = elf::read_elf_file(*lib);
  EXPECT_EQ(headers, full);
  EXPECT_EQ(headers.soname, "libbig.so.1");
  EXPECT_NE(std::find(headers.needed.begin(), headers.needed.end(), "libm.so.6"), headers.needed.end());
}

TEST(HeadersOnly, ProfilesEqualFullOnesWithoutVerifying) {
  TempDir dir;
  const auto lib = build_big_library(dir);
  ASSERT_TRUE(lib);
  std::vector<std::string> wheels = {
      test::make_wheel(dir, "big-1.0-cp311-cp311-linux_x86_64.whl", {{"big/libbig.so", *lib}}),
      test::make_wheel(dir, "bigstored-1.0-cp311-cp311-linux_x86_64.whl", {{"big/libbig.so", *lib}}, {"--stored"})};
  for (const auto& w : test::find_files(test::shared_dir() + "/fixtures/auditwheel-wheels", ".whl"))
    wheels.push_back(w);
  ASSERT_GT(wheels.size(), 4U) << "../shared/fixtures/auditwheel-wheels should hold auditwheel's test wheels";
  for (const auto& w : wheels) {
    SCOPED_TRACE(w);
    InspectOptions full_options;
    const auto full = inspect_wheel(w, full_options);
    InspectOptions headers_options;
    headers_options.verify = Verify::Headers;
    const auto headers = inspect_wheel(w, headers_options);
    EXPECT_EQ(headers.integrity, "headers-only");
    EXPECT_EQ(full.integrity, "full");
    EXPECT_TRUE(headers.sha256.empty()) << "a local headers-only read does not hash the file";
    EXPECT_FALSE(headers.record_verified);
    EXPECT_EQ(headers.metadata.name, full.metadata.name);
    EXPECT_EQ(headers.metadata.requires_python, full.metadata.requires_python);
    ASSERT_EQ(headers.members.size(), full.members.size());
    for (std::size_t i = 0; i < full.members.size(); ++i) {
      EXPECT_EQ(headers.members[i].path, full.members[i].path);
      EXPECT_EQ(headers.members[i].elf, full.members[i].elf) << full.members[i].path;
    }
    // Through a RandomAccess (the remote path) the answer is the same.
    const auto via =
        inspect_wheel(std::make_shared<FileRandomAccess>(w), w.substr(w.rfind('/') + 1), "", headers_options);
    ASSERT_EQ(via.members.size(), full.members.size());
    for (std::size_t i = 0; i < full.members.size(); ++i) EXPECT_EQ(via.members[i].elf, full.members[i].elf);
  }
}

TEST(HeadersOnly, CorruptTailIsAFindingNotACrash) {
  TempDir dir;
  const auto lib = build_big_library(dir);
  ASSERT_TRUE(lib);
  const auto whl = test::make_wheel(dir, "big-1.0-cp311-cp311-linux_x86_64.whl", {{"big/libbig.so", *lib}});
  // Flip bytes near the end of the member's compressed data: it is the first member, and the next local
  // header (the first .dist-info file, its name 30 bytes in) follows its data.
  auto bytes = test::read_file(whl);
  const std::size_t next = bytes.find("big-1.0.dist-info/");
  ASSERT_NE(next, std::string::npos);
  const std::size_t end = next - 30;
  ASSERT_EQ(bytes.compare(end, 4, std::string("PK\x03\x04", 4)), 0);
  for (std::size_t i = end - 2000; i < end - 100; i += 7) bytes[i] = static_cast<char>(bytes[i] ^ 0x5A);
  test::write_binary(dir.file("bad-1.0-cp311-cp311-linux_x86_64.whl"), bytes);
  InspectOptions o;
  o.verify = Verify::Headers;
  const auto p = inspect_wheel(dir.file("bad-1.0-cp311-cp311-linux_x86_64.whl"), o);
  // Either the damaged end is refused (a problem for the member), or it was not needed; never a crash,
  // and never an ELF made of damaged bytes that disagrees with the real one silently.
  ASSERT_EQ(p.members.size() + p.problems.size() > 0, true);
  if (p.problems.empty()) {
    ASSERT_EQ(p.members.size(), 1U);
    ASSERT_TRUE(p.members[0].elf);
    EXPECT_EQ(*p.members[0].elf, elf::read_elf_file(*lib));
  }
}

TEST(HeadersOnly, LiefReaderIsRefused) {
  InspectOptions o;
  o.verify = Verify::Headers;
  o.reader = elf::ReaderKind::Lief;
  TempDir dir;
  const auto whl = test::make_wheel(dir, "x-1.0-py3-none-any.whl", {});
  try {
    inspect_wheel(whl, o);
    FAIL() << "expected a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
}

}  // namespace
}  // namespace wheelcheck
