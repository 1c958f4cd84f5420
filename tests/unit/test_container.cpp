// Container images (inspector/container): references, tar headers, decompression limits, and layers applied
// to a root as a runtime applies them. The layers are tar streams written here byte by byte (ustar, GNU
// and pax headers as the specs lay them out); the image tier (tests/images) does the same against real
// images made by umoci and skopeo and a real registry.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <isa-l/igzip_lib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "inspector/container/detail.hpp"
#include "support.hpp"
#include "wheelcheck/container.hpp"
#include "wheelcheck/error.hpp"

namespace unity_test_container {

using namespace wheelcheck;
using namespace wheelcheck::container;
namespace fs = std::filesystem;

// One tar entry's header (ustar), its data padded to 512 bytes.
std::string tar_entry(const std::string& name, char type, const std::string& data = "", const std::string& link = "",
                      const std::string& magic = std::string("ustar\0", 6)) {
  char h[512] = {};
  std::memcpy(h, name.data(), std::min<std::size_t>(name.size(), 100));
  std::snprintf(h + 100, 8, "%07o", 0644);
  std::snprintf(h + 108, 8, "%07o", 0);
  std::snprintf(h + 116, 8, "%07o", 0);
  std::snprintf(h + 124, 12, "%011llo", static_cast<unsigned long long>(data.size()));
  std::snprintf(h + 136, 12, "%011o", 0);
  h[156] = type;
  std::memcpy(h + 157, link.data(), std::min<std::size_t>(link.size(), 100));
  std::memcpy(h + 257, magic.data(), std::min<std::size_t>(magic.size(), 6));
  std::memcpy(h + 263, "00", 2);
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(h + 148, 8, "%06o", sum);
  std::string out(h, 512);
  out += data;
  out.append((512 - data.size() % 512) % 512, '\0');
  return out;
}

std::string tar_end() {
  return std::string(1024, '\0');
}

std::string pax_entry(const std::string& key, const std::string& value) {
  std::string record = " " + key + "=" + value + "\n";
  std::size_t len = record.size() + 1;
  while (std::to_string(len).size() + record.size() != len) ++len;
  return tar_entry("PaxHeader", 'x', std::to_string(len) + record);
}

std::string gzip(const std::string& data) {
  isal_zstream s;
  isal_deflate_stateless_init(&s);
  s.gzip_flag = IGZIP_GZIP;
  std::string out(data.size() + 1024, '\0');
  s.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(data.data()));
  s.avail_in = static_cast<std::uint32_t>(data.size());
  s.next_out = reinterpret_cast<std::uint8_t*>(out.data());
  s.avail_out = static_cast<std::uint32_t>(out.size());
  s.end_of_stream = 1;
  std::vector<std::uint8_t> level(ISAL_DEF_LVL1_DEFAULT);
  s.level = 1;
  s.level_buf = level.data();
  s.level_buf_size = static_cast<std::uint32_t>(level.size());
  EXPECT_EQ(isal_deflate_stateless(&s), COMP_OK);
  out.resize(s.total_out);
  return out;
}

class StringStream : public detail::Stream {
 public:
  explicit StringStream(std::string s) : m_s(std::move(s)) {}
  std::size_t read(char* buf, std::size_t n) override {
    const std::size_t k = std::min(n, m_s.size() - m_pos);
    std::memcpy(buf, m_s.data() + m_pos, k);
    m_pos += k;
    return k;
  }

 private:
  std::string m_s;
  std::size_t m_pos = 0;
};

std::string read_all(detail::Stream& s) {
  std::string out;
  char buf[4096];
  for (;;) {
    const std::size_t n = s.read(buf, sizeof buf);
    if (n == 0) return out;
    out.append(buf, n);
  }
}

// Applies the layers (plain tar bytes) in order to a fresh root; returns the root.
struct Applied {
  std::string root;
  std::vector<std::string> notes;
};
Applied apply_layers(const std::string& dir, const std::vector<std::string>& layers) {
  Applied a;
  a.root = dir + "/root";
  fs::remove_all(dir);
  fs::create_directories(a.root);
  detail::RootWriter writer(a.root);
  Limits limits;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    StringStream in(layers[i]);
    auto d = detail::decompressing(in, limits, "layer " + std::to_string(i + 1));
    detail::TarReader tar(*d, limits, "layer " + std::to_string(i + 1));
    writer.apply(tar, limits, a.notes);
  }
  return a;
}

std::string temp_dir(const std::string& name) {
  return (fs::temp_directory_path() / ("wc-container-" + std::to_string(::getpid()) + "-" + name)).string();
}

TEST(ContainerReference, RegistryNamesAsDockerReadsThem) {
  auto r = parse_reference("docker://127.0.0.1:5000/flagos/runtime:2.2.0");
  EXPECT_EQ(r.transport, Transport::Registry);
  EXPECT_EQ(r.registry, "127.0.0.1:5000");
  EXPECT_EQ(r.repository, "flagos/runtime");
  EXPECT_EQ(r.tag, "2.2.0");
  r = parse_reference("docker://debian");
  EXPECT_EQ(r.registry, "registry-1.docker.io");
  EXPECT_EQ(r.repository, "library/debian");
  EXPECT_EQ(r.tag, "latest");
  const std::string digest = "sha256:" + std::string(64, 'a');
  r = parse_reference("docker://harbor.baai.ac.cn/flagos-runtime/x@" + digest);
  EXPECT_EQ(r.digest, digest);
  EXPECT_EQ(r.tag, "");
  for (const char* bad :
       {"docker://Host.io/UPPER:1", "docker://h.io/r:bad tag", "docker://h.io/r@sha256:12", "oci:", "tarball:x"}) {
    EXPECT_THROW(parse_reference(bad), Error) << bad;
  }
  r = parse_reference("oci:/tmp/layout:v1");
  EXPECT_EQ(r.transport, Transport::OciLayout);
  EXPECT_EQ(r.path, "/tmp/layout");
  EXPECT_EQ(r.tag, "v1");
  r = parse_reference("docker-archive:/tmp/a.tar:flagos/runtime:2.2.0");
  EXPECT_EQ(r.path, "/tmp/a.tar");
  EXPECT_EQ(r.tag, "flagos/runtime:2.2.0");
  EXPECT_TRUE(is_reference("oci-archive:x.tar"));
  EXPECT_FALSE(is_reference("./rootfs"));
}

TEST(ContainerReference, Platforms) {
  EXPECT_EQ(parse_platform("linux/arm64/v8").str(), "linux/arm64/v8");
  EXPECT_EQ(parse_platform("arm64").str(), "linux/arm64");
  EXPECT_THROW(parse_platform("linux/"), Error);
  EXPECT_THROW(parse_platform("a/b/c/d"), Error);
  EXPECT_EQ(platform_of_machine("aarch64")->architecture, "arm64");
  EXPECT_EQ(platform_of_machine("x86_64")->architecture, "amd64");
  EXPECT_FALSE(platform_of_machine("m68k"));
}

TEST(ContainerLayers, KeptFilesAreWhatAProbeReads) {
  for (const char* kept : {"usr/lib/x86_64-linux-gnu/libc.so.6", "usr/bin/python3.11", "usr/lib/python3.11/os.py",
                           "usr/lib/python3/dist-packages/PyYAML-6.0.egg-info/PKG-INFO", "etc/ld.so.cache",
                           "etc/ld.so.conf.d/x86_64-linux-gnu.conf", "usr/local/cuda-13.0/version.json",
                           "usr/local/lib/python3.12/site-packages/torch-2.10.dist-info/RECORD", "etc/os-release"}) {
    EXPECT_TRUE(detail::kept_file(kept)) << kept;
  }
  for (const char* skipped : {"usr/bin/ls", "usr/share/doc/libc6/copyright", "usr/lib/python3.11/json/__init__.py",
                              "etc/passwd", "usr/bin/pythonista"}) {
    EXPECT_FALSE(detail::kept_file(skipped)) << skipped;
  }
}

TEST(ContainerLayers, WhiteoutsOpaqueFoldersAndReplacementsAsARuntimeAppliesThem) {
  const std::string l1 = tar_entry("usr/", '5') + tar_entry("usr/lib/", '5') +
                         tar_entry("usr/lib/liba.so.1", '0', "A1") + tar_entry("usr/lib/libb.so.1", '0', "B1") +
                         tar_entry("opt/", '5') + tar_entry("opt/lib/", '5') +
                         tar_entry("opt/lib/libold.so", '0', "old") + tar_entry("lib", '2', "", "usr/lib") +
                         tar_entry("usr/share/", '5') + tar_entry("usr/share/README", '0', "not kept") + tar_end();
  // Layer 2: deletes liba, replaces libb, adds a file through the lib -> usr/lib link.
  const std::string l2 = tar_entry("usr/lib/.wh.liba.so.1", '0') + tar_entry("usr/lib/libb.so.1", '0', "B2") +
                         tar_entry("lib/libc.so.9", '0', "C") + tar_end();
  // Layer 3: opt/lib opaque, with one new file (listed before and after the marker).
  const std::string l3 = tar_entry("opt/lib/libnew1.so", '0', "n1") + tar_entry("opt/lib/.wh..wh..opq", '0') +
                         tar_entry("opt/lib/libnew2.so", '0', "n2") + tar_end();
  const auto a = apply_layers(temp_dir("whiteouts"), {l1, gzip(l2), l3});
  EXPECT_FALSE(fs::exists(a.root + "/usr/lib/liba.so.1"));
  EXPECT_EQ(wheelcheck::test::read_file(a.root + "/usr/lib/libb.so.1"), "B2");
  EXPECT_EQ(wheelcheck::test::read_file(a.root + "/usr/lib/libc.so.9"), "C");
  EXPECT_TRUE(fs::is_symlink(a.root + "/lib"));
  EXPECT_FALSE(fs::exists(a.root + "/opt/lib/libold.so"));
  EXPECT_TRUE(fs::exists(a.root + "/opt/lib/libnew1.so"));
  EXPECT_TRUE(fs::exists(a.root + "/opt/lib/libnew2.so"));
  EXPECT_FALSE(fs::exists(a.root + "/usr/share/README"));  // not a file a probe reads
  EXPECT_TRUE(fs::is_directory(a.root + "/usr/share"));
  fs::remove_all(fs::path(a.root).parent_path());
}

TEST(ContainerLayers, AbsoluteLinksAreTheImagesOwnAndClimbingLinksAreRefused) {
  // An absolute link is the image's own "/": a file written through it lands at the root's top.
  const std::string dir = temp_dir("escape");
  const auto a = apply_layers(
      dir, {tar_entry("abs", '2', "", "/") + tar_entry("abs/liby.so", '0', "Y") + tar_entry("usr/lib/", '5') +
            tar_entry("usr/lib/up", '2', "", "../..") + tar_entry("usr/lib/up/libz.so", '0', "Z") + tar_end()});
  EXPECT_EQ(wheelcheck::test::read_file(a.root + "/liby.so"), "Y");
  EXPECT_EQ(wheelcheck::test::read_file(a.root + "/libz.so"), "Z");  // ../.. from usr/lib is the root itself
  // A link that climbs above the root, then a file written through it: refused, and nothing outside.
  try {
    apply_layers(dir, {tar_entry("up", '2', "", "../../../../../..") + tar_entry("up/libx.so", '0', "X") + tar_end()});
    ADD_FAILURE() << "a file written through a link climbing out of the root was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("climbs out of the root"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir + "/libx.so"));
  EXPECT_FALSE(fs::exists("/libx.so"));
  fs::remove_all(dir);
}

TEST(ContainerLayers, HostileEntriesAreRefused) {
  const std::string dir = temp_dir("hostile");
  auto refused = [&](const std::string& layer, const std::string& words) {
    try {
      apply_layers(dir, {layer});
      ADD_FAILURE() << "accepted a layer that should be refused (" << words << ")";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused(tar_entry("../../etc/libevil.so", '0', "x") + tar_end(), "climbs out of the root");
  refused(tar_entry("a/../../libevil.so", '0', "x") + tar_end(), "climbs out of the root");
  refused(tar_entry("libh.so", '1', "", "../../etc/passwd") + tar_end(), "outside the root");
  refused(tar_entry("dev/sda", '4') + tar_end(), "block device");
  refused(tar_entry("dev/tty", '3') + tar_end(), "character device");
  refused(tar_entry("x/.wh...", '0') + tar_end(), "a whiteout that names");
  std::string bad_sum = tar_entry("libz.so", '0', "z");
  bad_sum[0] = 'L';  // the checksum no longer matches
  refused(bad_sum + tar_end(), "checksum is wrong");
  refused(tar_entry("libz.so", '0', "zzzz").substr(0, 600), "truncated");
  refused(tar_entry("loop", '2', "", "loop") + tar_entry("loop/libz.so", '0', "z") + tar_end(), "symbolic links");
  refused(gzip(tar_entry("libz.so", '0', std::string(5000, 'z')) + tar_end()).substr(0, 40), "cut short");
  fs::remove_all(dir);
}

TEST(ContainerTar, PaxAndGnuLongNames) {
  const std::string long_name = "usr/lib/" + std::string(150, 'd') + "/libdeep.so.1";
  const std::string gnu = tar_entry("././@LongLink", 'L', long_name + std::string(1, '\0'), "", "ustar  ") +
                          tar_entry("short", '0', "G", "", "ustar  ");
  const std::string pax = pax_entry("path", "usr/lib/libpax.so.2") + tar_entry("ignored", '0', "P");
  const auto a = apply_layers(temp_dir("names"), {gnu + pax + tar_end()});
  EXPECT_EQ(wheelcheck::test::read_file(a.root + "/" + long_name), "G");
  EXPECT_EQ(wheelcheck::test::read_file(a.root + "/usr/lib/libpax.so.2"), "P");
  fs::remove_all(fs::path(a.root).parent_path());
}

TEST(ContainerStreams, BombsStopAtTheRatioAndGzipMembersChain) {
  Limits limits;
  // 200 MiB of zeros in about 200 KiB: stopped once 64 MiB are out, at a ratio far above the limit.
  const std::string zeros(std::size_t{200} << 20, '\0');
  const std::string bomb = gzip(zeros);
  StringStream in(bomb);
  auto d = detail::decompressing(in, limits, "bomb");
  try {
    read_all(*d);
    ADD_FAILURE() << "a decompression bomb was read to its end";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("decompression bomb"), std::string::npos) << e.what();
  }
  // Two gzip members, one after the other (pigz, cat a.gz b.gz): one stream.
  StringStream two(gzip("first ") + gzip("second"));
  auto d2 = detail::decompressing(two, limits, "two");
  EXPECT_EQ(read_all(*d2), "first second");
  // zstd, and plain bytes left as they are.
  const std::string text = "a zstd frame";
  std::string z(ZSTD_compressBound(text.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), text.data(), text.size(), 3));
  StringStream zs(z);
  EXPECT_EQ(read_all(*detail::decompressing(zs, limits, "zstd")), text);
  StringStream plain("plain");
  EXPECT_EQ(read_all(*detail::decompressing(plain, limits, "plain")), "plain");
}

TEST(ContainerStreams, ABlobIsCheckedAgainstItsSizeAndDigest) {
  const std::string dir = temp_dir("blob");
  fs::create_directories(dir);
  const std::string file = dir + "/blob";
  std::ofstream(file) << "layer bytes";
  const int fd = ::open(file.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  const std::string right = detail::sha256_digest("layer bytes");
  detail::VerifiedFile ok(fd, 0, 11, 11, right, "blob");
  EXPECT_NO_THROW(ok.finish());
  EXPECT_THROW(detail::VerifiedFile(fd, 0, 11, 12, right, "blob"), Error);  // a size the manifest lies about
  detail::VerifiedFile wrong(fd, 0, 11, 11, detail::sha256_digest("other"), "blob");
  try {
    wrong.finish();
    ADD_FAILURE() << "a blob that does not hash to its digest was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hash to"), std::string::npos) << e.what();
  }
  ::close(fd);
  fs::remove_all(dir);
}

}  // namespace unity_test_container
