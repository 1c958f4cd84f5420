// The ELF files of a probe: each real file once, however many names and folders reach it, read on all
// cores, largest first (the largest dominate; starting them first keeps the cores busy to the end). Only
// the header, the dynamic section and the dynamic symbols are read (pread, see inspector/elf/scanner.cpp).
// A file that is not ELF is skipped (linker scripts named libc.so are normal; a versioned name that is
// not ELF is a "not-elf" finding); one that is malformed is a "malformed-elf" finding naming its image
// path, never its host path; only shared objects, and programs where a program was asked for, are kept.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "probes/detail.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::probe {

namespace {

void read_file(ElfFile& file, bool want_table) {
  try {
    int fd = ::open(file.host_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
      file.finding = Problem{"unreadable", file.image_path, std::string("cannot open: ") + std::strerror(errno)};
      return;
    }
    unsigned char magic[4] = {};
    const ssize_t n = ::pread(fd, magic, sizeof magic, 0);
    ::close(fd);
    if (n != 4 || !elf::has_elf_magic(magic, 4)) {
      // Linker scripts named libc.so are normal; a versioned name that is not ELF is worth a word.
      if (base_name(file.image_path).find(".so.") != std::string::npos) {
        file.finding = Problem{"not-elf", file.image_path, "named like a shared library but not an ELF file"};
      }
      return;
    }
    file.binary = elf::read_elf_file(file.host_path);
    // ET_DYN only, except for programs: executables are not loaded as libraries.
    if (file.binary.type != elf::FileType::Shared && !(file.program && file.binary.type == elf::FileType::Executable))
      return;
    if (want_table) {
      file.table = exports::Table::from_binary(file.binary, base_name(file.image_path), file.image_path);
    }
    file.binary.symbols.clear();
    file.binary.symbols.shrink_to_fit();
    file.ok = true;
  } catch (const Error& e) {
    std::string detail = e.what();
    const auto pos = detail.find(file.host_path);
    if (pos != std::string::npos) detail.replace(pos, file.host_path.size(), file.image_path);
    file.finding = Problem{"malformed-elf", file.image_path, detail};
  }
}

std::vector<std::string> version_names(const elf::Binary& b) {
  std::vector<std::string> out;
  for (const auto& d : b.version_definitions) {
    if (!d.base()) out.push_back(d.name);
  }
  return out;
}

// What the loader reads of a file's own dynamic section to search for its needs, and the versions it needs.
template <class L>
void dynamic_facts(const elf::Binary& b, L& l) {
  l.rpath = b.rpath;
  l.runpath = b.runpath;
  l.flags_1 = b.flags_1;
  for (const auto& need : b.version_needs) {
    for (const auto& v : need.versions) {
      if ((v.flags & 2) == 0) l.version_needs.push_back(need.file + " " + v.name);  // not VER_FLG_WEAK
    }
  }
  l.dynamic_recorded = true;
}

}  // namespace

std::optional<std::size_t> ElfFiles::add(const std::string& image_path, std::vector<Problem>& findings) {
  auto r = m_root.resolve(image_path, &findings);
  if (!r) return std::nullopt;
  if (m_root.type(r->image_path) != RootFs::Type::File) return std::nullopt;
  auto [it, inserted] = m_index.emplace(r->image_path, m_files.size());
  if (inserted) {
    ElfFile f;
    f.image_path = r->image_path;
    f.host_path = r->host_path;
    std::error_code ec;
    f.size = std::filesystem::file_size(r->host_path, ec);
    m_files.push_back(std::move(f));
  }
  return it->second;
}

void ElfFiles::read_all(unsigned threads, bool want_tables, const std::function<void(const std::string&)>& progress,
                        std::vector<Problem>& findings, std::size_t first) {
  std::vector<std::size_t> order(m_files.size() - std::min(first, m_files.size()));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = first + i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return m_files[a].size > m_files[b].size; });
  std::atomic<std::size_t> done{0};
  std::mutex progress_mutex;
  std::size_t reported = 0;
  parallel_for(order.size(), threads, [&](std::size_t i, unsigned) {
    read_file(m_files[order[i]], want_tables);
    const std::size_t d = done.fetch_add(1) + 1;
    if (progress && order.size() >= 50) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      if (d * 10 / order.size() > reported * 10 / order.size() && d < order.size()) {
        reported = d;
        progress(fmt::format("read {}/{} files", d, order.size()));
      }
    }
  });
  for (std::size_t i = first; i < m_files.size(); ++i) {
    if (m_files[i].finding) findings.push_back(*m_files[i].finding);
  }
}

std::vector<std::pair<std::string, exports::Table>> ElfFiles::take_tables() {
  std::vector<std::pair<std::string, exports::Table>> tables;
  for (auto& f : m_files) {
    if (f.ok && f.table) tables.emplace_back(table_key(f.image_path), std::move(*f.table));
    f.table.reset();
  }
  std::sort(tables.begin(), tables.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return tables;
}

std::string table_key(const std::string& image_path) {
  return image_path.substr(1) + ".exports.gz";
}

image::Library library_record(const ElfFile& file) {
  const elf::Binary& b = file.binary;
  image::Library l;
  l.path = file.image_path;
  l.names = file.names;
  std::sort(l.names.begin(), l.names.end());
  l.soname = b.soname.value_or("");
  l.machine = elf::machine_name(b.machine, b.elf_class, b.endian, b.e_flags);
  l.elf_class = b.elf_class == elf::Class::Elf64 ? 64 : 32;
  l.needed = b.needed;
  l.versions = version_names(b);
  dynamic_facts(b, l);
  l.origin = image::Origin::Probed;
  if (file.table) l.exports = table_key(file.image_path);
  return l;
}

image::DistLibrary dist_library_record(const ElfFile& file, const std::string& relative_path) {
  image::DistLibrary l = dist_library_of(file.binary, relative_path);
  if (file.table) l.exports = table_key(file.image_path);
  return l;
}

image::DistLibrary dist_library_of(const elf::Binary& b, const std::string& relative_path) {
  image::DistLibrary l;
  l.path = relative_path;
  l.soname = b.soname.value_or("");
  l.machine = elf::machine_name(b.machine, b.elf_class, b.endian, b.e_flags);
  l.elf_class = b.elf_class == elf::Class::Elf64 ? 64 : 32;
  l.needed = b.needed;
  l.versions = version_names(b);
  dynamic_facts(b, l);
  return l;
}

}  // namespace wheelcheck::probe
