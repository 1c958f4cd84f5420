// Headers-only reads (`--verify headers`, remote wheels): a member's end decoded on its own
// (inspector/wheel/deflate_tail.cpp) and the MemberReader that serves the ELF reader. The reference is
// always the full read of the same bytes.
#include <zlib.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <random>

#include "inspector/wheel/deflate_tail.hpp"
#include "net_server.hpp"
#include "support.hpp"
#include "wheelcheck/cuda.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/remote.hpp"
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

// A 24 MB stream with content predicted in its middle, as the ELF reader predicts a dynamic section:
// an anchor (8 bytes at an exact offset) and two 16-byte entries somewhere in a 256-byte range.
struct MiddleCase {
  std::vector<std::byte> data;
  ContentHint hint;
  std::vector<std::byte> packed;
};

MiddleCase middle_case(std::uint64_t at, int level) {
  MiddleCase c;
  c.data = sample_data(24 << 20, 17);
  auto put = [&](std::uint64_t offset, const std::string& text) {
    std::vector<std::byte> bytes(text.size());
    std::memcpy(bytes.data(), text.data(), text.size());
    std::copy(bytes.begin(), bytes.end(), c.data.begin() + static_cast<std::ptrdiff_t>(offset));
    return bytes;
  };
  c.hint.begin = at;
  c.hint.end = at + 256;
  c.hint.entries.push_back({at, at + 256, 16, put(at + 48, "DT_STRTAB=0x3140")});
  c.hint.entries.push_back({at, at + 256, 16, put(at + 96, "DT_SYMTAB=0x0818")});
  c.hint.anchors.push_back({at + 300 * 1024, put(at + 300 * 1024, "ANCHOR!!")});
  c.packed = raw_deflate(c.data, level);
  return c;
}

TEST(DeflateMiddle, PlacesThePieceByItsAnchorAndChecksTheEntries) {
  for (const int level : {1, 6, 9}) {
    SCOPED_TRACE(level);
    const std::uint64_t at = 15 << 20;
    const auto c = middle_case(at, level);
    wheel::MiddleRequest r;
    r.compressed_size = c.packed.size();
    r.uncompressed_size = c.data.size();
    const std::uint64_t estimate = at * c.packed.size() / c.data.size();
    r.sweep_from = estimate - (1 << 20);
    r.sweep_to = estimate + (2 << 20);
    r.want = at + 40;
    r.want_length = 100;
    r.hint = &c.hint;
    std::uint64_t fetched = 0;
    wheel::MiddleStats stats;
    const auto piece = wheel::inflate_middle(
        r,
        [&](std::uint64_t off, std::span<std::byte> out) {
          ASSERT_LE(off + out.size(), c.packed.size());
          std::memcpy(out.data(), c.packed.data() + off, out.size());
          fetched += out.size();
        },
        &stats);
    ASSERT_TRUE(piece.has_value()) << "no placement between " << r.sweep_from << " and " << r.sweep_to;
    EXPECT_TRUE(piece->covers(r.want, r.want_length));
    EXPECT_TRUE(piece->covers(c.hint.begin, c.hint.end - c.hint.begin));
    std::size_t known = 0;
    for (std::size_t i = 0; i < piece->bytes.size(); ++i) {
      if (!piece->known(i)) continue;
      ++known;
      ASSERT_EQ(piece->bytes[i], c.data[piece->first + i]) << "a byte marked known is wrong at " << piece->first + i;
    }
    EXPECT_GT(known, piece->bytes.size() / 2);
    // It read from below the estimate to just past the anchor, not the stream's end.
    EXPECT_EQ(fetched, stats.compressed_read);
    EXPECT_LT(stats.compressed_read, std::uint64_t{4} << 20);
  }
}

TEST(DeflateMiddle, NeverGuesses) {
  const std::uint64_t at = 15 << 20;
  const auto c = middle_case(at, 6);
  auto run = [&](const ContentHint& hint, std::uint64_t from, std::uint64_t to, std::span<const std::byte> packed) {
    wheel::MiddleRequest r;
    r.compressed_size = packed.size();
    r.uncompressed_size = c.data.size();
    r.sweep_from = from;
    r.sweep_to = to;
    r.want = at;
    r.want_length = 64;
    r.hint = &hint;
    return wheel::inflate_middle(r, [&](std::uint64_t off, std::span<std::byte> out) {
      std::memcpy(out.data(), packed.data() + off, out.size());
    });
  };
  const std::uint64_t estimate = at * c.packed.size() / c.data.size();
  ASSERT_TRUE(run(c.hint, estimate - (1 << 20), estimate + (2 << 20), c.packed));
  // A predicted entry that is not there: the anchor alone places nothing.
  auto wrong = c.hint;
  wrong.entries[1].bytes[15] = std::byte{'9'};
  EXPECT_FALSE(run(wrong, estimate - (1 << 20), estimate + (2 << 20), c.packed));
  // An anchor that is not in the data.
  auto absent = c.hint;
  absent.anchors[0].bytes[0] = std::byte{'X'};
  EXPECT_FALSE(run(absent, estimate - (1 << 20), estimate + (2 << 20), c.packed));
  // The sweep window ends before the anchor: no answer, and no read past sweep_to's chunk.
  EXPECT_FALSE(run(c.hint, estimate - (3 << 20), estimate - (2 << 20), c.packed));
  // Started past the wanted bytes: they lie before the sweep, which can only fail.
  EXPECT_FALSE(run(c.hint, estimate + (64 << 10), estimate + (4 << 20), c.packed));
  // Two anchors that place the output 16 bytes apart, and entries that fit either placement: refused.
  auto twice = c.hint;
  auto shifted = twice.anchors[0];
  shifted.offset += 16;
  twice.anchors.push_back(shifted);
  EXPECT_FALSE(run(twice, estimate - (1 << 20), estimate + (2 << 20), c.packed));
  // Damaged data: bytes flipped all over the swept range, then pure noise.
  auto damaged = c.packed;
  for (std::size_t i = static_cast<std::size_t>(estimate - (1 << 20)); i < estimate + (2 << 20); i += 97)
    damaged[i] ^= std::byte{0x5A};
  const auto hurt = run(c.hint, estimate - (1 << 20), estimate + (2 << 20), damaged);
  if (hurt) {  // damage that spared the bytes judged may still place them; then they are right
    ASSERT_TRUE(hurt->covers(at, 64));
    EXPECT_TRUE(std::equal(c.data.begin() + static_cast<std::ptrdiff_t>(at),
                           c.data.begin() + static_cast<std::ptrdiff_t>(at + 64),
                           hurt->bytes.begin() + static_cast<std::ptrdiff_t>(at - hurt->first)));
  }
  std::vector<std::byte> noise(4 << 20);
  std::mt19937 rng(3);
  for (auto& b : noise) b = static_cast<std::byte>(rng() & 0xFF);
  EXPECT_FALSE(run(c.hint, 0, noise.size(), noise));
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
  const elf::ReadAt read_at = [&](std::uint64_t off, std::span<std::byte> out) { reader->read(off, out); };
  cuda::CodeReader code(info.size, read_at, {}, "a headers-only read");
  const auto headers = elf::read_elf_random(info.size, read_at, {}, &code);
  EXPECT_GT(reader->tail_bytes(), 0U) << "the dynamic section should come from the decoded end";
  EXPECT_LT(reader->inflated_from_start(), info.size / 4) << "the member was inflated nearly whole";
  const auto full = elf::read_elf_file(*lib);
  EXPECT_EQ(headers, full);
  EXPECT_EQ(headers.soname, "libbig.so.1");
  EXPECT_NE(std::find(headers.needed.begin(), headers.needed.end(), "libm.so.6"), headers.needed.end());
}

// Counts the bytes read through it: what a member's reader asks of the wheel's file.
class CountingFile final : public RandomAccess {
 public:
  explicit CountingFile(const std::string& path) : m_file(path) {}
  std::uint64_t size() const override { return m_file.size(); }
  std::string name() const override { return m_file.name(); }
  void read_at(std::uint64_t offset, std::span<std::byte> out) const override {
    read += out.size();
    m_file.read_at(offset, out);
  }
  mutable std::atomic<std::uint64_t> read{0};

 private:
  FileRandomAccess m_file;
};

// A read that starts in the member's kept head and runs past the stream goes on from where the stream is,
// serving the start from the head: it does not inflate the member again from its start.
TEST(HeadersOnly, ReadPastTheKeptHeadContinuesTheStream) {
  TempDir dir;
  const auto data = sample_data(std::size_t{3} << 20, 11U);
  test::write_binary(dir.file("blob.bin"), std::string(reinterpret_cast<const char*>(data.data()), data.size()));
  const auto whl = test::make_wheel(dir, "blob-1.0-py3-none-any.whl", {{"blob/libblob.so", dir.file("blob.bin")}});
  auto file = std::make_shared<CountingFile>(whl);
  auto archive = wheel::ZipArchive::open(file, {}, false);
  const auto index = archive->find("blob/libblob.so");
  ASSERT_TRUE(index);
  const std::size_t first = 400 << 10, second = 900 << 10;  // both within the kept head's 1 MiB
  std::vector<std::byte> got(second);
  // What inflating the first 900 KB from the member's start costs, on a reader of its own.
  file->read = 0;
  archive->random_member(*index)->read(0, got);
  const std::uint64_t from_start = file->read;
  ASSERT_TRUE(std::equal(got.begin(), got.end(), data.begin()));
  auto reader = archive->random_member(*index);
  reader->read(0, std::span(got).first(first));
  file->read = 0;
  std::fill(got.begin(), got.end(), std::byte{0});
  reader->read(0, got);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin())) << "the bytes differ from the member's";
  EXPECT_EQ(reader->inflated_from_start(), second);
  // From where the stream was: about the compressed bytes of the last 500 KB, not of all 900 KB again.
  EXPECT_LT(file->read * 4, from_start * 3) << file->read << " bytes read against " << from_start << " from the start";
}

// A library built as libcublasLt.so.13 is: large-model data (.ldata, 12 MB that do not compress) after
// the dynamic section, and 8 MB of compressible read-only data before it. Its dynamic section is far from
// both ends of a deflate member.
std::optional<std::string> build_large_model_library(const TempDir& dir) {
  std::string blob(12 << 20, '\0');
  std::mt19937 rng(9);
  for (auto& c : blob) c = static_cast<char>(rng() & 0xFF);
  test::write_binary(dir.file("ldata.bin"), blob);
  std::string text;
  const char* words[] = {"cublasLtMatmul", "heuristic", "algo", "tile", "stage", "kernel", "sm90", "epilogue"};
  while (text.size() < (8 << 20)) {
    text += words[rng() % 8];
    text += rng() % 5 == 0 ? '\n' : ' ';
    text += std::to_string(rng() % 4096);
  }
  test::write_binary(dir.file("rodata.bin"), text);
  const std::string source =
      "#include <stdio.h>\n"
      "__asm__(\".section .rodata\\n.globl big_text\\nbig_text:\\n.incbin \\\"" +
      dir.file("rodata.bin") +
      "\\\"\\n.section .ldata,\\\"awl\\\",@progbits\\n.globl big_data\\nbig_data:\\n.incbin \\\"" +
      dir.file("ldata.bin") +
      "\\\"\\n.previous\\n\");\n"
      "extern const char big_text[];\nextern char big_data[];\n"
      "int big_first(void) { return big_text[0] + big_data[0] + puts(\"x\"); }\n";
  std::string error;
  auto lib = test::build_shared(dir, "liblarge.so", "large.c", source,
                                "-Wl,-soname,liblarge.so.1 -Wl,--no-as-needed -lm", "gcc", &error);
  if (!lib) ADD_FAILURE() << error;
  return lib;
}

TEST(HeadersOnly, DynamicSectionInTheMiddleIsPlacedByItsContent) {
  TempDir dir;
  const auto lib = build_large_model_library(dir);
  ASSERT_TRUE(lib);
  const auto full = elf::read_elf_file(*lib);
  ASSERT_EQ(full.soname, "liblarge.so.1");
  const auto whl = test::make_wheel(dir, "large-1.0-cp311-cp311-linux_x86_64.whl", {{"large/liblarge.so", *lib}});
  auto archive = wheel::ZipArchive::open(whl);
  const auto index = archive->find("large/liblarge.so");
  ASSERT_TRUE(index);
  const auto& info = archive->members()[*index];
  auto reader = archive->random_member(*index);
  ASSERT_TRUE(reader->takes_hints());
  const elf::ReadAt read_at = [&](std::uint64_t off, std::span<std::byte> out) { reader->read(off, out); };
  cuda::CodeReader code(info.size, read_at, {}, "a headers-only read");
  const auto headers =
      elf::read_elf_random(info.size, read_at, {}, &code, [&](const ContentHint& h) { reader->expect(h); });
  EXPECT_EQ(headers, full);
  EXPECT_EQ(reader->middle_pieces(), 1U) << "the dynamic section should come from a placed piece of the middle";
  EXPECT_GT(reader->middle_bytes(), 0U);
  // Neither the member's start up to it nor its end: the 12 MB after the dynamic section are never
  // decoded, nor the 8 MB before it.
  EXPECT_LT(reader->inflated_from_start(), std::uint64_t{1} << 20);
  EXPECT_LT(reader->tail_bytes(), std::uint64_t{2} << 20);
  EXPECT_LT(reader->tail_bytes() + reader->middle_bytes(), info.compressed_size / 3);
  // Without the hint, the same reader inflates the member from its start up to the dynamic section (its
  // end is too far to decode), and answers the same.
  auto plain = archive->random_member(*index);
  const elf::ReadAt plain_at = [&](std::uint64_t off, std::span<std::byte> out) { plain->read(off, out); };
  cuda::CodeReader plain_code(info.size, plain_at, {}, "a headers-only read");
  const auto fallback = elf::read_elf_random(info.size, plain_at, {}, &plain_code);
  EXPECT_EQ(fallback, full);
  EXPECT_EQ(plain->middle_pieces(), 0U);
  EXPECT_GT(plain->inflated_from_start(), std::uint64_t{8} << 20);
  // And the whole inspect, locally and through a RandomAccess, equals the full read member by member.
  InspectOptions full_options;
  const auto full_profile = inspect_wheel(whl, full_options);
  InspectOptions headers_options;
  headers_options.verify = Verify::Headers;
  for (const auto& p : {inspect_wheel(whl, headers_options),
                        inspect_wheel(std::make_shared<FileRandomAccess>(whl), "large-1.0-cp311-cp311-linux_x86_64.whl",
                                      "", headers_options)}) {
    ASSERT_EQ(p.members.size(), full_profile.members.size());
    for (std::size_t i = 0; i < p.members.size(); ++i) EXPECT_EQ(p.members[i].elf, full_profile.members[i].elf);
    EXPECT_TRUE(p.problems.empty());
  }
}

// A remote headers-only check on the loopback server: the requests and bytes for the file, and the
// profile (which must equal the full read's, member by member).
struct RemoteRead {
  WheelProfile profile;
  std::size_t requests = 0;
  std::uint64_t bytes = 0;
};

RemoteRead read_remote(const std::string& wheel, const std::string& root, const nlohmann::json& faults = nullptr) {
  const std::string file = wheel.substr(wheel.rfind('/') + 1);
  std::filesystem::create_directories(root + "/idx/demo");
  std::filesystem::copy_file(wheel, root + "/idx/demo/" + file, std::filesystem::copy_options::overwrite_existing);
  test::NetServer server(test::NetServer::index_server(root));
  if (!faults.is_null()) server.add_faults(faults);
  net::ClientOptions o;
  o.netrc_file = "/nonexistent/netrc";
  net::Client client(o);
  RemoteRead r;
  r.profile = remote::inspect_url(server.url("/idx/files/demo/" + file), {}, {}, nullptr, client).profile;
  for (const auto& q : server.stats()) {
    if (q.value("path", "") != "/idx/files/demo/" + file) continue;
    ++r.requests;
    r.bytes += q.value("bytes_sent", std::uint64_t{0});
  }
  return r;
}

TEST(HeadersOnly, RemoteReadsAreOneRequestForASmallWheelAndAPieceOfALargeOne) {
  TempDir dir;
  // Under a MiB: the first request (a suffix range) brings it whole.
  const auto small =
      test::build_shared(dir, "libsmall.so", "small.c", "int small(void) { return 1; }\n", "-Wl,-soname,libsmall.so.1");
  ASSERT_TRUE(small);
  const auto small_wheel =
      test::make_wheel(dir, "small-1.0-cp311-cp311-linux_x86_64.whl", {{"small/libsmall.so", *small}});
  const auto s = read_remote(small_wheel, dir.file("root"));
  EXPECT_EQ(s.requests, 1U);
  EXPECT_EQ(s.bytes, std::filesystem::file_size(small_wheel));
  ASSERT_EQ(s.profile.members.size(), 1U);
  EXPECT_EQ(s.profile.integrity, "headers-only");
  EXPECT_EQ(s.profile.members[0].elf, inspect_wheel(small_wheel).members[0].elf);
  // A server that refuses suffix ranges: the plain probe (bytes=0-0), then the ranges as before.
  const auto refused = read_remote(small_wheel, dir.file("root"), {{"path", "small-1.0"}, {"fault", "no_suffix"}});
  EXPECT_EQ(refused.requests, 3U) << "the refused suffix, bytes=0-0, then the wheel's bytes";
  EXPECT_EQ(refused.profile.members[0].elf, s.profile.members[0].elf);
  // The large-model library: its middle, placed, and its two ends; not the 20 MB between.
  const auto lib = build_large_model_library(dir);
  ASSERT_TRUE(lib);
  const auto whl = test::make_wheel(dir, "large-1.0-cp311-cp311-linux_x86_64.whl", {{"large/liblarge.so", *lib}});
  const auto l = read_remote(whl, dir.file("root"));
  const auto full = inspect_wheel(whl);
  ASSERT_EQ(l.profile.members.size(), full.members.size());
  for (std::size_t i = 0; i < full.members.size(); ++i) EXPECT_EQ(l.profile.members[i].elf, full.members[i].elf);
  EXPECT_LT(l.bytes, std::filesystem::file_size(whl) / 4) << l.requests << " requests";
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

// The rule of a headers-only read (never_loaded): what no loader or importer loads is never opened; any
// other name is, so a library named oddly is still found.
TEST(HeadersOnly, NameRuleDeniesOnlyWhatNothingLoads) {
  for (const char* name : {"pkg/mod.py", "pkg/stubs.pyi", "pkg/__pycache__/m.cpython-311.pyc", "pkg/fast.pyx",
                           "pkg/include/torch/all.h", "pkg/include/x.CUH", "pkg/src/k.cu", "pkg/README.md",
                           "pkg/LICENSE", "pkg/data/conf.json", "pkg/share/cmake/T.cmake", "pkg/py.typed",
                           "pkg/lib/libstatic.a", "pkg/obj/x.o", "pkg-1.0.dist-info/RECORD", "pkg-1.0.dist-info/x.so"})
    EXPECT_TRUE(never_loaded(name)) << name;
  for (const char* name : {"pkg/_C", "pkg/lib/libx.so.1", "pkg/lib/libx.so.1.2.3",
                           "pkg/_ext.cpython-311-x86_64-linux-gnu.so", "pkg/kernels.cubin", "pkg/k.fatbin",
                           "pkg/blob.bin", "pkg/.hidden", "pkg/py", "pkg/x.pyd", "pkg-1.0.data/platlib/pkg/_x.so"})
    EXPECT_FALSE(never_loaded(name)) << name;
}

// Printable text that compresses about as little as letters do (4.7 bits a character): Python members that
// take room in the wheel.
std::string letters(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::string out(size, ' ');
  for (auto& c : out) c = static_cast<char>('a' + rng() % 26);
  return out;
}

struct ManyPython {
  std::string wheel;
  std::string lib;                 // libone.so, also as pkg/_C and pkg/lib/libodd.so.1
  std::uint64_t first_python = 0;  // where the first Python member's local header lies
};

// Two libraries and an ELF library named without an extension first, then 2,000 Python members of 12 KB.
ManyPython many_python_wheel(const TempDir& dir) {
  ManyPython w;
  const auto one =
      test::build_shared(dir, "libone.so", "one.c", "#include <math.h>\ndouble one(double x) { return sin(x); }\n",
                         "-Wl,-soname,libone.so.1 -Wl,--no-as-needed -lm");
  const auto two =
      test::build_shared(dir, "libtwo.so", "two.c", "#include <stdio.h>\nint two(void) { return puts(\"2\"); }\n",
                         "-Wl,-soname,libtwo.so.2");
  if (!one || !two) {
    ADD_FAILURE() << "cannot build the libraries";
    return w;
  }
  w.lib = *one;
  std::vector<std::pair<std::string, std::string>> files = {
      {"pkg/lib/libone.so", *one}, {"pkg/_C", *one}, {"pkg/lib/libodd.so.1", *two}, {"pkg/lib/libtwo.so", *two}};
  std::filesystem::create_directories(dir.file("py"));
  for (int i = 0; i < 2000; ++i) {
    const std::string path = dir.file("py/m" + std::to_string(i) + ".py");
    test::write_binary(path, letters(12 << 10, static_cast<unsigned>(i)));
    files.emplace_back("pkg/sub" + std::to_string(i % 40) + "/m" + std::to_string(i) + ".py", path);
  }
  w.wheel = test::make_wheel(dir, "pkg-1.0-cp311-cp311-linux_x86_64.whl", files);
  const std::string bytes = test::read_file(w.wheel);
  const auto name = bytes.find("pkg/sub0/m0.py");
  EXPECT_NE(name, std::string::npos);
  w.first_python = name - 30;
  EXPECT_EQ(bytes.compare(w.first_python, 4, std::string("PK\x03\x04", 4)), 0);
  return w;
}

// The byte ranges asked for a file on the loopback server (the suffix as bytes=-N).
std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_of(const nlohmann::json& stats, const std::string& path,
                                                               std::uint64_t size) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const auto& q : stats) {
    if (q.value("path", "") != path || !q.contains("range") || !q["range"].is_string()) continue;
    const std::string r = q["range"].get<std::string>().substr(6);
    const auto dash = r.find('-');
    if (dash == 0) {
      const auto n = std::min<std::uint64_t>(std::stoull(r.substr(1)), size);
      out.emplace_back(size - n, size);
    } else {
      out.emplace_back(std::stoull(r.substr(0, dash)), std::stoull(r.substr(dash + 1)) + 1);
    }
  }
  return out;
}

// --no-python-sources: the Python members are never read (what they load is then a condition of the check);
// by default a headers-only read reads them whole, and says so.
TEST(HeadersOnly, PythonMembersAreSkippedOnRequestAndOddlyNamedLibrariesAreFound) {
  TempDir dir;
  const auto w = many_python_wheel(dir);
  ASSERT_FALSE(w.wheel.empty());
  const auto size = std::filesystem::file_size(w.wheel);
  ASSERT_GT(size, std::uint64_t{12} << 20) << "the Python members should fill the wheel";
  const std::string file = w.wheel.substr(w.wheel.rfind('/') + 1);
  std::filesystem::create_directories(dir.file("root/idx/demo"));
  std::filesystem::copy_file(w.wheel, dir.file("root/idx/demo/" + file));
  test::NetServer server(test::NetServer::index_server(dir.file("root")));
  net::ClientOptions o;
  o.netrc_file = "/nonexistent/netrc";
  net::Client client(o);
  const std::string path = "/idx/files/demo/" + file;
  InspectOptions without_sources;
  without_sources.python_sources = false;
  const auto remote_profile = remote::inspect_url(server.url(path), {}, without_sources, nullptr, client).profile;
  EXPECT_FALSE(remote_profile.python.read);
  EXPECT_GT(remote_profile.python.files, 0U);
  EXPECT_NE(remote_profile.python.skipped.find("--no-python-sources"), std::string::npos);
  const auto ranges = ranges_of(server.stats(), path, size);
  std::uint64_t bytes = 0;
  for (const auto& q : server.stats())
    if (q.value("path", "") == path) bytes += q.value("bytes_sent", std::uint64_t{0});
  EXPECT_LT(bytes * 20, size) << bytes << " bytes in " << ranges.size() << " requests";
  EXPECT_LE(ranges.size(), 6U);
  // Apart from the first request (the file's end: the central directory), no range reaches the Python
  // members: they start where the libraries end, and a block of 64 KB may round up to that.
  ASSERT_FALSE(ranges.empty());
  EXPECT_EQ(ranges.front().second, size) << "the first request is the suffix";
  for (std::size_t i = 1; i < ranges.size(); ++i)
    EXPECT_LE(ranges[i].second, w.first_python + (64 << 10))
        << "bytes " << ranges[i].first << "-" << ranges[i].second << " lie among the Python members";
  // With the sources (the default), the Python members are read whole: most of this wheel's bytes.
  server.clear_stats();
  const auto with_sources = remote::inspect_url(server.url(path), {}, {}, nullptr, client).profile;
  EXPECT_TRUE(with_sources.python.read);
  EXPECT_EQ(with_sources.python.files, remote_profile.python.files);
  std::uint64_t source_bytes = 0;
  for (const auto& q : server.stats())
    if (q.value("path", "") == path) source_bytes += q.value("bytes_sent", std::uint64_t{0});
  EXPECT_GT(source_bytes * 2, size) << source_bytes << " bytes with the sources";
  // Every ELF member is found, named oddly or not, with the full read's facts; the full read still reads all.
  const auto full = inspect_wheel(w.wheel);
  InspectOptions headers_options;
  headers_options.verify = Verify::Headers;
  const auto local = inspect_wheel(w.wheel, headers_options);
  EXPECT_EQ(local.integrity, "headers-only");
  EXPECT_EQ(remote_profile.integrity, "headers-only");
  EXPECT_TRUE(full.record_verified) << "the full read hashes every member, the Python ones too";
  ASSERT_EQ(full.members.size(), 4U);
  for (const auto* p : {&remote_profile, &local}) {
    ASSERT_EQ(p->members.size(), full.members.size());
    EXPECT_EQ(p->member_count, full.member_count);
    for (std::size_t i = 0; i < full.members.size(); ++i) {
      EXPECT_EQ(p->members[i].path, full.members[i].path);
      EXPECT_EQ(p->members[i].elf, full.members[i].elf) << full.members[i].path;
    }
  }
  std::vector<std::string> paths;
  for (const auto& m : local.members) paths.push_back(m.path);
  EXPECT_EQ(paths,
            (std::vector<std::string>{"pkg/lib/libone.so", "pkg/_C", "pkg/lib/libodd.so.1", "pkg/lib/libtwo.so"}));
  ASSERT_TRUE(local.members[1].elf);
  EXPECT_EQ(local.members[1].elf->soname, "libone.so.1");
}

// Forty libraries, each between Python members of some 100 KB compressed: their local headers and first
// bytes come in a few requests (nearby runs merged), not one request a library.
TEST(HeadersOnly, LibrariesSpreadOverTheWheelComeInFewRequests) {
  TempDir dir;
  const auto lib = test::build_shared(dir, "libx.so", "x.c", "int x(void) { return 1; }\n", "-Wl,-soname,libx.so.1");
  ASSERT_TRUE(lib);
  std::vector<std::pair<std::string, std::string>> files;
  std::filesystem::create_directories(dir.file("py"));
  for (int i = 0; i < 40; ++i) {
    files.emplace_back("pkg/l" + std::to_string(i) + "/libx.so", *lib);
    const std::string path = dir.file("py/m" + std::to_string(i) + ".py");
    test::write_binary(path, letters(160 << 10, 100U + static_cast<unsigned>(i)));
    files.emplace_back("pkg/l" + std::to_string(i) + "/m.py", path);
  }
  const auto whl = test::make_wheel(dir, "spread-1.0-cp311-cp311-linux_x86_64.whl", files);
  const auto r = read_remote(whl, dir.file("root"));
  ASSERT_EQ(r.profile.members.size(), 40U);
  for (const auto& m : r.profile.members) {
    ASSERT_TRUE(m.elf) << m.path;
    EXPECT_EQ(m.elf->soname, "libx.so.1");
  }
  // The suffix, then runs: every library is about 1.5 blocks from the next, so they merge.
  EXPECT_LE(r.requests, 4U) << r.bytes << " bytes";
}

// A local headers-only read of a wheel under read_whole_below is the full read (it costs less there); one
// through a RandomAccess (a URL) never is.
TEST(HeadersOnly, SmallLocalWheelIsReadWhole) {
  TempDir dir;
  const auto lib = test::build_shared(dir, "libx.so", "x.c", "int x(void) { return 1; }\n", "-Wl,-soname,libx.so.1");
  ASSERT_TRUE(lib);
  const auto whl = test::make_wheel(dir, "small-1.0-cp311-cp311-linux_x86_64.whl", {{"small/libx.so", *lib}});
  InspectOptions o;
  o.verify = Verify::Headers;
  EXPECT_EQ(inspect_wheel(whl, o).integrity, "headers-only") << "read_whole_below is 0 unless set";
  o.read_whole_below = k_read_whole_below;
  ASSERT_LT(std::filesystem::file_size(whl), k_read_whole_below);
  const auto whole = inspect_wheel(whl, o);
  EXPECT_EQ(whole.integrity, "full");
  EXPECT_TRUE(whole.record_verified);
  EXPECT_EQ(whole.sha256, inspect_wheel(whl).sha256);
  EXPECT_EQ(
      inspect_wheel(std::make_shared<FileRandomAccess>(whl), "small-1.0-cp311-cp311-linux_x86_64.whl", "", o).integrity,
      "headers-only");
  o.read_whole_below = std::filesystem::file_size(whl);
  EXPECT_EQ(inspect_wheel(whl, o).integrity, "headers-only") << "the threshold is a size below which";
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
