// `wheelcheck exports FILE`: the export table of a library or of a stored table, as nm would list it.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "wheelcheck/cxx_names.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cli {

namespace {

struct ExportsArgs {
  std::string file;
  bool demangle = false;
  std::string grep;
  bool count = false;
  bool json = false;
  std::string output;
};

int run_exports(const ExportsArgs& a) {
  if (a.json && a.count) throw usage_error("--json and --count conflict (jq '.symbols | length' counts the JSON)");
  if (!a.output.empty() && (a.json || a.count || a.demangle || !a.grep.empty())) {
    throw usage_error("-o writes the whole export table: it takes no --json, --count, --demangle or --grep");
  }
  exports::Table table;
  if (a.file.ends_with(".gz")) {
    table = exports::load_table(a.file);
  } else {
    const auto slash = a.file.find_last_of('/');
    elf::Binary binary;
    try {
      binary = elf::read_elf_file(a.file);
    } catch (const Error& e) {
      if (std::string(e.what()).find(a.file) != std::string::npos) throw;
      throw Error(e.kind(), a.file + ": " + e.what());
    }
    table = exports::Table::from_binary(binary, slash == std::string::npos ? a.file : a.file.substr(slash + 1), a.file);
  }
  if (!a.output.empty()) {
    exports::write_table(table, a.output);
    std::fprintf(stderr, "exports: wrote %s (%zu symbols)\n", a.output.c_str(), table.symbols().size());
    return k_exit_ok;
  }
  std::string out;
  std::size_t n = 0;
  JsonWriter w(out);
  if (a.json) {
    w.begin_object().field("library", table.library).field("soname", table.soname).field("machine", table.machine);
    w.key("version_definitions").begin_array();
    for (const auto& v : table.version_definitions) w.value(v);
    w.end_array().key("symbols").begin_array();
  }
  for (const auto& e : table.symbols()) {
    const std::string name(e.name);
    std::string pretty = a.demangle || !a.grep.empty() ? cxx::demangle_or_self(name) : name;
    if (!a.grep.empty() && name.find(a.grep) == std::string::npos && pretty.find(a.grep) == std::string::npos) continue;
    ++n;
    if (a.count) continue;
    const std::string version = e.version.empty() ? "" : (e.hidden ? "@" : "@@") + std::string(e.version);
    if (a.json) {
      w.begin_object().field("name", name).field("version", std::string(e.version)).field("hidden", e.hidden);
      if (a.demangle) w.field("demangled", pretty);
      w.field("type", std::string(1, e.type)).field("binding", std::string(1, e.binding)).end_object();
    } else {
      out += name + version;
      if (a.demangle && pretty != name) out += "  " + pretty;
      out += '\n';
    }
    if (out.size() > (1U << 20) && !a.json) {
      print_out(out);
      out.clear();
    }
  }
  if (a.json) {
    w.end_array().end_object();
    out += '\n';
  }
  if (a.count) out = fmt::format("{}\n", n);
  print_out(out);
  return k_exit_ok;
}

}  // namespace

Command add_exports(CLI::App& app) {
  auto a = std::make_shared<ExportsArgs>();
  auto* c = app.add_subcommand("exports", "List what a library exports, from the library or from a db export table");
  c->add_option("file", a->file, "A shared library, or an export table (*.exports.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  c->add_flag("-C,--demangle", a->demangle, "Show C++ names demangled beside the symbols");
  c->add_option("--grep", a->grep, "Only symbols whose mangled or demangled name contains this text");
  c->add_flag("--count", a->count, "Print only how many symbols match");
  c->add_flag("--json", a->json, "JSON for machines (schema: docs/exports.schema.json)");
  c->add_option("-o,--output", a->output, "Write the library's export table here (.exports.gz) instead of listing it");
  c->footer(
      "Lines read as `nm -D --defined-only` prints them: name@@VERSION for a default version, name@VERSION\n"
      "for a hidden one. Format of the tables: docs/exports.md.\n\n"
      "Examples:\n"
      "  wheelcheck exports -C --grep MessageLogger db/exports/torch2.14-debian/.../libc10.so.exports.gz\n"
      "  wheelcheck exports /usr/lib/x86_64-linux-gnu/libc.so.6 --count\n\n" +
      std::string(k_exit_codes));
  return {c, [a] { return run_exports(*a); }};
}

}  // namespace wheelcheck::cli
