// The profile cache. A profile depends only on the wheel's bytes, the reader and the profile schema, so
// it is stored under the wheel's sha256:
//   DIR/profiles/ab/abcdef....fast.v1.5.bin    the profile in a compact binary form (fast to load)
//   DIR/profiles/ab/abcdef....fast.v1.5.json   its JSON rendering, printed as is by `inspect --json`; its
//                                              frame's flag: the profile has no problems (the exit code)
//   DIR/profiles/ab/abcdef....fast.v1.5.<name> a text derived from it (the policies' consistency head)
//   DIR/index/cd/<sha256 of the real path>     "size mtime_ns inode device sha256" of the last hashing
// The index spares a warm lookup from hashing the wheel again (what makes it take milliseconds): a file
// with the same size, nanosecond mtime, inode and device is taken to be unchanged, as make and ccache's
// stat checks do. Every file is framed with its kind, key and a CRC-64 and written atomically
// (cache_folder.hpp); every read is checked against the key it expects, so a damaged, swapped or planted
// entry is a miss (and is rewritten), never an answer. Nothing is reached through a link.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "cache_folder.hpp"
#include "wheelcheck/cuda.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck {

namespace {

// 3: integrity, source; 4: device_code; 5: python (the Python sources' loads and imports)
constexpr char k_magic[8] = {'W', 'C', 'P', 'R', 'O', 'F', '\0', '\5'};

class Out {
 public:
  explicit Out(std::string& s) : m_s(s) {}
  void u8(std::uint8_t v) { m_s.push_back(static_cast<char>(v)); }
  void u64(std::uint64_t v) {
    // LEB128: small numbers (most of them) take one byte.
    do {
      std::uint8_t b = v & 0x7f;
      v >>= 7;
      if (v != 0) b |= 0x80;
      u8(b);
    } while (v != 0);
  }
  void str(std::string_view s) {
    u64(s.size());
    m_s.append(s);
  }
  void strs(const std::vector<std::string>& v) {
    u64(v.size());
    for (const auto& s : v) str(s);
  }
  void opt(const std::optional<std::string>& s) {
    u8(s ? 1 : 0);
    if (s) str(*s);
  }

 private:
  std::string& m_s;
};

class In {
 public:
  explicit In(std::string_view s) : m_s(s) {}
  std::uint8_t u8() {
    if (m_pos >= m_s.size()) throw bad_input("damaged cache entry: truncated");
    return static_cast<std::uint8_t>(m_s[m_pos++]);
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const auto b = u8();
      v |= std::uint64_t{b & 0x7fU} << shift;
      if ((b & 0x80) == 0) return v;
    }
    throw bad_input("damaged cache entry: bad number");
  }
  std::size_t count() {
    const auto n = u64();
    if (n > m_s.size() - m_pos) throw bad_input("damaged cache entry: bad count");
    return static_cast<std::size_t>(n);
  }
  std::string str() {
    const auto n = count();
    std::string s(m_s.substr(m_pos, n));
    m_pos += n;
    return s;
  }
  std::vector<std::string> strs() {
    std::vector<std::string> v(count());
    for (auto& s : v) s = str();
    return v;
  }
  std::optional<std::string> opt() {
    if (u8() == 0) return std::nullopt;
    return str();
  }
  bool at_end() const { return m_pos == m_s.size(); }

 private:
  std::string_view m_s;
  std::size_t m_pos = 0;
};

void put_problems(Out& o, const std::vector<wheel::Problem>& v) {
  o.u64(v.size());
  for (const auto& p : v) {
    o.str(p.kind);
    o.str(p.path);
    o.str(p.detail);
  }
}

std::vector<wheel::Problem> get_problems(In& in) {
  std::vector<wheel::Problem> v(in.count());
  for (auto& p : v) {
    p.kind = in.str();
    p.path = in.str();
    p.detail = in.str();
  }
  return v;
}

void put_caught(Out& o, python::When when, const std::vector<std::string>& caught) {
  o.u8(static_cast<std::uint8_t>(when));
  o.strs(caught);
}

void put_python(Out& o, const python::Sources& py) {
  o.u8(py.read ? 1 : 0);
  o.u64(py.files);
  o.u64(py.bytes);
  o.str(py.skipped);
  o.u64(py.modules.size());
  for (const auto& m : py.modules) {
    o.str(m.file);
    o.str(m.name);
    o.str(m.error);
    o.u64(m.imports.size());
    for (const auto& i : m.imports) {
      o.u64(static_cast<std::uint64_t>(i.line));
      o.str(i.module);
      put_caught(o, i.when, i.caught);
    }
    o.u64(m.loads.size());
    for (const auto& l : m.loads) {
      o.u64(static_cast<std::uint64_t>(l.line));
      o.str(l.call);
      o.u8(static_cast<std::uint8_t>(l.target));
      o.str(l.path);
      o.str(l.expression);
      o.str(l.unresolved);
      o.u8(l.global ? 1 : 0);
      o.str(l.condition);
      put_caught(o, l.when, l.caught);
    }
  }
}

python::When get_when(In& in) {
  const auto w = in.u8();
  if (w > static_cast<std::uint8_t>(python::When::Never))
    throw bad_input("damaged profile: python context " + std::to_string(w));
  return static_cast<python::When>(w);
}

python::Sources get_python(In& in) {
  python::Sources py;
  py.read = in.u8() != 0;
  py.files = in.u64();
  py.bytes = in.u64();
  py.skipped = in.str();
  py.modules.resize(in.count());
  for (auto& m : py.modules) {
    m.file = in.str();
    m.name = in.str();
    m.error = in.str();
    m.imports.resize(in.count());
    for (auto& i : m.imports) {
      i.line = static_cast<int>(in.u64());
      i.module = in.str();
      i.when = get_when(in);
      i.caught = in.strs();
    }
    m.loads.resize(in.count());
    for (auto& l : m.loads) {
      l.line = static_cast<int>(in.u64());
      l.call = in.str();
      const auto target = in.u8();
      if (target > static_cast<std::uint8_t>(python::Load::Target::Unresolved))
        throw bad_input("damaged profile: python load target " + std::to_string(target));
      l.target = static_cast<python::Load::Target>(target);
      l.path = in.str();
      l.expression = in.str();
      l.unresolved = in.str();
      l.global = in.u8() != 0;
      l.condition = in.str();
      l.when = get_when(in);
      l.caught = in.strs();
    }
  }
  return py;
}

void put_elf(Out& o, const elf::Binary& b, const std::optional<cuda::Fatbins>& gpu_code) {
  o.u8(static_cast<std::uint8_t>(b.elf_class));
  o.u8(static_cast<std::uint8_t>(b.endian));
  o.u8(b.os_abi);
  o.u64(static_cast<std::uint16_t>(b.type));
  o.u64(b.machine);
  o.u64(b.e_flags);
  o.str(b.interpreter);
  o.strs(b.needed);
  o.opt(b.soname);
  o.strs(b.rpath);
  o.strs(b.runpath);
  o.u64(b.flags);
  o.u64(b.flags_1);
  o.u8(b.has_dynamic ? 1 : 0);
  o.u64(b.x86_isa_level ? static_cast<std::uint64_t>(*b.x86_isa_level) + 1 : 0);
  o.u8(b.abi_tag ? 1 : 0);
  if (b.abi_tag) {
    for (const auto v : {b.abi_tag->os, b.abi_tag->major, b.abi_tag->minor, b.abi_tag->patch}) o.u64(v);
  }
  o.u64(b.gnu_stack ? std::uint64_t{*b.gnu_stack} + 1 : 0);
  o.u64(b.symbols.size());
  for (const auto& s : b.symbols) {
    o.str(s.name);
    o.u8(static_cast<std::uint8_t>(s.binding));
    o.u8(static_cast<std::uint8_t>(s.type));
    o.u8(static_cast<std::uint8_t>(static_cast<unsigned>(s.visibility) | (s.defined ? 4U : 0U) |
                                   (s.version_hidden ? 8U : 0U) | (s.copy_relocated ? 16U : 0U)));
    o.str(s.version);
    o.str(s.version_file);
    o.u64(s.value);
    o.u64(s.size);
  }
  o.u64(b.version_needs.size());
  for (const auto& n : b.version_needs) {
    o.str(n.file);
    o.u64(n.versions.size());
    for (const auto& a : n.versions) {
      o.str(a.name);
      o.u64(a.hash);
      o.u64(a.flags);
      o.u64(a.other);
    }
  }
  o.u64(b.version_definitions.size());
  for (const auto& d : b.version_definitions) {
    o.u64(d.index);
    o.u64(d.flags);
    o.u64(d.hash);
    o.str(d.name);
    o.strs(d.parents);
  }
  // The member's GPU code (MemberProfile::cuda) follows its ELF, where elf::Binary held it before.
  o.u8(gpu_code ? 1 : 0);
  if (!gpu_code) return;
  const auto& c = *gpu_code;
  o.u64(c.containers);
  o.u64(c.entries);
  o.u64(c.section_size);
  o.str(c.unread);
  o.u64(c.embedded_containers);
  o.u64(c.embedded_entries);
  o.strs(c.embedded_sections);
  o.str(c.embedded_unread);
  o.u8(c.newest_cubin ? 1 : 0);
  o.u64(c.newest_cubin ? static_cast<std::uint64_t>(c.newest_cubin->major) : 0);
  o.u64(c.newest_cubin ? static_cast<std::uint64_t>(c.newest_cubin->minor) : 0);
  o.u64(c.variants.size());
  for (const auto& v : c.variants) {
    o.u8(v.kind == cuda::CodeKind::Ptx ? 1 : 0);
    o.u64(static_cast<std::uint64_t>(v.arch.major));
    o.u64(static_cast<std::uint64_t>(v.arch.minor));
    o.u8(static_cast<std::uint8_t>(v.arch.suffix));
    o.u8(v.compressed ? 1 : 0);
    o.u8(v.ptx_isa ? 1 : 0);
    o.u64(v.ptx_isa ? static_cast<std::uint64_t>(v.ptx_isa->major) : 0);
    o.u64(v.ptx_isa ? static_cast<std::uint64_t>(v.ptx_isa->minor) : 0);
    o.u64(v.entries);
  }
}

elf::Binary get_elf(In& in, std::optional<cuda::Fatbins>& gpu_code) {
  elf::Binary b;
  b.elf_class = static_cast<elf::Class>(in.u8());
  b.endian = static_cast<elf::Endian>(in.u8());
  b.os_abi = in.u8();
  b.type = static_cast<elf::FileType>(static_cast<std::uint16_t>(in.u64()));
  b.machine = static_cast<std::uint16_t>(in.u64());
  b.e_flags = static_cast<std::uint32_t>(in.u64());
  b.interpreter = in.str();
  b.needed = in.strs();
  b.soname = in.opt();
  b.rpath = in.strs();
  b.runpath = in.strs();
  b.flags = in.u64();
  b.flags_1 = in.u64();
  b.has_dynamic = in.u8() != 0;
  if (const auto isa = in.u64()) b.x86_isa_level = static_cast<int>(isa - 1);
  if (in.u8() != 0) {
    elf::AbiTag tag;
    for (auto* v : {&tag.os, &tag.major, &tag.minor, &tag.patch}) *v = static_cast<std::uint32_t>(in.u64());
    b.abi_tag = tag;
  }
  if (const auto stack = in.u64()) {
    if (stack - 1 > 0xffffffffU) throw bad_input("cache entry: PT_GNU_STACK flags out of range");
    b.gnu_stack = static_cast<std::uint32_t>(stack - 1);
  }
  b.symbols.resize(in.count());
  for (auto& s : b.symbols) {
    s.name = in.str();
    s.binding = static_cast<elf::Binding>(in.u8());
    s.type = static_cast<elf::SymbolType>(in.u8());
    const auto bits = in.u8();
    s.visibility = static_cast<elf::Visibility>(bits & 3);
    s.defined = (bits & 4) != 0;
    s.version_hidden = (bits & 8) != 0;
    s.copy_relocated = (bits & 16) != 0;
    s.version = in.str();
    s.version_file = in.str();
    s.value = in.u64();
    s.size = in.u64();
  }
  b.version_needs.resize(in.count());
  for (auto& n : b.version_needs) {
    n.file = in.str();
    n.versions.resize(in.count());
    for (auto& a : n.versions) {
      a.name = in.str();
      a.hash = static_cast<std::uint32_t>(in.u64());
      a.flags = static_cast<std::uint16_t>(in.u64());
      a.other = static_cast<std::uint16_t>(in.u64());
    }
  }
  b.version_definitions.resize(in.count());
  for (auto& d : b.version_definitions) {
    d.index = static_cast<std::uint16_t>(in.u64());
    d.flags = static_cast<std::uint16_t>(in.u64());
    d.hash = static_cast<std::uint32_t>(in.u64());
    d.name = in.str();
    d.parents = in.strs();
  }
  if (in.u8() == 0) return b;
  auto& c = gpu_code.emplace();
  c.containers = in.u64();
  c.entries = in.u64();
  c.section_size = in.u64();
  c.unread = in.str();
  c.embedded_containers = in.u64();
  c.embedded_entries = in.u64();
  c.embedded_sections = in.strs();
  c.embedded_unread = in.str();
  const bool cubin = in.u8() != 0;
  const auto cubin_major = static_cast<int>(in.u64());
  const auto cubin_minor = static_cast<int>(in.u64());
  if (cubin) c.newest_cubin = cuda::CubinFormat{cubin_major, cubin_minor};
  c.variants.resize(in.count());
  for (auto& v : c.variants) {
    v.kind = in.u8() != 0 ? cuda::CodeKind::Ptx : cuda::CodeKind::Sass;
    v.arch.major = static_cast<int>(in.u64());
    v.arch.minor = static_cast<int>(in.u64());
    v.arch.suffix = static_cast<char>(in.u8());
    v.compressed = in.u8() != 0;
    const bool isa = in.u8() != 0;
    const auto isa_major = static_cast<int>(in.u64());
    const auto isa_minor = static_cast<int>(in.u64());
    if (isa) v.ptx_isa = cuda::PtxIsa{isa_major, isa_minor};
    v.entries = in.u64();
  }
  return b;
}

std::string stat_line(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_dev);
}

}  // namespace

std::string serialize_profile(const WheelProfile& p) {
  std::string s(k_magic, sizeof k_magic);
  Out o(s);
  o.u64(static_cast<std::uint64_t>(p.schema_version));
  o.str(p.filename.filename);
  o.str(p.filename.name);
  o.str(p.filename.version);
  o.opt(p.filename.build);
  o.opt(p.filename.variant);
  o.u64(p.filename.tags.size());
  for (const auto& t : p.filename.tags) {
    o.str(t.python);
    o.str(t.abi);
    o.str(t.platform);
  }
  o.str(p.sha256);
  o.u64(p.size);
  o.str(p.wheel_file.wheel_version);
  o.str(p.wheel_file.generator);
  o.u8(p.wheel_file.root_is_purelib ? (*p.wheel_file.root_is_purelib ? 2 : 1) : 0);
  o.strs(p.wheel_file.tags);
  o.opt(p.wheel_file.build);
  o.str(p.metadata.metadata_version);
  o.str(p.metadata.name);
  o.str(p.metadata.version);
  o.strs(p.metadata.requires_dist);
  o.opt(p.metadata.requires_python);
  o.u64(p.metadata.issues.size());
  for (const auto& i : p.metadata.issues) {
    o.u8(static_cast<std::uint8_t>(i.kind));
    o.str(i.field);
    o.u64(i.line);
    o.u64(i.count);
    o.u64(i.end_line);
  }
  o.u8(p.record_verified ? 1 : 0);
  put_problems(o, p.record_problems);
  put_problems(o, p.problems);
  o.u64(p.member_count);
  o.strs(p.device_code);
  o.str(p.variant_json);
  put_python(o, p.python);
  o.str(p.reader);
  o.str(p.integrity);
  o.str(p.source);
  o.u64(p.members.size());
  for (const auto& m : p.members) {
    o.str(m.path);
    o.u64(m.size);
    o.str(m.error);
    o.u8(m.numpy_c_api ? static_cast<std::uint8_t>(*m.numpy_c_api) : 0);
    o.u8(m.elf ? 1 : 0);
    if (m.elf) put_elf(o, *m.elf, m.cuda);
  }
  return s;
}

WheelProfile deserialize_profile(std::string_view bytes) {
  if (bytes.size() < sizeof k_magic || std::memcmp(bytes.data(), k_magic, sizeof k_magic) != 0) {
    throw bad_input("damaged cache entry: not a wheelcheck profile");
  }
  In in(bytes.substr(sizeof k_magic));
  WheelProfile p;
  p.schema_version = static_cast<int>(in.u64());
  if (p.schema_version != k_profile_schema_version) throw bad_input("cache entry of another schema version");
  p.filename.filename = in.str();
  p.filename.name = in.str();
  p.filename.version = in.str();
  p.filename.build = in.opt();
  p.filename.variant = in.opt();
  p.filename.tags.resize(in.count());
  for (auto& t : p.filename.tags) {
    t.python = in.str();
    t.abi = in.str();
    t.platform = in.str();
  }
  p.sha256 = in.str();
  p.size = in.u64();
  p.wheel_file.wheel_version = in.str();
  p.wheel_file.generator = in.str();
  if (const auto purelib = in.u8()) p.wheel_file.root_is_purelib = purelib == 2;
  p.wheel_file.tags = in.strs();
  p.wheel_file.build = in.opt();
  p.metadata.metadata_version = in.str();
  p.metadata.name = in.str();
  p.metadata.version = in.str();
  p.metadata.requires_dist = in.strs();
  p.metadata.requires_python = in.opt();
  const std::uint64_t issues = in.u64();
  if (issues > 4096) throw bad_input("damaged profile: " + std::to_string(issues) + " METADATA issues");
  for (std::uint64_t k = 0; k < issues; ++k) {
    wheel::MetadataIssue i;
    const auto kind = in.u8();
    if (kind > static_cast<std::uint8_t>(wheel::MetadataIssue::Kind::Duplicate))
      throw bad_input("damaged profile: METADATA issue kind " + std::to_string(kind));
    i.kind = static_cast<wheel::MetadataIssue::Kind>(kind);
    i.field = in.str();
    i.line = in.u64();
    i.count = in.u64();
    i.end_line = in.u64();
    p.metadata.issues.push_back(std::move(i));
  }
  p.record_verified = in.u8() != 0;
  p.record_problems = get_problems(in);
  p.problems = get_problems(in);
  p.member_count = in.u64();
  p.device_code = in.strs();
  p.variant_json = in.str();
  p.python = get_python(in);
  p.reader = in.str();
  p.integrity = in.str();
  p.source = in.str();
  p.members.resize(in.count());
  for (auto& m : p.members) {
    m.path = in.str();
    m.size = in.u64();
    m.error = in.str();
    if (const auto numpy = in.u8()) m.numpy_c_api = numpy;
    if (in.u8() != 0) m.elf = get_elf(in, m.cuda);
  }
  if (!in.at_end()) throw bad_input("damaged cache entry: trailing bytes");
  return p;
}

ProfileCache::ProfileCache(std::string dir, std::uint64_t max_size)
    : m_dir(std::move(dir)), m_folder(std::make_shared<const cache_folder::Folder>(m_dir, max_size)) {}

std::string ProfileCache::default_dir() {
  if (auto d = getenv_or("WHEELCHECK_CACHE_DIR", ""); !d.empty()) return d;
  if (auto x = getenv_or("XDG_CACHE_HOME", ""); !x.empty()) return x + "/wheelcheck";
  if (auto h = getenv_or("HOME", ""); !h.empty()) return h + "/.cache/wheelcheck";
  return "";  // no shared fallback (/tmp is everybody's): no cache
}

namespace {
// The cache's own format, raised whenever what a profile holds grows (2: the members' CUDA fatbins; 3: the
// ABI tag note; 4: GPU code outside .nv_fatbin) or the entries change (5: every entry framed with its
// kind, key and CRC-64; the stat index sharded), so an older entry is a miss rather than a profile read
// without the new facts. 8: a wheel variant's label and variant.json. 9: the newest cubin format of the
// members' SASS. 10: PT_GNU_STACK's flags (an entry of 9 holds none, and none reads as the machine's
// default stack, executable on x86_64: it must be read again, not taken as "no PT_GNU_STACK"), and the Python
// sources' loads and imports (python::Sources).
constexpr int k_cache_format = 10;

// "profiles/ab/<sha256>.<reader>.v<schema>.<format>": an entry's files are this plus ".bin", ".json", ...
// The name is the entry's key, and every file of the entry carries it in its frame.
std::string entry_name(const std::string& sha, const std::string& reader) {
  return sha + "." + reader + ".v" + std::to_string(k_profile_schema_version) + "." + std::to_string(k_cache_format);
}
std::string entry_rel(const std::string& sha, const std::string& reader) {
  return "profiles/" + sha.substr(0, 2) + "/" + entry_name(sha, reader);
}

// A file's key in the stat index: the sha256 of its real path (the frame carries the path itself).
std::pair<std::string, std::string> index_rel(const std::string& path) {
  std::error_code ec;
  const auto real = std::filesystem::canonical(path, ec);
  std::string key = ec ? path : real.string();
  Hasher h;
  h.update(key.data(), key.size());
  const std::string digest = to_hex(h.finish());
  return {"index/" + digest.substr(0, 2) + "/" + digest, std::move(key)};
}

constexpr std::uint64_t k_max_entry = std::uint64_t{4} << 30;

// The JSON rendering as `inspect --json` prints it, in memory (to be framed).
std::string render_json(const WheelProfile& profile) {
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* f = ::open_memstream(&buf, &size);
  if (f == nullptr) throw io_error("cannot render a profile");
  try {
    write_profile_json(profile, f);
  } catch (...) {
    std::fclose(f);
    std::free(buf);
    throw;
  }
  std::fclose(f);
  std::string out(buf, size);
  std::free(buf);
  return out;
}
}  // namespace

std::optional<std::string> ProfileCache::known_sha256(const std::string& path) const {
  const auto [rel, key] = index_rel(path);
  const auto bytes = m_folder->read(rel, 4096);
  if (!bytes) return std::nullopt;
  const auto u = cache_folder::unframe(*bytes, "index", key);
  if (!u) return std::nullopt;
  const auto space = u->payload.rfind(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::string sha(u->payload.substr(space + 1));
  if (!is_sha256_hex(sha) || u->payload.substr(0, space) != stat_line(path)) return std::nullopt;
  return sha;
}

void ProfileCache::remember_sha256(const std::string& path, const std::string& sha256) const {
  const std::string line = stat_line(path);
  if (line.empty() || !is_sha256_hex(sha256)) return;
  const auto [rel, key] = index_rel(path);
  m_folder->write(rel, cache_folder::frame("index", key, false, line + " " + sha256));
}

std::optional<WheelProfile> ProfileCache::load(const std::string& sha256, const std::string& reader) const {
  if (!is_sha256_hex(sha256)) return std::nullopt;
  const auto name = entry_name(sha256, reader);
  // Mapped, not read: the profile is decoded from the page cache's pages (no copy, no fresh pages).
  const auto u = m_folder->map_entry(entry_rel(sha256, reader) + ".bin", k_max_entry, "profile", name);
  if (!u) return std::nullopt;
  try {
    auto p = deserialize_profile(u->payload);
    if (p.sha256 != sha256 || cache_key(p) != reader) return std::nullopt;
    return p;
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<ProfileCache::Rendering> ProfileCache::load_json(const std::string& sha256,
                                                               const std::string& reader) const {
  if (!is_sha256_hex(sha256)) return std::nullopt;
  auto e = m_folder->map_entry(entry_rel(sha256, reader) + ".json", k_max_entry, "json", entry_name(sha256, reader));
  if (!e) return std::nullopt;
  // The JSON starts with '{' and ends with "}\n", as the renderer writes it; the frame proved every byte.
  if (e->payload.size() < 3 || e->payload.front() != '{' || !e->payload.ends_with("}\n")) return std::nullopt;
  return Rendering{std::move(e->bytes), e->payload, e->flag};
}

void ProfileCache::store(const WheelProfile& profile) const {
  if (!is_sha256_hex(profile.sha256)) return;
  store_json(profile);
  const std::string key = cache_key(profile);
  m_folder->write(entry_rel(profile.sha256, key) + ".bin",
                  cache_folder::frame("profile", entry_name(profile.sha256, key), false, serialize_profile(profile)));
}

void ProfileCache::store_json(const WheelProfile& profile) const {
  if (!is_sha256_hex(profile.sha256)) return;
  const std::string key = cache_key(profile);
  m_folder->write(
      entry_rel(profile.sha256, key) + ".json",
      cache_folder::frame("json", entry_name(profile.sha256, key), !profile.has_problems(), render_json(profile)));
}

std::optional<std::string> ProfileCache::load_derived(const std::string& sha256, const std::string& reader,
                                                      const std::string& name) const {
  if (!is_sha256_hex(sha256)) return std::nullopt;
  const auto bytes = m_folder->read(entry_rel(sha256, reader) + "." + name, std::uint64_t{16} << 20);
  if (!bytes) return std::nullopt;
  const auto u = cache_folder::unframe(*bytes, "derived", entry_name(sha256, reader) + "." + name);
  if (!u) return std::nullopt;
  return std::string(u->payload);
}

void ProfileCache::store_derived(const std::string& sha256, const std::string& reader, const std::string& name,
                                 std::string_view text) const {
  if (!is_sha256_hex(sha256)) return;
  m_folder->write(entry_rel(sha256, reader) + "." + name,
                  cache_folder::frame("derived", entry_name(sha256, reader) + "." + name, false, text));
}

std::string ProfileCache::downloads_dir() const {
  return m_folder->subfolder("downloads");
}

// A headers-only profile was never hashed: its sha256 is what an index claimed for one URL. So its key
// also names that URL (a digest of it): a claim made for one URL cannot answer for another.
std::string headers_key(const std::string& reader, const std::string& source) {
  Hasher h("sha256");
  h.update(source.data(), source.size());
  return reader + "-headers-" + to_hex(h.finish()).substr(0, 16);
}

std::string cache_key(const WheelProfile& profile) {
  return profile.integrity == k_integrity_headers ? headers_key(profile.reader, profile.source) : profile.reader;
}

CachedInspect inspect_cached(const std::string& path, const InspectOptions& options, const ProfileCache* cache) {
  if (cache != nullptr) {
    if (auto sha = cache->known_sha256(path)) {
      // A full profile answers a headers-only question too (it read more, and verified it). A cached
      // headers-only profile is never used for a file: it is keyed by what an index claimed.
      if (auto p = cache->load(*sha, elf::reader_name(options.reader))) return {std::move(*p), true};
    }
  }
  CachedInspect r{inspect_wheel(path, options), false};
  // A local headers-only profile has no sha256 (the file was not hashed): nothing to key it by.
  if (options.verify == Verify::Headers) return r;
  if (cache != nullptr) {
    // A cache that cannot be written (read-only home, full disk) costs speed, never the answer.
    try {
      cache->store(r.profile);
      cache->remember_sha256(path, r.profile.sha256);
    } catch (const Error& e) {
      r.cache_error = e.what();
    }
  }
  return r;
}

}  // namespace wheelcheck
