// inspect: one wheel in, its native profile out.
//
// The wheel is read once. Every member is inflated exactly once on the first pass, and each chunk goes
// to two consumers: the RECORD digest and, when the member starts with the ELF magic, the streaming
// ELF scanner. Members are independent, so they are spread over worker threads (parallel_for, largest
// first, so the long ones start early), each thread with its own libzip handle; the whole-file sha256 of
// the wheel is one more job in the same queue. A large member is itself read by two threads, one
// inflating and one hashing and scanning (ChunkPipe). A member whose ELF tables lie beyond what the
// first pass kept is read again, without hashing, only as far as the scanner still needs (see
// inspector/elf/scanner.cpp).
#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <thread>

#include <fmt/format.h>

#include "inspector/wheel/record.hpp"
#include "wheelcheck/cuda.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck {

namespace {

constexpr std::size_t k_chunk = std::size_t{1} << 20;
// Headers-only through a RandomAccess: the compressed bytes of each member's start asked for before the
// members are read (the first input of its forward inflate; zip_archive.cpp's k_first_input).
constexpr std::uint64_t k_prefetch_head = std::uint64_t{64} << 10;

struct MemberResult {
  wheel::MemberDigest digest;
  std::optional<MemberProfile> member;  // set for ELF members
  std::optional<wheel::Problem> problem;
  std::optional<python::Module> python;  // set for .py members that were read
};

// A Python source the check reads for its loads (python::read_module): a .py member no larger than
// python::k_max_source, outside .dist-info/ and .data/.
bool python_source(const wheel::MemberInfo& m) {
  return m.name.ends_with(".py") && !m.directory && !m.refused && !python::module_name(m.name).empty();
}

python::Module read_python(const wheel::MemberInfo& m, std::string_view text) {
  if (m.size > python::k_max_source) {
    python::Module out;
    out.file = m.name;
    out.name = python::module_name(m.name);
    out.error = fmt::format("{} is {}: larger than the {} read for Python loads", m.name, format_size(m.size),
                            format_size(python::k_max_source));
    return out;
  }
  return python::read_module(m.name, text);
}

class ProgressReporter {
 public:
  ProgressReporter(const InspectOptions& options, std::uint64_t total) : m_options(options), m_total(total) {}
  void add(std::uint64_t bytes, const std::string& current) {
    if (!m_options.progress) return;
    const auto done = m_done.fetch_add(bytes) + bytes;
    if (done < m_next_report.load()) return;
    std::lock_guard lock(m_mutex);
    if (done < m_next_report.load()) return;
    m_next_report = done + std::max<std::uint64_t>(m_total / 50, 16 << 20);
    m_options.progress(Progress{done, m_total, current});
  }

 private:
  const InspectOptions& m_options;
  std::uint64_t m_total;
  std::atomic<std::uint64_t> m_done{0};
  std::atomic<std::uint64_t> m_next_report{0};
  std::mutex m_mutex;
};

// The remaining passes of an ELF whose tables the first pass did not keep: stream again, no hashing,
// and stop as soon as the scanner has what it wants.
elf::Binary finish_elf(elf::ElfScanner& scanner, const wheel::ZipArchive& archive, std::uint64_t index,
                       std::span<std::byte> buf) {
  for (;;) {
    if (auto b = scanner.finish_pass()) return std::move(*b);
    auto stream = archive.open_member(index);
    while (!scanner.satisfied()) {
      const auto n = stream->read(buf);
      if (n == 0) break;
      scanner.feed(buf.data(), n);
    }
  }
}

// Hands full buffers from the inflating thread to a consumer thread (hashing and scanning): on a large
// member the two run on two cores, so the member costs the slower of the two rather than their sum.
class ChunkPipe {
 public:
  explicit ChunkPipe(std::size_t buffers) {
    for (std::size_t i = 0; i < buffers; ++i) m_free.push_back(std::vector<std::byte>(k_chunk));
  }
  std::vector<std::byte> take_free() {
    std::unique_lock lock(m_mutex);
    m_cv.wait(lock, [&] { return !m_free.empty() || m_aborted; });
    if (m_aborted) return {};
    auto b = std::move(m_free.back());
    m_free.pop_back();
    return b;
  }
  void give_full(std::vector<std::byte> b, std::size_t n) {
    std::lock_guard lock(m_mutex);
    m_full.emplace_back(std::move(b), n);
    m_cv.notify_all();
  }
  // The next full buffer; n == 0 marks the end.
  std::pair<std::vector<std::byte>, std::size_t> take_full() {
    std::unique_lock lock(m_mutex);
    m_cv.wait(lock, [&] { return !m_full.empty() || m_aborted; });
    if (m_full.empty()) return {{}, 0};
    auto item = std::move(m_full.front());
    m_full.erase(m_full.begin());
    return item;
  }
  void give_free(std::vector<std::byte> b) {
    std::lock_guard lock(m_mutex);
    m_free.push_back(std::move(b));
    m_cv.notify_all();
  }
  void abort() {
    std::lock_guard lock(m_mutex);
    m_aborted = true;
    m_cv.notify_all();
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::vector<std::vector<std::byte>> m_free;
  std::vector<std::pair<std::vector<std::byte>, std::size_t>> m_full;
  bool m_aborted = false;
};

constexpr std::uint64_t k_pipeline_threshold = std::uint64_t{32} << 20;

// Which NumPy C API a member's compiled-in _import_array() imports (MemberProfile::numpy_c_api), found in
// its bytes as they stream past: the module names are string constants, so a chunk boundary may split one
// (the last bytes of each chunk are kept).
class NumpyApiSearch {
 public:
  // Python extension modules, and libraries named *python* (PyTorch's libtorch_python.so holds its numpy code).
  static bool wanted(const std::string& path) {
    const std::string base = base_name(path);
    return base.find(".so") != std::string::npos &&
           (base.find("python") != std::string::npos || base.find(".cpython-") != std::string::npos ||
            base.find(".abi3.") != std::string::npos);
  }
  void feed(const std::byte* data, std::size_t n) {
    if (m_v2) return;  // the strongest answer is in
    const std::string_view chunk(reinterpret_cast<const char*>(data), n);
    // Across the boundary: the kept end of the bytes before, and the start of these.
    std::string joint = m_tail;
    joint.append(chunk.substr(0, std::min(n, k_keep)));
    look(joint);
    look(chunk);
    m_tail.append(chunk.substr(n > k_keep ? n - k_keep : 0));
    if (m_tail.size() > k_keep) m_tail.erase(0, m_tail.size() - k_keep);
  }
  std::optional<int> result() const {
    if (m_v2) return 2;
    if (m_v1) return 1;
    return std::nullopt;
  }

 private:
  static constexpr std::size_t k_keep = 40;
  void look(std::string_view s) {
    if (!m_v2 && s.find("numpy._core._multiarray_umath") != std::string_view::npos) m_v2 = true;
    if (!m_v1 && (s.find("numpy.core._multiarray_umath") != std::string_view::npos ||
                  s.find("numpy.core.multiarray") != std::string_view::npos))
      m_v1 = true;
  }
  std::string m_tail;
  bool m_v1 = false, m_v2 = false;
};

MemberResult process_member(const wheel::ZipArchive& archive, const wheel::MemberInfo& info,
                            const std::string& algorithm, const InspectOptions& options, ProgressReporter& progress,
                            bool pipeline) {
  MemberResult r;
  // One chunk, or less for a small member (util.hpp).
  const ReadBuffer read_buffer(info.size, k_chunk);
  const std::span<std::byte> buf = read_buffer.span();
  std::optional<Hasher> hasher;
  if (options.verify_record) hasher.emplace(algorithm);
  std::unique_ptr<cuda::CodeReader> code;  // the GPU code, read as the scanner streams (inspector/cuda/)
  std::unique_ptr<elf::ElfScanner> scanner;
  std::vector<std::uint8_t> whole;  // the LIEF reader's copy (only with --elf-reader lief)
  bool is_elf = false;
  std::optional<NumpyApiSearch> numpy;
  std::uint64_t total = 0;
  const bool source = options.python_sources && python_source(info) && info.size <= python::k_max_source;
  std::string text;  // a Python source's bytes
  if (source) text.reserve(info.size);
  auto consume = [&](const std::byte* data, std::size_t n) {
    total += n;
    if (source && text.size() + n <= python::k_max_source) text.append(reinterpret_cast<const char*>(data), n);
    if (hasher) hasher->update(data, n);
    if (scanner) scanner->feed(data, n);
    if (numpy) numpy->feed(data, n);
    if (is_elf && options.reader == elf::ReaderKind::Lief) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(data);
      whole.insert(whole.end(), p, p + n);
    }
    progress.add(n, info.name);
  };
  try {
    auto stream = archive.open_member(info.index);
    // The first chunk, gathered to at least four bytes however the stream splits them, decides ELF.
    std::size_t n = stream->read(buf);
    while (n != 0 && n < 4) {
      const auto more = stream->read(buf.subspan(n));
      if (more == 0) break;
      n += more;
    }
    is_elf = elf::has_elf_magic(buf.data(), n);
    if (is_elf && NumpyApiSearch::wanted(info.name)) numpy.emplace();
    if (is_elf && options.reader == elf::ReaderKind::Fast) {
      code = std::make_unique<cuda::CodeReader>(info.size);
      scanner = std::make_unique<elf::ElfScanner>(info.size, options.elf_limits, code.get());
    }
    if (n != 0) consume(buf.data(), n);
    if (pipeline && n != 0) {
      ChunkPipe pipe(4);
      std::optional<Error> consumer_error;
      std::thread consumer([&] {
        try {
          for (;;) {
            auto [b, len] = pipe.take_full();
            if (len == 0) break;
            consume(b.data(), len);
            pipe.give_free(std::move(b));
          }
        } catch (const Error& e) {
          consumer_error = e;
          pipe.abort();
        }
      });
      try {
        for (;;) {
          auto b = pipe.take_free();
          if (b.empty()) break;  // the consumer failed
          const auto got = stream->read(b);
          pipe.give_full(std::move(b), got);
          if (got == 0) break;
        }
      } catch (...) {
        pipe.abort();
        consumer.join();
        throw;
      }
      consumer.join();
      if (consumer_error) throw *consumer_error;
    } else {
      while (n != 0) {
        n = stream->read(buf);
        if (n != 0) consume(buf.data(), n);
      }
    }
    r.digest.read = true;
    r.digest.size = total;
    r.digest.algorithm = algorithm;
    if (hasher) r.digest.digest = base64url_nopad(hasher->finish());
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Io) throw;  // the disk or the network failed, not the wheel
    r.problem = wheel::Problem{"corrupt-member", info.name, e.what()};
    return r;
  }
  if (options.python_sources && python_source(info)) r.python = read_python(info, text);
  if (!is_elf) return r;
  MemberProfile m;
  m.path = info.name;
  m.size = info.size;
  if (numpy) m.numpy_c_api = numpy->result();
  try {
    if (scanner) {
      m.elf = finish_elf(*scanner, archive, info.index, buf);
      m.cuda = code->fatbins();
    } else {
      cuda::CodeReader whole_code(std::as_bytes(std::span<const std::uint8_t>(whole)));
      m.elf = elf::read_elf_lief(whole, info.name, &whole_code);
      m.cuda = whole_code.fatbins();
    }
  } catch (const Error& e) {
    m.error = e.what();
    r.problem = wheel::Problem{"malformed-elf", info.name, e.what()};
  }
  r.member = std::move(m);
  return r;
}

// Headers-only: the ELF reader asks the member for the ranges it wants (MemberReader serves them from
// the member's start or its separately decoded end); a member that is not ELF costs its first 4 bytes.
MemberResult process_member_headers(const wheel::ZipArchive& archive, const wheel::MemberInfo& info,
                                    const InspectOptions& options, ProgressReporter& progress) {
  MemberResult r;
  progress.add(info.size, info.name);
  if (info.size < 4) return r;
  std::unique_ptr<wheel::MemberReader> reader;
  try {
    reader = archive.random_member(info.index);
    std::array<std::byte, 4> magic{};
    reader->read(0, magic);
    if (!elf::has_elf_magic(magic.data(), magic.size())) return r;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Io) throw;
    r.problem = wheel::Problem{"corrupt-member", info.name, e.what()};
    return r;
  }
  MemberProfile m;
  m.path = info.name;
  m.size = info.size;
  try {
    // A stored member's fatbin is read header by header; a deflated one's lies where only inflating the
    // member up to it would reach, which a headers-only read never does.
    const char* skip = info.method == 0 ? ""
                                        : "a headers-only read does not inflate the middle of a compressed member, "
                                          "where its fatbin lies (read the wheel in full to see it)";
    const elf::ReadAt read_at = [&](std::uint64_t offset, std::span<std::byte> out) { reader->read(offset, out); };
    cuda::CodeReader code(info.size, read_at, skip,
                          "a headers-only read fetches no data sections, where a library may keep GPU code it "
                          "loads itself (read the wheel in full to see it)");
    m.elf = elf::read_elf_random(info.size, read_at, options.elf_limits, &code,
                                 reader->takes_hints() ? std::function<void(const ContentHint&)>(
                                                             [&](const ContentHint& h) { reader->expect(h); })
                                                       : std::function<void(const ContentHint&)>());
    m.cuda = code.fatbins();
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Io) throw;
    m.error = e.what();
    r.problem = wheel::Problem{"malformed-elf", info.name, e.what()};
  }
  r.member = std::move(m);
  return r;
}

// The .dist-info folder: the one named for this distribution, else the only one there is.
std::string find_dist_info(const wheel::ZipArchive& archive, const wheel::Filename& filename) {
  std::vector<std::string> candidates;
  for (const auto& m : archive.members()) {
    const auto slash = m.name.find('/');
    if (slash == std::string::npos) continue;
    const std::string top = m.name.substr(0, slash);
    if (top.size() > 10 && top.compare(top.size() - 10, 10, ".dist-info") == 0 &&
        std::find(candidates.begin(), candidates.end(), top) == candidates.end()) {
      candidates.push_back(top);
    }
  }
  for (const auto& c : candidates) {
    wheel::Filename probe;
    probe.name = c.substr(0, c.find('-'));
    if (probe.normalized_name() == filename.normalized_name()) return c;
  }
  return candidates.size() == 1 ? candidates.front() : std::string();
}

}  // namespace

// Deny list, by the name's last extension (any case), its base name, or its top folder. Each says a file
// no dynamic loader maps and no importer loads as native code:
//   Python sources and bytecode   .py .pyi .pyc .pyo .pyx .pxd .pxi .pth
//   C, C++ and CUDA sources       .h .hh .hpp .hxx .cuh .inl .c .cc .cpp .cxx .cu
//   text and documentation        .txt .md .rst LICENSE LICENCE COPYING NOTICE AUTHORS README CHANGELOG
//   data and configuration        .json .yaml .yml .toml .cfg .ini .csv .tsv .xml .html .htm .css .js .map
//                                 .png .jpg .jpeg .gif .svg .ico .typed .proto .cmake .pc .mo .po .ipynb
//   static archives and objects   .a .o (linked at build time, never loaded)
//   the wheel's own metadata      anything under a top-level *.dist-info/ folder (read on its own)
// Anything else is opened, whatever it is called: .so, .so.1.2, _C, a .bin, a .cubin.
bool never_loaded(std::string_view name) {
  const auto slash = name.find('/');
  if (slash != std::string_view::npos && name.substr(0, slash).ends_with(".dist-info")) return true;
  const std::string base = ascii_lower(std::string(name.substr(name.rfind('/') + 1)));
  static const std::set<std::string, std::less<>> bases = {"license", "licence", "copying",  "notice",
                                                           "authors", "readme",  "changelog"};
  if (bases.count(base) != 0) return true;
  const auto dot = base.rfind('.');
  if (dot == std::string::npos || dot == 0) return false;
  static const std::set<std::string, std::less<>> extensions = {
      "py",  "pyi", "pyc", "pyo",   "pyx",   "pxd",   "pxi", "pth", "h",   "hh",    "hpp",  "hxx", "cuh",
      "inl", "c",   "cc",  "cpp",   "cxx",   "cu",    "txt", "md",  "rst", "json",  "yaml", "yml", "toml",
      "cfg", "ini", "csv", "tsv",   "xml",   "html",  "htm", "css", "js",  "map",   "png",  "jpg", "jpeg",
      "gif", "svg", "ico", "typed", "proto", "cmake", "pc",  "mo",  "po",  "ipynb", "a",    "o"};
  return extensions.count(std::string_view(base).substr(dot + 1)) != 0;
}

// Local `--verify headers` against `--verify full` (wall medians of 7 runs, side by side, 2 shared cores):
// a wheel of one 19 MB libtorch_python (6.5 MB) 0.242 s against 0.200 s, of two (14.4 MB) 0.258 s against
// 0.281 s, of four (25.8 MB) 0.383 s against 0.346 s: decoding the end of a member on its own and its
// dynamic symbols from the start costs about what inflating and hashing 20 MB does. A 4.8 MB wheel was
// 0.103 s against 0.143 s, torch-shaped (7.3 MB, three libraries, 1,900 Python files) 0.142 s against 0.231
// s, a 38 MB libtorch_cpu wheel 0.202 s against 0.510 s. Below 32 MiB the full read is never more than
// some tens of ms slower, and it is the one that verifies; above it, headers-only wins on every wheel measured.
const std::uint64_t k_read_whole_below = std::uint64_t{32} << 20;

bool WheelProfile::has_problems() const {
  return !problems.empty() || !record_problems.empty();
}

namespace {

// Where a wheel's bytes come from: a path (libzip's own file source) or a RandomAccess.
struct WheelInput {
  std::string path;
  std::shared_ptr<const RandomAccess> file;
  // Headers-only through a RandomAccess: without libzip's check of every local header (wheel.hpp).
  bool headers = false;
  std::unique_ptr<wheel::ZipArchive> open(const wheel::ArchiveLimits& limits) const {
    return file ? wheel::ZipArchive::open(file, limits, !headers) : wheel::ZipArchive::open(path, limits);
  }
  std::string sha256_hex() const {
    if (!file) return sha256_file_hex(path);
    Hasher h("sha256");
    const ReadBuffer read_buffer(file->size(), k_chunk);
    const std::span<std::byte> buf = read_buffer.span();
    for (std::uint64_t off = 0; off < file->size(); off += buf.size()) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), file->size() - off));
      file->read_at(off, buf.first(n));
      h.update(buf.data(), n);
    }
    return to_hex(h.finish());
  }
};

WheelProfile inspect_input(WheelInput input, const std::string& filename, const std::string& known_sha256,
                           const InspectOptions& options) {
  if (options.verify == Verify::Headers && options.reader != elf::ReaderKind::Fast) {
    throw usage_error("--verify headers works with the fast ELF reader only (LIEF reads whole files)");
  }
  WheelProfile p;
  p.size = input.file ? input.file->size() : FileSource(input.path).size();
  // A small local wheel is read in full: cheaper than headers-only there (k_read_whole_below), and more.
  const bool headers = options.verify == Verify::Headers && (input.file || p.size >= options.read_whole_below);
  // A file saved under another name (flaggems.whl) is read by its .dist-info: the name and version of
  // METADATA, the Tag lines of WHEEL (the command line warns, naming the name it should have).
  std::optional<Error> name_error;
  try {
    p.filename = wheel::parse_filename(filename);
  } catch (const Error& e) {
    name_error = e;
    p.filename.filename = filename.substr(filename.find_last_of('/') + 1);
  }
  p.reader = elf::reader_name(options.reader);
  p.integrity = headers ? k_integrity_headers : k_integrity_full;
  input.headers = headers;
  auto archive = input.open(options.limits);
  const auto& members = archive->members();
  p.member_count = members.size();
  for (const auto& m : members) {
    for (const char* ext : {".bc", ".cubin", ".ptx", ".fatbin"}) {
      if (m.name.ends_with(ext)) p.device_code.push_back(m.name);
    }
  }
  p.problems = archive->problems();

  // .dist-info/WHEEL, METADATA, RECORD
  const std::string dist_info = find_dist_info(*archive, p.filename);
  std::vector<wheel::RecordEntry> record;
  bool record_ok = false;
  const std::string record_path = dist_info + "/RECORD";
  if (dist_info.empty()) {
    p.problems.push_back({"no-dist-info", "", "the wheel has no .dist-info folder for " + p.filename.name});
  } else {
    auto read_meta = [&](const std::string& file) -> std::optional<std::string> {
      const auto idx = archive->find(dist_info + "/" + file);
      if (!idx) {
        auto& list = file == "RECORD" ? p.record_problems : p.problems;
        list.push_back({"missing-" + std::string(file == "RECORD"  ? "record"
                                                 : file == "WHEEL" ? "wheel-file"
                                                                   : "metadata"),
                        dist_info + "/" + file, "the wheel has no " + file + " file"});
        return std::nullopt;
      }
      try {
        return archive->read_small(*idx);
      } catch (const Error& e) {
        p.problems.push_back({"corrupt-member", dist_info + "/" + file, e.what()});
        return std::nullopt;
      }
    };
    if (auto text = read_meta("WHEEL")) p.wheel_file = wheel::parse_wheel_file(*text);
    if (auto text = read_meta("METADATA")) p.metadata = wheel::parse_metadata(*text);
    // A wheel variant's properties (PEP 825 draft), when it has them: kept as text, read by variant::parse.
    if (const auto idx = archive->find(dist_info + "/variant.json")) {
      try {
        p.variant_json = archive->read_small(*idx);
      } catch (const Error& e) {
        p.problems.push_back({"corrupt-member", dist_info + "/variant.json", e.what()});
      }
    }
    if (auto text = headers ? std::nullopt : read_meta("RECORD")) {
      try {
        record = wheel::parse_record(*text);
        record_ok = true;
      } catch (const Error& e) {
        p.record_problems.push_back({"malformed-record", record_path, e.what()});
      }
    }
  }
  if (name_error) {
    try {
      p.filename = wheel::parse_filename(
          wheel::canonical_filename(p.metadata.name, p.metadata.version, p.wheel_file.build, p.wheel_file.tags));
    } catch (const Error& e) {
      throw bad_input(std::string(name_error->what()) + "; nor does its .dist-info say what it is (" + e.what() + ")");
    }
  }
  std::map<std::string, std::string> algorithm_of;
  for (const auto& e : record) {
    if (Hasher::supported(e.algorithm)) algorithm_of[e.path] = e.algorithm;
  }

  // The jobs: every readable member, largest first; job -1 hashes the wheel file itself.
  std::vector<std::int64_t> jobs;
  std::uint64_t total_bytes = headers ? 0 : p.size;
  for (const auto& m : members) {
    if (python_source(m)) {
      ++p.python.files;
      p.python.bytes += m.size;
    }
    // A headers-only read reads the Python sources whole (they are small), unless told not to.
    const bool source = headers && options.python_sources && python_source(m);
    if (m.directory || m.refused || (headers && never_loaded(m.name) && !source)) continue;
    jobs.push_back(static_cast<std::int64_t>(m.index));
    total_bytes += m.size;
  }
  p.python.read = options.python_sources;
  if (!options.python_sources && p.python.files != 0)
    p.python.skipped = fmt::format(
        "{} .py members ({}) not read (--no-python-sources): the native files they load "
        "are not known",
        p.python.files, format_size(p.python.bytes));
  if (headers && input.file) {
    // Every member that will be read starts with its local header, its ELF header and its dynamic symbols:
    // asked for at once, they come in as few requests as the layout allows.
    std::vector<std::uint64_t> heads(jobs.begin(), jobs.end());
    std::sort(heads.begin(), heads.end());
    archive->prefetch_heads(heads, k_prefetch_head);
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [&](std::int64_t a, std::int64_t b) { return members[a].size > members[b].size; });
  const auto wheel_pos = std::lower_bound(jobs.begin(), jobs.end(), p.size,
                                          [&](std::int64_t j, std::uint64_t size) { return members[j].size > size; });
  if (!headers) jobs.insert(wheel_pos, -1);

  std::vector<MemberResult> results(members.size());
  std::string wheel_sha;
  std::optional<Error> wheel_sha_error;
  ProgressReporter progress(options, total_bytes);
  const auto threads = static_cast<unsigned>(
      std::min<std::size_t>(options.threads != 0 ? options.threads : default_threads(), jobs.size()));
  // Worker 0 (this thread) reads through `archive`; every other worker opens its own libzip handle once,
  // on its first job.
  std::vector<std::unique_ptr<wheel::ZipArchive>> own(threads);
  parallel_for(jobs.size(), threads, [&](std::size_t j, unsigned worker) {
    if (jobs[j] < 0) {
      try {
        wheel_sha = input.sha256_hex();
      } catch (const Error& e) {
        wheel_sha_error = e;
      }
      progress.add(p.size, p.filename.filename);
      return;
    }
    if (worker != 0 && !own[worker]) own[worker] = input.open(options.limits);
    const wheel::ZipArchive& za = worker != 0 ? *own[worker] : *archive;
    const auto& info = members[jobs[j]];
    if (headers && options.python_sources && python_source(info)) {
      MemberResult& r = results[info.index];
      progress.add(info.size, info.name);
      try {
        r.python = read_python(info, info.size <= python::k_max_source ? za.read_small(info.index) : std::string());
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::Io) throw;
        r.problem = wheel::Problem{"corrupt-member", info.name, e.what()};
      }
      return;
    }
    if (headers) {
      results[info.index] = process_member_headers(za, info, options, progress);
      return;
    }
    auto it = algorithm_of.find(info.name);
    results[info.index] = process_member(za, info, it != algorithm_of.end() ? it->second : "sha256", options, progress,
                                         threads > 1 && info.size >= k_pipeline_threshold);
  });
  if (wheel_sha_error) throw *wheel_sha_error;
  p.sha256 = headers ? known_sha256 : wheel_sha;
  if (!headers && !known_sha256.empty() && known_sha256 != wheel_sha) {
    throw bad_input(filename + ": sha256 " + wheel_sha + " differs from the index's " + known_sha256);
  }

  std::map<std::string, wheel::MemberDigest> digests;
  for (const auto& m : members) {
    auto& r = results[m.index];
    if (r.problem) p.problems.push_back(*r.problem);
    if (r.member) p.members.push_back(std::move(*r.member));
    if (r.python && (!r.python->imports.empty() || !r.python->loads.empty() || !r.python->error.empty()))
      p.python.modules.push_back(std::move(*r.python));
    if (r.digest.read) digests[m.name] = r.digest;
  }
  if (record_ok && options.verify_record && !headers) {
    auto record_problems = wheel::verify_record(record, members, digests, record_path);
    // Verified means every file was checked: a member that could not be read (corrupt, encrypted,
    // over the limits) leaves RECORD unverified even when nothing listed mismatched.
    std::size_t unread = 0;
    for (const auto& m : members) {
      if (!m.directory && m.name != record_path && !digests.count(m.name)) ++unread;
    }
    p.record_verified = record_problems.empty() && unread == 0;
    p.record_problems.insert(p.record_problems.end(), record_problems.begin(), record_problems.end());
  }
  return p;
}

}  // namespace

WheelProfile inspect_wheel(const std::string& path, const InspectOptions& options) {
  return inspect_input(WheelInput{path, nullptr}, path, "", options);
}

WheelProfile inspect_wheel(std::shared_ptr<const RandomAccess> file, const std::string& filename,
                           const std::string& sha256, const InspectOptions& options) {
  WheelInput input{file->name(), std::move(file)};
  auto p = inspect_input(input, filename, sha256, options);
  p.source = input.path;
  return p;
}

}  // namespace wheelcheck
