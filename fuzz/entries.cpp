// The fuzz targets' entry points (see entries.hpp): each turns raw bytes into the input of one family of
// parsers of outside input and runs it through them as wheelcheck itself would, under limits small
// enough that one input costs milliseconds. Only wheelcheck::Error is caught: it is how a parser refuses
// malformed input. Everything else (another exception type, a crash, a sanitizer report, a hang) is left
// to surface, so libFuzzer and the regression replay both see it.
#include "fuzz/entries.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "inspector/cuda/fatbin.hpp"
#include "inspector/wheel/deflate_tail.hpp"
#include "wheelcheck/bytes.hpp"
#include "wheelcheck/cuda.hpp"
#include "wheelcheck/cxx_names.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/index.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/rootfs.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::fuzz {

namespace {

std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return size == 0 ? std::string_view{} : std::string_view(reinterpret_cast<const char*>(data), size);
}

std::vector<std::byte> as_bytes(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> out(size);
  if (size != 0) std::memcpy(out.data(), data, size);
  return out;
}

// Runs `body`, swallowing the one error type the parsers refuse input with.
template <typename Body>
void refusal_ok(Body&& body) {
  try {
    body();
  } catch (const Error&) {
  }
}

// A scanner that keeps asking for more passes than its limit allows would loop forever: a bug.
[[noreturn]] void fail(const std::string& what) {
  throw std::logic_error("fuzz: " + what);
}

// ---------------------------------------------------------------------------------------------------
// elf

void touch(const elf::Binary& b) {
  (void)elf::machine_name(b.machine, b.elf_class, b.endian, b.e_flags);
  (void)elf::machine_description(b.machine);
  (void)elf::type_name(b.type);
  (void)elf::copy_relocation_type(b.machine);
  (void)elf::os_abi_name(b.os_abi);
  (void)elf::dt_flags_names(b.flags);
  (void)elf::dt_flags_1_names(b.flags_1);
  for (const auto& s : b.symbols) {
    (void)elf::binding_name(s.binding);
    (void)elf::symbol_type_name(s.type);
    (void)s.exported();
  }
}

// The push scanner fed the input in chunks whose sizes the input's last bytes choose, pass after pass.
void scan_in_chunks(const std::uint8_t* data, std::size_t size, const elf::ReaderLimits& limits) {
  // FNV-1a of the last 8 bytes picks the first chunk size (1..8192); at most 512 chunks a pass.
  std::uint32_t hash = 2166136261u;
  for (std::size_t i = size - std::min<std::size_t>(size, 8); i < size; ++i) hash = (hash ^ data[i]) * 16777619u;
  std::size_t chunk = std::max<std::size_t>(1 + hash % 8192, size / 512);
  cuda::CodeReader code(size);  // the GPU code as a streamed member's, read along
  elf::ElfScanner scanner(size, limits, &code);
  for (int pass = 0; pass <= limits.max_passes + 1; ++pass) {
    std::size_t offset = 0;
    while (offset < size) {
      const std::size_t n = std::min(chunk, size - offset);
      scanner.feed(reinterpret_cast<const std::byte*>(data + offset), n);
      offset += n;
      if (pass % 2 == 1 && scanner.satisfied()) break;  // every other pass stops early, as a reader may
    }
    if (auto binary = scanner.finish_pass()) {
      touch(*binary);
      if (code.fatbins()) (void)cuda::runs_on_text(*code.fatbins());
      return;
    }
    chunk = chunk * 3 + 1;
  }
  fail("ElfScanner asked for more passes than ReaderLimits::max_passes");
}

}  // namespace

int fuzz_elf(const std::uint8_t* data, std::size_t size) {
  (void)elf::has_elf_magic(data, size);
  elf::ReaderLimits limits;
  limits.max_table_bytes = std::uint64_t{16} << 20;
  // A short speculative prefix makes tables beyond it need a second pass.
  limits.speculative_prefix = size >= 3 ? (std::size_t{data[size - 3]} << 6) : 64;
  const BufferSource source(as_bytes(data, size), "fuzz.so");
  refusal_ok([&] {
    cuda::CodeReader code(size);
    touch(elf::read_elf(source, elf::ReaderKind::Fast, limits, &code));
  });
  refusal_ok([&] { scan_in_chunks(data, size, limits); });
  refusal_ok([&] {
    auto read_at = [&](std::uint64_t offset, std::span<std::byte> out) {
      if (offset > size || out.size() > size - offset) fail("read_elf_random read past the end");
      if (!out.empty()) std::memcpy(out.data(), data + offset, out.size());
    };
    cuda::CodeReader code(size, read_at);
    touch(elf::read_elf_random(size, read_at, limits, &code));
  });
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// zip

namespace {

class MemoryRandomAccess final : public RandomAccess {
 public:
  explicit MemoryRandomAccess(std::vector<std::byte> bytes) : m_bytes(std::move(bytes)) {}
  std::uint64_t size() const override { return m_bytes.size(); }
  std::string name() const override { return "fuzz-1.0-py3-none-any.whl"; }
  void read_at(std::uint64_t offset, std::span<std::byte> out) const override {
    if (offset > m_bytes.size() || out.size() > m_bytes.size() - offset) throw bad_input("read past the end");
    if (!out.empty()) std::memcpy(out.data(), m_bytes.data() + offset, out.size());
  }

 private:
  std::vector<std::byte> m_bytes;
};

wheel::ArchiveLimits small_archive_limits() {
  wheel::ArchiveLimits limits;
  limits.max_member_size = std::uint64_t{4} << 20;
  limits.max_total_size = std::uint64_t{16} << 20;
  limits.max_members = 4096;
  limits.max_metadata_size = std::uint64_t{1} << 20;
  return limits;
}

// Members streamed, and read at random, per input: each random read costs the reader a fresh 1 MiB buffer.
constexpr std::size_t k_members_streamed = 32;
constexpr std::size_t k_members_random = 8;

void read_dist_info(const wheel::ZipArchive& archive, const wheel::MemberInfo& m) {
  const std::string_view name = m.name;
  const auto slash = name.rfind('/');
  if (slash == std::string_view::npos || !name.substr(0, slash).ends_with(".dist-info")) return;
  const auto file = name.substr(slash + 1);
  if (file != "WHEEL" && file != "METADATA" && file != "RECORD") return;
  refusal_ok([&] {
    const std::string text = archive.read_small(m.index);
    if (file == "WHEEL") (void)wheel::parse_wheel_file(text);
    if (file == "METADATA") (void)wheel::parse_metadata(text);
    if (file == "RECORD") (void)wheel::parse_record(text);
  });
}

void stream_member(const wheel::ZipArchive& archive, const wheel::MemberInfo& m) {
  refusal_ok([&] {
    auto stream = archive.open_member(m.index);
    std::array<std::byte, 64 * 1024> buf{};
    std::uint64_t total = 0;
    while (const auto n = stream->read(buf)) {
      total += n;
      if (total > (std::uint64_t{64} << 20)) fail("open_member streamed past its limits");
    }
  });
}

void read_member_at_random(const wheel::ZipArchive& archive, const wheel::MemberInfo& m) {
  refusal_ok([&] {
    auto reader = archive.random_member(m.index);
    const std::uint64_t length = std::min<std::uint64_t>(64, m.size);
    std::array<std::byte, 64> buf{};
    const std::array<std::uint64_t, 4> offsets{0, m.size / 2, m.size - length, m.size + 1};
    for (const auto offset : offsets) {
      refusal_ok([&] { reader->read(offset, std::span(buf.data(), static_cast<std::size_t>(length))); });
    }
    (void)reader->inflated_from_start();
    (void)reader->tail_bytes();
  });
}

void inspect_in_memory(const std::shared_ptr<const RandomAccess>& file, Verify verify) {
  refusal_ok([&] {
    InspectOptions options;
    options.verify = verify;
    options.threads = 1;
    options.limits = small_archive_limits();
    options.elf_limits.max_table_bytes = std::uint64_t{16} << 20;
    const auto p = inspect_wheel(file, file->name(), "", options);
    (void)profile_to_json(p);
    (void)profile_to_text(p, false);
  });
}

}  // namespace

int fuzz_zip(const std::uint8_t* data, std::size_t size) {
  const auto file = std::make_shared<const MemoryRandomAccess>(as_bytes(data, size));
  refusal_ok([&] {
    const auto archive = wheel::ZipArchive::open(file, small_archive_limits());
    for (const auto& p : archive->problems()) (void)p.detail.size();
    const auto& members = archive->members();
    for (std::size_t i = 0; i < members.size() && i < k_members_streamed; ++i) {
      const auto& m = members[i];
      (void)wheel::unsafe_member_name(m.name);
      (void)archive->find(m.name);
      read_dist_info(*archive, m);
      if (m.directory) continue;
      stream_member(*archive, m);
      if (i < k_members_random) read_member_at_random(*archive, m);
    }
  });
  inspect_in_memory(file, Verify::Full);
  inspect_in_memory(file, Verify::Headers);
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// inflate_tail

int fuzz_inflate_tail(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  std::uint64_t uncompressed = 0;
  for (int i = 3; i >= 0; --i) uncompressed = uncompressed << 8 | data[i];
  const auto tail = std::as_bytes(std::span(data + 4, size - 4));
  const std::uint64_t max_output = std::uint64_t{1} << 20;
  const auto result = wheel::inflate_tail(tail, uncompressed, max_output);
  if (!result) return 0;
  if (result->bytes.size() > max_output) fail("inflate_tail passed max_output");
  for (std::uint64_t i = 0; i < result->bytes.size(); i += 97) (void)result->known(i);
  (void)result->covers(result->first, result->bytes.size());
  (void)result->covers(uncompressed, 1);
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// inflate_middle

int fuzz_inflate_middle(const std::uint8_t* data, std::size_t size) {
  if (size < 16) return 0;
  auto u32 = [&](std::size_t at) {
    return static_cast<std::uint64_t>(data[at]) | static_cast<std::uint64_t>(data[at + 1]) << 8 |
           static_cast<std::uint64_t>(data[at + 2]) << 16 | static_cast<std::uint64_t>(data[at + 3]) << 24;
  };
  // An anchor (its offset, its 8 bytes), the wanted offset; then the stream, swept whole.
  ContentHint hint;
  hint.anchors.push_back({u32(0), std::vector<std::byte>(reinterpret_cast<const std::byte*>(data + 4),
                                                         reinterpret_cast<const std::byte*>(data + 12))});
  const std::uint64_t want = u32(12) & 0xFFFFFF;
  hint.begin = want;
  hint.end = want + 64;
  hint.entries.push_back({want, want + 64, 8, hint.anchors[0].bytes});
  const auto stream = std::as_bytes(std::span(data + 16, size - 16));
  wheel::MiddleRequest r;
  r.compressed_size = stream.size();
  r.uncompressed_size = std::uint64_t{1} << 24;
  r.sweep_from = 0;
  r.sweep_to = stream.size();
  r.want = want;
  r.want_length = 32;
  r.hint = &hint;
  wheel::MiddleStats stats;
  const auto piece = wheel::inflate_middle(
      r,
      [&](std::uint64_t off, std::span<std::byte> out) {
        if (off > stream.size() || out.size() > stream.size() - off) fail("inflate_middle read past the stream");
        std::memcpy(out.data(), stream.data() + off, out.size());
      },
      &stats);
  if (stats.starts > 16) fail("inflate_middle tried more block starts than its bound");
  if (!piece) return 0;
  if (!piece->covers(want, 32)) fail("inflate_middle placed a piece without the wanted bytes");
  if (piece->bytes.size() > (std::uint64_t{17} << 20)) fail("inflate_middle kept more than its history");
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// dist_info

int fuzz_dist_info(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto text = as_text(data + 1, size - 1);
  refusal_ok([&] {
    switch (data[0] % 4) {
      case 0: (void)wheel::parse_wheel_file(text); break;
      case 1: (void)wheel::parse_metadata(text); break;
      case 2: (void)wheel::parse_record(text); break;
      default: (void)wheel::parse_headers(text); break;
    }
  });
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// names

int fuzz_names(const std::uint8_t* data, std::size_t size) {
  const auto text = as_text(data, size);
  const auto nl = text.find('\n');
  const auto a = text.substr(0, nl);
  const auto b = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
  refusal_ok([&] {
    const auto f = wheel::parse_filename(a);
    (void)f.normalized_name();
    for (const auto& t : f.tags) (void)wheel::tag_text(t);
  });
  for (const auto s : {a, b}) {
    (void)wheel::normalize_project_name(s);
    (void)wheel::parse_interpreter(s);
    (void)wheel::parse_platform(s);
    (void)wheel::normalize_arch(s);
    (void)wheel::tag_arch_of(s);
    if (const auto v = wheel::parse_version(s)) {
      (void)v->public_version();
      (void)v->base_version();
    }
    (void)wheel::parse_specifier_set(s);
  }
  (void)wheel::arch_matches(a, b);
  const auto va = wheel::parse_version(a);
  const auto vb = wheel::parse_version(b);
  if (va && vb) {
    const int ab = wheel::compare(*va, *vb);
    const int ba = wheel::compare(*vb, *va);
    if ((ab < 0) != (ba > 0) || (ab == 0) != (ba == 0)) fail("PEP 440 compare is not antisymmetric");
  }
  (void)wheel::compare_versions(a, b);
  (void)wheel::python_satisfies(a, b);
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// demangle

int fuzz_demangle(const std::uint8_t* data, std::size_t size) {
  const auto name = as_text(data, size);
  const auto demangled = cxx::demangle(name);
  (void)cxx::demangle_or_self(name);
  for (const auto text : {name, demangled ? std::string_view(*demangled) : std::string_view{}}) {
    (void)cxx::split_demangled(text);
    (void)cxx::normalize_cxx11_abi(text);
    (void)cxx::cxx11_abi_markers(text);
    (void)cxx::has_old_abi_type(text);
    (void)cxx::cxx11_abi_types(text);
  }
  (void)cxx::is_special_name(name);
  for (const auto& prefix : cxx::mangled_search_prefixes(name)) {
    if (!name.starts_with(prefix.substr(0, std::min<std::size_t>(prefix.size(), 2)))) {
      fail("a search prefix that does not start as the name");
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// ldconfig

namespace {

// A root folder made once per process, removed at exit: etc/ld.so.conf and etc/ld.so.conf.d/{a,b}.conf
// are rewritten for every input; a few folders (one reached through a link) give the paths something to
// find.
class TempRoot {
 public:
  TempRoot() {
    std::string pattern = (std::filesystem::temp_directory_path() / "wheelcheck-fuzz-root-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("fuzz: mkdtemp failed");
    m_dir = pattern;
    std::filesystem::create_directories(m_dir / "etc/ld.so.conf.d");
    std::filesystem::create_directories(m_dir / "usr/lib/x86_64-linux-gnu");
    std::filesystem::create_directories(m_dir / "opt/lib");
    std::filesystem::create_directory_symlink("usr/lib", m_dir / "lib");
    std::filesystem::create_symlink("loop.conf", m_dir / "etc/ld.so.conf.d/loop.conf");
  }
  ~TempRoot() {
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
  }
  TempRoot(const TempRoot&) = delete;
  TempRoot& operator=(const TempRoot&) = delete;
  const std::filesystem::path& dir() const { return m_dir; }

  void write(const char* relative, std::string_view text) const {
    const auto path = (m_dir / relative).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("fuzz: cannot write " + path);
    std::size_t done = 0;
    while (done < text.size()) {
      const auto n = ::write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  }

 private:
  std::filesystem::path m_dir;
};

const TempRoot& temp_root() {
  static const TempRoot root;
  return root;
}

}  // namespace

int fuzz_ldconfig(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto text = as_text(data + 1, size - 1);
  if (data[0] % 2 == 0) {
    refusal_ok([&] {
      const auto cache = probe::parse_ld_so_cache(text);
      for (const auto& e : cache.entries) (void)probe::cache_flags_name(e.flags);
    });
    return 0;
  }
  const auto& root = temp_root();
  std::array<std::string_view, 3> parts{};
  std::string_view rest = text;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto nul = i + 1 < parts.size() ? rest.find('\0') : std::string_view::npos;
    parts[i] = rest.substr(0, nul);
    rest = nul == std::string_view::npos ? std::string_view{} : rest.substr(nul + 1);
  }
  root.write("etc/ld.so.conf", parts[0]);
  root.write("etc/ld.so.conf.d/a.conf", parts[1]);
  root.write("etc/ld.so.conf.d/b.conf", parts[2]);
  refusal_ok([&] {
    const probe::RootFs fs(root.dir().string());
    std::vector<Problem> findings;
    (void)probe::read_ld_so_conf(fs, findings);
  });
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// index

int fuzz_index(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto body = as_text(data + 1, size - 1);
  const std::string_view type = data[0] % 2 == 0 ? "text/html" : "application/vnd.pypi.simple.v1+json";
  refusal_ok([&] {
    const auto page = index::parse_project_page(body, type, "https://index.example/simple/demo/", "demo");
    for (const auto& f : page.files) (void)f.sha256();
  });
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// image

int fuzz_image(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const auto text = as_text(data + 2, size - 2);
  const int which = data[0] % 3;
  if (which == 1) {
    refusal_ok([&] { (void)rules::parse(text, "fuzz-rules.json"); });
    return 0;
  }
  if (which == 0) {  // the text as a description file is read (image::load_file)
    refusal_ok([&] {
      const auto image = image::parse_description(text, "fuzz-image.json");
      (void)image::to_json(image, true).dump();
    });
    return 0;
  }
  // Policies are read from files whose JSON errors policy::Policies::load reports itself (any
  // nlohmann::json::exception, a number that overflows included); from_json is fed parsed documents.
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  refusal_ok([&] {
    const auto libc = static_cast<policy::Libc>(data[1] % 3);
    (void)policy::Policies::from_json(libc, j, "fuzz-policy.json");
  });
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// fatbin

int fuzz_fatbin(const std::uint8_t* data, std::size_t size) {
  const auto copy = as_bytes(data, size);
  const std::span<const std::byte> bytes(copy);
  const auto whole = cuda::read_fatbins(bytes);
  std::uint64_t counted = 0;
  for (const auto& v : whole.variants) counted += v.entries;
  if (counted > whole.entries) fail("read_fatbins counted more variants than entries");
  (void)whole.sass();
  (void)whole.ptx();
  (void)cuda::runs_on_text(whole);
  // Seeking, in chunks whose sizes the input's first byte picks, as a member streamed once feeds it.
  cuda::FatbinWalker seek(0, size, true);
  const std::size_t chunk = size == 0 ? 1 : std::size_t{data[0]} % 61 + 1;
  for (std::size_t at = 0; at < size; at += chunk) seek.feed(at, bytes.subspan(at, std::min(chunk, size - at)));
  for (const auto& c : seek.containers()) {
    if (c.begin >= c.end || c.end > size) fail("a seeking walk kept a container outside the input");
  }
  const std::uint64_t begin = size >= 2 ? data[1] % (size / 2 + 1) : 0;
  (void)cuda::merge_containers(seek.containers(), begin, size);
  // Through random access over one section that is the whole input, the walk must find the same
  // containers, reading only the headers inside them; two sections split at `begin` keep only what
  // lies wholly in one of them.
  auto read_at = [&](std::uint64_t at, std::span<std::byte> out) {
    if (at > size || out.size() > size - at) fail("seek_containers read past the end");
    if (!out.empty()) std::memcpy(out.data(), copy.data() + at, out.size());
  };
  const auto random = cuda::seek_containers({{"all", 0, size}}, size, read_at);
  if (random.size() != seek.containers().size()) fail("seek_containers and a streamed walk disagree");
  for (std::size_t i = 0; i < random.size(); ++i) {
    if (random[i].begin != seek.containers()[i].begin || random[i].variants != seek.containers()[i].variants) {
      fail("seek_containers and a streamed walk disagree on a container");
    }
  }
  const std::vector<cuda::SectionSpan> halves{{"a", 0, begin}, {"b", begin, size}};
  cuda::Fatbins f;
  cuda::add_embedded(f, cuda::seek_containers(halves, size, read_at), halves);
  if (f.embedded_containers > random.size()) fail("add_embedded kept more containers than were found");
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// lock

namespace {

// A folder made once per process, removed at exit, where a requirements input is read from: its relative
// -r names resolve there, to a file with a pin, index options and a hash, or to one that includes itself
// (a cycle). An absolute -r reads the real disk as wheelcheck would: regular files alone, 64 MB at most.
class LockFolder {
 public:
  LockFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "wheelcheck-fuzz-lock-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("fuzz: mkdtemp failed");
    m_dir = pattern;
    write("more.txt",
          "--extra-index-url https://index.example/simple\n"
          "other==2.0 --hash=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n");
    write("loop.txt", "-r loop.txt\n");
  }
  ~LockFolder() {
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
  }
  LockFolder(const LockFolder&) = delete;
  LockFolder& operator=(const LockFolder&) = delete;
  std::string file(const char* name) const { return (m_dir / name).string(); }

 private:
  void write(const char* name, std::string_view text) const {
    const auto path = file(name);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("fuzz: cannot write " + path);
    if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
      ::close(fd);
      throw std::runtime_error("fuzz: cannot write " + path);
    }
    ::close(fd);
  }

  std::filesystem::path m_dir;
};

const LockFolder& lock_folder() {
  static const LockFolder folder;
  return folder;
}

// CPython 3.12.4 on x86-64 Linux, with an extra and a dependency group to match.
const lock::MarkerEnv& fixed_marker_env() {
  static const lock::MarkerEnv env = [] {
    lock::MarkerEnv e;
    e.values = {{"python_version", "3.12"},
                {"python_full_version", "3.12.4"},
                {"implementation_name", "cpython"},
                {"implementation_version", "3.12.4"},
                {"platform_python_implementation", "CPython"},
                {"sys_platform", "linux"},
                {"platform_system", "Linux"},
                {"platform_machine", "x86_64"},
                {"platform_release", "6.1.0-18-amd64"},
                {"platform_version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1"},
                {"os_name", "posix"}};
    e.extras = {"cpu", "Dev_Tools"};
    e.dependency_groups = {"dev"};
    return e;
  }();
  return env;
}

void evaluate(std::string_view marker) {
  refusal_ok([&] {
    lock::check_marker(marker);
    (void)lock::evaluate_marker(marker, fixed_marker_env());
    lock::MarkerEnv none = fixed_marker_env();
    none.extras.clear();
    (void)lock::evaluate_marker(marker, none);
  });
}

// What a check does with a lock it read: each package's marker for the image, its pin, its files' names.
void use(const lock::Lock& l) {
  (void)lock::format_name(l.format);
  for (const auto& p : l.packages) {
    evaluate(p.marker);
    if (!p.specifier.empty()) (void)lock::version_satisfies(p.specifier, p.version);
    (void)p.from_index();
    std::vector<const lock::File*> files;
    for (const auto& f : p.wheels) files.push_back(&f);
    if (p.sdist) files.push_back(&*p.sdist);
    for (const auto* f : files) {
      (void)f->is_wheel();
      (void)f->sha256();
      (void)lock::is_lock_path(f->where());
      (void)lock::sdist_name_version(f->filename, p.name);
    }
  }
}

}  // namespace

int fuzz_lock(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto text = as_text(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: refusal_ok([&] { use(lock::parse(text, lock::Format::Pylock, "fuzz/pylock.toml")); }); break;
    case 1: refusal_ok([&] { use(lock::parse(text, lock::Format::PipReport, "fuzz/report.json")); }); break;
    case 2: {
      const auto path = lock_folder().file("requirements.txt");
      refusal_ok([&] { use(lock::parse(text, lock::Format::Requirements, path)); });
      break;
    }
    default: evaluate(text); break;
  }
  return 0;
}

const std::vector<Target>& targets() {
  static const std::vector<Target> all{
      {"elf", fuzz_elf},
      {"zip", fuzz_zip},
      {"inflate_tail", fuzz_inflate_tail},
      {"inflate_middle", fuzz_inflate_middle},
      {"dist_info", fuzz_dist_info},
      {"names", fuzz_names},
      {"demangle", fuzz_demangle},
      {"ldconfig", fuzz_ldconfig},
      {"index", fuzz_index},
      {"image", fuzz_image},
      {"fatbin", fuzz_fatbin},
      {"lock", fuzz_lock},
      {"python", fuzz_python},
      {"layer", fuzz_layer},
  };
  return all;
}

}  // namespace wheelcheck::fuzz
