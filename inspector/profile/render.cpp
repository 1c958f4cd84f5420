// Renderings of a profile: JSON for machines (docs/inspect.schema.json), text for people.
#include <fmt/format.h>

#include <initializer_list>
#include <map>
#include <utility>

#include "wheelcheck/cuda.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/variant.hpp"

namespace wheelcheck {

namespace {

void write_problems(JsonWriter& w, const std::vector<wheel::Problem>& problems) {
  w.begin_array();
  for (const auto& p : problems) {
    w.begin_object().field("kind", p.kind).field("path", p.path).field("detail", p.detail).end_object();
  }
  w.end_array();
}

void write_strings(JsonWriter& w, const std::vector<std::string>& v) {
  w.begin_array();
  for (const auto& s : v) w.value(s);
  w.end_array();
}

void write_optional(JsonWriter& w, std::string_view key, const std::optional<std::string>& v) {
  w.key(key);
  if (v)
    w.value(*v);
  else
    w.null();
}

// KEY: the text, or null when it is empty (no interpreter, no version; for a reason, nothing went unread).
void text_or_null(JsonWriter& w, const char* key, const std::string& text) {
  w.key(key);
  if (text.empty())
    w.null();
  else
    w.value(text);
}

void write_elf(JsonWriter& w, const elf::Binary& b) {
  w.begin_object();
  w.field("class", b.elf_class == elf::Class::Elf64 ? "ELF64" : "ELF32");
  w.field("endian", b.endian == elf::Endian::Little ? "little" : "big");
  w.field("machine", elf::machine_name(b.machine, b.elf_class, b.endian, b.e_flags));
  w.field("machine_description", elf::machine_description(b.machine));
  w.field("e_machine", static_cast<unsigned>(b.machine));
  w.field("type", elf::type_name(b.type));
  w.field("os_abi", elf::os_abi_name(b.os_abi));
  text_or_null(w, "interpreter", b.interpreter);
  write_optional(w, "soname", b.soname);
  w.key("needed");
  write_strings(w, b.needed);
  w.key("rpath");
  write_strings(w, b.rpath);
  w.key("runpath");
  write_strings(w, b.runpath);
  w.key("flags");
  write_strings(w, elf::dt_flags_names(b.flags));
  w.key("flags_1");
  write_strings(w, elf::dt_flags_1_names(b.flags_1));
  w.key("x86_isa_level");
  if (b.x86_isa_level)
    w.value(*b.x86_isa_level);
  else
    w.null();
  w.key("abi_tag");
  if (b.abi_tag) {
    w.begin_object();
    w.key("os").value(b.abi_tag->os_name());
    w.key("kernel").value(b.abi_tag->version());
    w.end_object();
  } else {
    w.null();
  }
  // PT_GNU_STACK: its flags as readelf writes them (null without one), and what the loader makes of it.
  w.key("gnu_stack").begin_object();
  w.key("flags");
  if (b.gnu_stack) {
    std::string rwe;
    for (const auto& [bit, letter] : {std::pair{4U, 'R'}, std::pair{2U, 'W'}, std::pair{1U, 'E'}})
      if ((*b.gnu_stack & bit) != 0) rwe += letter;
    w.value(rwe);
  } else {
    w.null();
  }
  w.key("executable").value(b.executable_stack());
  w.end_object();
  w.key("version_needs").begin_object();
  for (const auto& need : b.version_needs) {
    w.key(need.file).begin_array();
    for (const auto& v : need.versions) w.value(v.name);
    w.end_array();
  }
  w.end_object();
  w.key("version_definitions").begin_array();
  for (const auto& d : b.version_definitions) {
    w.begin_object().field("index", static_cast<unsigned>(d.index)).field("name", d.name).field("base", d.base());
    w.key("parents");
    write_strings(w, d.parents);
    w.end_object();
  }
  w.end_array();
  w.key("defined").begin_array();
  for (const auto& s : b.symbols) {
    if (!s.exported()) continue;
    w.begin_object().field("name", s.name);
    text_or_null(w, "version", s.version);
    if (s.version_hidden) w.field("hidden", true);
    w.field("type", ascii_lower(elf::symbol_type_name(s.type)));
    if (s.binding != elf::Binding::Global) w.field("binding", ascii_lower(elf::binding_name(s.binding)));
    w.end_object();
  }
  w.end_array();
  w.key("undefined").begin_array();
  for (const auto& s : b.symbols) {
    if (s.defined) continue;
    w.begin_object().field("name", s.name);
    text_or_null(w, "version", s.version);
    text_or_null(w, "library", s.version_file);
    w.field("weak", s.weak());
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// members[].cuda: what the member's fatbins hold (docs/inspect.schema.json).
void write_cuda(JsonWriter& w, const cuda::Fatbins& f) {
  w.begin_object();
  w.key("sass").begin_array();
  for (const auto& a : f.sass()) w.value(cuda::sm_name(a));
  w.end_array();
  w.key("ptx").begin_array();
  for (const auto& a : f.ptx()) w.value(cuda::compute_name(a));
  w.end_array();
  w.key("newest_ptx_isa");
  if (const auto isa = f.newest_ptx_isa())
    w.value(isa->text());
  else
    w.null();
  w.key("newest_cubin_format");
  if (f.newest_cubin)
    w.value(f.newest_cubin->text());
  else
    w.null();
  w.field("containers", f.containers).field("entries", f.entries).field("section_size", f.section_size);
  w.key("variants").begin_array();
  for (const auto& v : f.variants) {
    w.begin_object().field("kind", cuda::kind_name(v.kind));
    w.field("arch", v.kind == cuda::CodeKind::Ptx ? cuda::compute_name(v.arch) : cuda::sm_name(v.arch));
    w.field("compressed", v.compressed);
    w.key("ptx_isa");
    if (v.ptx_isa)
      w.value(v.ptx_isa->text());
    else
      w.null();
    w.field("entries", v.entries).end_object();
  }
  w.end_array();
  text_or_null(w, "unread", f.unread);
  w.key("loaded_by_the_library").begin_object();
  w.field("containers", f.embedded_containers).field("entries", f.embedded_entries);
  w.key("sections").begin_array();
  for (const auto& s : f.embedded_sections) w.value(s);
  w.end_array();
  text_or_null(w, "unread", f.embedded_unread);
  w.end_object();
  w.end_object();
}

// "SASS sm_80 sm_90a, PTX compute_80 (PTX ISA 9.0); 2 containers, 3 entries (1 compressed)".
std::string cuda_line(const cuda::Fatbins& f) {
  if (!f.unread.empty()) return fmt::format(".nv_fatbin of {} not read: {}", format_size(f.section_size), f.unread);
  std::string sass, ptx;
  for (const auto& a : f.sass()) sass += " " + cuda::sm_name(a);
  for (const auto& a : f.ptx()) ptx += " " + cuda::compute_name(a);
  std::uint64_t compressed = 0;
  for (const auto& v : f.variants) compressed += v.compressed ? v.entries : 0;
  std::string out = "SASS" + (sass.empty() ? std::string(" none") : sass) + ", PTX" + (ptx.empty() ? " none" : ptx);
  if (const auto isa = f.newest_ptx_isa()) out += " (PTX ISA " + isa->text() + ")";
  auto counts = [](std::uint64_t containers, std::uint64_t entries) {
    return fmt::format("{} container{}, {} entr{}", containers, containers == 1 ? "" : "s", entries,
                       entries == 1 ? "y" : "ies");
  };
  if (f.section_size != 0) out += "; " + counts(f.containers, f.entries);
  if (f.embedded_containers != 0) {
    out += fmt::format("{}{} in {} (loaded by the library itself)", f.section_size != 0 ? " + " : "; ",
                       counts(f.embedded_containers, f.embedded_entries), join(f.embedded_sections, ", "));
  }
  if (compressed != 0) out += fmt::format(" ({} compressed)", compressed);
  if (!f.embedded_unread.empty()) out += "; other sections not looked through: " + f.embedded_unread;
  return out;
}

}  // namespace

namespace {

// A wheel variant's label and variant.json (null for a plain wheel).
void write_variant(JsonWriter& w, const WheelProfile& p) {
  w.key("variant");
  const auto d = variant::declared(p);
  if (!d) {
    w.null();
    return;
  }
  w.begin_object();
  write_optional(w, "label", d->label.empty() ? std::nullopt : std::optional<std::string>(d->label));
  write_optional(w, "schema", d->file ? std::optional<std::string>(d->file->schema) : std::nullopt);
  w.key("properties");
  if (const auto* props = d->properties()) {
    w.begin_object();
    for (const auto& [ns, features] : *props) {
      w.key(ns).begin_object();
      for (const auto& [feature, values] : features) {
        w.key(feature);
        write_strings(w, values);
      }
      w.end_object();
    }
    w.end_object();
  } else {
    w.null();
  }
  w.key("issues").begin_array();
  for (const auto& i : d->issues) w.begin_object().field("error", i.error).field("text", i.text).end_object();
  w.end_array();
  w.end_object();
}

// The Python sources: what was read, and every load of a native file they make (imports are the check's).
void write_python(JsonWriter& w, const python::Sources& py) {
  w.key("python").begin_object().field("read", py.read).field("files", py.files).field("bytes", py.bytes);
  w.key("skipped");
  if (py.skipped.empty())
    w.null();
  else
    w.value(py.skipped);
  w.key("loads").begin_array();
  for (const auto& m : py.modules) {
    for (const auto& l : m.loads) {
      w.begin_object().field("file", m.file).field("module", m.name).field("line", static_cast<std::uint64_t>(l.line));
      w.field("call", l.call).field("target", python::target_name(l.target)).field("path", l.path);
      w.field("expression", l.expression).field("unresolved", l.unresolved).field("global", l.global);
      w.field("when", python::when_name(l.when)).field("condition", l.condition);
      w.key("caught");
      write_strings(w, l.caught);
      w.end_object();
    }
  }
  w.end_array();
  w.key("errors").begin_array();
  for (const auto& m : py.modules) {
    if (!m.error.empty()) w.begin_object().field("file", m.file).field("error", m.error).end_object();
  }
  w.end_array();
  w.end_object();
}

void write_json(JsonWriter& w, const WheelProfile& p) {
  w.begin_object();
  w.field("schema_version", p.schema_version);
  w.key("tool").begin_object().field("name", "wheelcheck").field("version", WHEELCHECK_VERSION).end_object();
  w.field("reader", p.reader);
  w.field("integrity", p.integrity);
  w.key("source");
  if (p.source.empty())
    w.null();
  else
    w.value(p.source);
  w.key("wheel").begin_object();
  w.field("filename", p.filename.filename);
  w.field("name", p.metadata.name.empty() ? p.filename.name : p.metadata.name);
  w.field("version", p.metadata.version.empty() ? p.filename.version : p.metadata.version);
  write_optional(w, "build", p.filename.build);
  write_variant(w, p);
  w.key("tags").begin_array();
  for (const auto& t : p.filename.tags) {
    w.begin_object().field("python", t.python).field("abi", t.abi).field("platform", t.platform).end_object();
  }
  w.end_array();
  w.field("sha256", p.sha256);
  w.field("size", p.size);
  w.key("requires_dist");
  write_strings(w, p.metadata.requires_dist);
  write_optional(w, "requires_python", p.metadata.requires_python);
  w.key("metadata_issues").begin_array();
  for (const auto& i : p.metadata.issues) {
    w.begin_object()
        .field("kind", wheel::metadata_issue_name(i.kind))
        .field("field", i.field)
        .field("line", static_cast<std::uint64_t>(i.line))
        .field("count", static_cast<std::uint64_t>(i.count))
        .field("text", wheel::metadata_issue_text(i))
        .end_object();
  }
  w.end_array();
  w.field("wheel_version", p.wheel_file.wheel_version);
  w.key("root_is_purelib");
  if (p.wheel_file.root_is_purelib)
    w.value(*p.wheel_file.root_is_purelib);
  else
    w.null();
  w.key("wheel_tags");
  write_strings(w, p.wheel_file.tags);
  w.field("generator", p.wheel_file.generator);
  w.end_object();
  w.key("record").begin_object().field("verified", p.record_verified);
  w.key("problems");
  write_problems(w, p.record_problems);
  w.end_object();
  w.key("problems");
  write_problems(w, p.problems);
  w.field("member_count", p.member_count);
  w.key("members").begin_array();
  for (const auto& m : p.members) {
    w.begin_object().field("path", m.path).field("size", m.size);
    if (!m.error.empty()) w.field("error", m.error);
    w.key("elf");
    if (m.elf)
      write_elf(w, *m.elf);
    else
      w.null();
    if (m.elf && m.cuda) {
      w.key("cuda");
      write_cuda(w, *m.cuda);
    }
    w.end_object();
  }
  w.end_array();
  write_python(w, p.python);
  w.end_object();
}

}  // namespace

std::string profile_to_json(const WheelProfile& p) {
  std::string out;
  JsonWriter w(out);
  write_json(w, p);
  out.push_back('\n');
  return out;
}

void write_profile_json(const WheelProfile& p, std::FILE* f, std::string_view head) {
  std::string out;
  // With a head ({"consistent_with": ...}), its members come first in the same object.
  const std::size_t prefix = head.size() > 2 ? head.size() : 0;
  if (prefix != 0) out.append(head.substr(0, head.size() - 1)).push_back(',');
  bool first = true;
  auto sink = [f, &first, prefix](std::string& chunk) {
    if (first && prefix != 0 && chunk.size() > prefix && chunk[prefix] == '{') chunk.erase(prefix, 1);
    first = false;
    if (std::fwrite(chunk.data(), 1, chunk.size(), f) != chunk.size()) throw io_error("cannot write JSON output");
  };
  JsonWriter w(out, sink);
  write_json(w, p);
  out.push_back('\n');
  sink(out);
}

namespace {

// The loads of native files the Python sources make, one line each.
std::string python_text(const python::Sources& py, const Paint& paint) {
  if (!py.read) return py.files == 0 ? "" : "\n" + paint.yellow("Python sources not read") + ": " + py.skipped + "\n";
  std::string out;
  for (const auto& m : py.modules) {
    for (const auto& l : m.loads) {
      std::string when = l.when == python::When::Import        ? "at import"
                         : l.when == python::When::Conditional ? "at import if " + l.condition
                         : l.when == python::When::Called      ? "when called"
                                                               : "never at import";
      const std::string what =
          l.target == python::Load::Target::Unresolved ? "(not resolved: " + l.unresolved + ")" : l.path;
      out += fmt::format("  {}:{} {} {}{} {}\n", printable(m.file), l.line, l.call, printable(what),
                         l.global ? " RTLD_GLOBAL" : "", when);
    }
  }
  if (out.empty()) return "";
  return "\n" + paint.bold("Python loads") + fmt::format(" ({} .py files read)\n", py.files) + out;
}

}  // namespace

std::string profile_to_text(const WheelProfile& p, bool color) {
  const Paint paint{color};
  std::string out;
  out += paint.bold(p.filename.filename) + "\n";
  std::string tags;
  for (const auto& t : p.filename.tags) tags += (tags.empty() ? "" : " ") + t.python + "-" + t.abi + "-" + t.platform;
  out += fmt::format("  {} {}   tags {}\n", p.metadata.name.empty() ? p.filename.name : p.metadata.name,
                     p.metadata.version.empty() ? p.filename.version : p.metadata.version, tags);
  const bool headers = p.integrity == k_integrity_headers;
  out += fmt::format("  sha256 {}{}   {}   {} members, {} ELF\n", p.sha256.empty() ? "unknown" : p.sha256,
                     headers && !p.sha256.empty() ? " (from the index, not verified)" : "", format_size(p.size),
                     p.member_count, p.members.size());
  if (!p.source.empty()) out += "  from " + p.source + "\n";
  if (p.metadata.requires_python) out += "  Requires-Python: " + *p.metadata.requires_python + "\n";
  for (const auto& r : p.metadata.requires_dist) out += "  Requires-Dist: " + r + "\n";
  for (const auto& i : p.metadata.issues)
    out += "  " + paint.yellow("METADATA") + " " + wheel::metadata_issue_text(i) + " (wheelcheck lint)\n";
  if (const auto d = variant::declared(p)) {
    const auto* props = d->properties();
    out += fmt::format("  variant {}: {}{}\n", d->label.empty() ? std::string("(no label)") : paint.bold(d->label),
                       props ? variant::properties_text(*props) : std::string("properties unknown"),
                       d->file && !d->file->schema_version.empty() ? " (schema " + d->file->schema_version + ")" : "");
    for (const auto& i : d->issues)
      out += "    " + (i.error ? paint.red("variant") : paint.yellow("variant")) + " " + i.text + "\n";
  }
  if (headers) {
    out += "  integrity " + paint.yellow("headers-only") +
           ": only the ELF headers and tables were read; RECORD, CRC-32s and the sha256 are not verified "
           "(--verify full reads every byte)\n";
  } else if (p.record_verified) {
    out += "  RECORD " + paint.green("verified") + ": every file listed, sizes and hashes match\n";
  } else {
    out += "  RECORD " + paint.red("not verified") + fmt::format(": {} problem(s)\n", p.record_problems.size());
  }
  const std::size_t k_shown = 20;
  for (std::size_t i = 0; i < p.record_problems.size() && i < k_shown; ++i) {
    const auto& pr = p.record_problems[i];
    out += fmt::format("    {} {}: {}\n", paint.yellow(pr.kind), printable(pr.path), printable(pr.detail));
  }
  if (p.record_problems.size() > k_shown)
    out += fmt::format("    ... and {} more (--json lists all)\n", p.record_problems.size() - k_shown);
  for (const auto& pr : p.problems)
    out += fmt::format("  {} {}: {}\n", paint.red(pr.kind), printable(pr.path), printable(pr.detail));

  for (const auto& m : p.members) {
    out += "\n";
    if (!m.elf) {
      out += fmt::format("{}  {}\n  {}\n", paint.bold(printable(m.path)), format_size(m.size),
                         paint.red("unreadable ELF: " + m.error));
      continue;
    }
    const auto& b = *m.elf;
    std::string isa = b.x86_isa_level ? fmt::format(", needs x86-64-v{}", *b.x86_isa_level) : "";
    // The ABI tag binds only a file that carries its C library (the kernel rule, docs/verdict.md).
    if (b.abi_tag && b.statically_linked())
      isa += fmt::format(", static: needs {} {}", b.abi_tag->os_name(), b.abi_tag->version());
    if (b.executable_stack())
      isa += b.gnu_stack ? ", executable stack (PT_GNU_STACK RWE)" : ", executable stack (no PT_GNU_STACK)";
    out += fmt::format("{}  {} {} {}, {}{}\n", paint.bold(printable(m.path)),
                       b.elf_class == elf::Class::Elf64 ? "ELF64" : "ELF32",
                       elf::machine_name(b.machine, b.elf_class, b.endian, b.e_flags), elf::type_name(b.type),
                       format_size(m.size), isa);
    if (b.soname) out += "  soname    " + *b.soname + "\n";
    if (!b.interpreter.empty()) out += "  interp    " + b.interpreter + "\n";
    std::map<std::string, std::vector<std::string>> versions;
    for (const auto& n : b.version_needs) {
      for (const auto& v : n.versions) versions[n.file].push_back(v.name);
    }
    for (const auto& n : b.needed) {
      std::string v;
      if (auto it = versions.find(n); it != versions.end()) {
        for (const auto& x : it->second) v += (v.empty() ? "" : " ") + x;
      }
      out += fmt::format("  needs     {}{}\n", n, v.empty() ? "" : "  (" + v + ")");
    }
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ":") + x;
      return s;
    };
    if (!b.rpath.empty()) out += "  rpath     " + join(b.rpath) + "\n";
    if (!b.runpath.empty()) out += "  runpath   " + join(b.runpath) + "\n";
    std::size_t undef = 0, weak = 0, exported = 0;
    for (const auto& s : b.symbols) {
      if (!s.defined) {
        ++undef;
        if (s.weak()) ++weak;
      } else if (s.exported()) {
        ++exported;
      }
    }
    out += fmt::format("  symbols   {} undefined ({} weak), {} exported", undef, weak, exported);
    if (!b.version_definitions.empty()) out += fmt::format(", {} version definitions", b.version_definitions.size());
    out += "\n";
    if (m.cuda) out += "  cuda      " + cuda_line(*m.cuda) + "\n";
  }
  out += python_text(p.python, paint);
  return out;
}

}  // namespace wheelcheck
