// What binutils' readelf says about a file, parsed for comparison with wheelcheck's readers.
#pragma once

#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support.hpp"
#include "wheelcheck/elf.hpp"

namespace wheelcheck::test {

struct ReadelfView {
  std::vector<std::string> needed;
  std::string soname;
  std::vector<std::string> rpath, runpath;
  std::vector<std::pair<std::string, std::vector<std::string>>> version_needs;  // file -> versions
  std::vector<std::string> version_definitions;                                 // names, in order
  std::vector<std::string> dynsyms;      // "name", "name@VER" or "name@@VER", index 1..n
  std::string isa_needed;                // "x86-64-v3" or empty
  std::optional<std::string> gnu_stack;  // GNU_STACK's Flg column without blanks ("RW", "RWE"); none without one
};

inline std::vector<std::string> split_colon(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ':')) out.push_back(part);
  if (!s.empty() && s.back() == ':') out.push_back("");
  return out;
}

inline ReadelfView readelf_view(const std::string& path) {
  ReadelfView v;
  const auto d = run("readelf -dW " + shell_quote(path));
  const std::regex dyn(R"(\((NEEDED|SONAME|RPATH|RUNPATH)\)\s+\S+(?: \S+)*?: \[(.*)\]$)");
  std::stringstream ds(d.out);
  for (std::string line; std::getline(ds, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, dyn)) continue;
    if (m[1] == "NEEDED")
      v.needed.push_back(m[2]);
    else if (m[1] == "SONAME")
      v.soname = m[2];
    else if (m[1] == "RPATH")
      for (auto& p : split_colon(m[2])) v.rpath.push_back(p);
    else
      for (auto& p : split_colon(m[2])) v.runpath.push_back(p);
  }
  const auto ver = run("readelf -VW " + shell_quote(path));
  const std::regex file(R"(^\s+0x?[0-9a-f]+: Version: \d+\s+File: (\S+)\s+Cnt: \d+)");
  const std::regex name(R"(^\s+0x[0-9a-f]+:\s+Name: (\S+)\s+Flags:)");
  const std::regex def(R"(^\s+0x?[0-9a-f]+: Rev: \d+\s+Flags: .*Index: \d+\s+Cnt: \d+\s+Name: (\S+))");
  std::stringstream vs(ver.out);
  for (std::string line; std::getline(vs, line);) {
    std::smatch m;
    if (std::regex_search(line, m, file))
      v.version_needs.push_back({m[1], {}});
    else if (std::regex_search(line, m, name) && !v.version_needs.empty())
      v.version_needs.back().second.push_back(m[1]);
    else if (std::regex_search(line, m, def))
      v.version_definitions.push_back(m[1]);
  }
  const auto syms = run("readelf --dyn-syms -W " + shell_quote(path));
  const std::regex sym(R"(^\s+(\d+): [0-9a-f]+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s?(.*)$)");
  std::stringstream ss(syms.out);
  const std::regex localentry(R"(\[<[^>]*>: \d+\]\s*)");                // ppc64le's "[<localentry>: 8]" column
  const std::regex os_specific(R"(<(?:OS|processor) specific>: \d+)");  // STB_GNU_UNIQUE and friends
  for (std::string line; std::getline(ss, line);) {
    line = std::regex_replace(line, localentry, "");
    line = std::regex_replace(line, os_specific, "SPECIFIC");
    std::smatch m;
    if (!std::regex_search(line, m, sym) || m[1] == "0") continue;
    std::string n = m[2];
    const auto paren = n.find(" (");
    if (paren != std::string::npos) n = n.substr(0, paren);
    v.dynsyms.push_back(n);
  }
  const auto notes = run("readelf -nW " + shell_quote(path));
  const std::regex isa(R"(x86 ISA needed: (?:[\w-]+, )*([\w-]+))");
  std::smatch m;
  if (std::regex_search(notes.out, m, isa)) v.isa_needed = m[1];
  // `readelf -lW`: "  GNU_STACK  0x000000 0x0000000000000000 0x0000000000000000 0x000000 0x000000 RWE 0x10"
  // (an alignment of 0 is written "0"); the last one, as the loader takes it.
  const auto phdrs = run("readelf -lW " + shell_quote(path));
  const std::regex stack(R"(^\s+GNU_STACK\s+(?:0x[0-9a-f]+\s+){5}([RWE ]{3}) (?:0x[0-9a-f]+|\d+)$)");
  std::stringstream ps(phdrs.out);
  for (std::string line; std::getline(ps, line);) {
    std::smatch sm;
    if (!std::regex_search(line, sm, stack)) continue;
    std::string flags = sm[1];
    std::erase(flags, ' ');
    v.gnu_stack = flags;
  }
  return v;
}

// The dynamic symbols as readelf prints their names: name@VERSION, name@@VERSION for a defined default.
// readelf prints a section symbol by its section's name and a version-definition symbol (name equal to
// its version) plainly; those entries are compared as "<section>" and the plain name.
inline std::vector<std::string> versioned_names(const elf::Binary& b) {
  std::vector<std::string> out;
  for (const auto& s : b.symbols) {
    if (s.type == elf::SymbolType::Section)
      out.push_back("<section>");
    else if (s.version.empty() || s.name == s.version)
      out.push_back(s.name);
    else
      out.push_back(s.name + (s.defined && !s.version_hidden ? "@@" : "@") + s.version);
  }
  return out;
}

inline void expect_agrees_with_readelf(const elf::Binary& b, const std::string& path) {
  const auto r = readelf_view(path);
  EXPECT_EQ(b.needed, r.needed) << path;
  EXPECT_EQ(b.soname.value_or(""), r.soname) << path;
  EXPECT_EQ(b.rpath, r.rpath) << path;
  EXPECT_EQ(b.runpath, r.runpath) << path;
  std::vector<std::pair<std::string, std::vector<std::string>>> needs;
  for (const auto& n : b.version_needs) {
    needs.push_back({n.file, {}});
    for (const auto& a : n.versions) needs.back().second.push_back(a.name);
  }
  EXPECT_EQ(needs, r.version_needs) << path;
  std::vector<std::string> defs;
  for (const auto& d : b.version_definitions) defs.push_back(d.name);
  EXPECT_EQ(defs, r.version_definitions) << path;
  auto theirs = r.dynsyms;
  const auto ours = versioned_names(b);
  for (std::size_t i = 0; i < ours.size() && i < theirs.size(); ++i) {
    if (ours[i] == "<section>") theirs[i] = "<section>";
  }
  EXPECT_EQ(ours, theirs) << path;
  if (!r.isa_needed.empty()) {
    ASSERT_TRUE(b.x86_isa_level) << path;
    const std::string expected =
        *b.x86_isa_level == 1 ? "x86-64-baseline" : "x86-64-v" + std::to_string(*b.x86_isa_level);
    EXPECT_EQ(expected, r.isa_needed) << path;
  }
  std::optional<std::string> ours_stack;
  if (b.gnu_stack) {
    ours_stack = std::string((*b.gnu_stack & 4U) != 0 ? "R" : "") + ((*b.gnu_stack & 2U) != 0 ? "W" : "") +
                 ((*b.gnu_stack & 1U) != 0 ? "E" : "");
  }
  EXPECT_EQ(ours_stack, r.gnu_stack) << path;
}

}  // namespace wheelcheck::test
