// Why a needed symbol has no definition: classify_missing_symbol(). The caller (the binder) has already
// found that no table of the load scope binds (name, version); this says what the scope has instead.
//
// The decisions, in order:
//  1. version-too-new: a table exports the exact name, only not at the needed version (memcpy@GLIBC_2.38
//     against memcpy@@GLIBC_2.14), or only at non-default versions for an unversioned need. The candidates
//     are what exists, as nm writes it (name@@V, name@V); the explanation says whether the table defines
//     the needed version node at all (an older library) or defines it without this name.
//  2. For a C++ name (_Z...), the exports with the same qualified name (scopes, name and template
//     arguments: everything before the top-level parameter list of the demangled name, see
//     cxx::split_demangled in inspector/cxx/names.cpp), compared after cxx::normalize_cxx11_abi on both
//     sides:
//       cxx-abi-mismatch  a candidate equal to the needed name once the dual ABI is normalized away, and
//                         there is evidence that the two sides were built with different ABIs: an old-ABI
//                         type (std::string, std::list without __cxx11) on the side that has fewer C++11
//                         ABI markers, or, when they differ only by an [abi:cxx11] tag, a library that
//                         exports nothing of the C++11 ABI at all;
//       signature-changed any other candidate: other parameters, other qualifiers, another return type
//                         (a template function's, or an [abi:cxx11] tag lost in a library that does use
//                         the C++11 ABI elsewhere: the return type no longer involves std::string).
//     A candidate whose demangled name is exactly the needed one (the complete-object destructor D1
//     needed, only the base-object D2 exported) changes nothing but the explanation of "absent".
//  3. absent: nothing of the kind; the explanation names what no library exports.
//
// Finding the candidates fast. libtorch_cpu exports some 76,000 names; demangling them all for each
// missing symbol would take a tenth of a second each time. Every symbol with the same qualified name
// shares a mangled prefix, though (the scopes and the head of the own name; only the cv- and
// ref-qualifiers before them vary): cxx::mangled_search_prefixes (inspector/cxx/mangled.cpp) gives one
// prefix per combination and Table::with_prefix finds each range by binary search; only those few exports
// are demangled and compared exactly. Where no prefix is reliable (a local name _ZZ..., or scopes the two
// ABIs mangle differently: Ss, std::__cxx11, an [abi:cxx11] tag on a scope), a per-table index from
// normalized qualified name to exports is built once, lazily, and cached by table address (with the
// table's storage address and size to notice a different table at a reused address) under a mutex;
// classify_missing_symbol is thread-safe.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wheelcheck/cxx_names.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

namespace {

constexpr std::size_t k_npos = std::string_view::npos;

// ---------------------------------------------------------------------------------------------------
// Per-table facts, built lazily and cached.

struct TableFacts {
  const exports::Export* data = nullptr;
  std::size_t size = 0;
  std::string library;

  std::once_flag cxx11_once;
  bool exports_cxx11 = false;  // some bindable export is of the C++11 ABI (an [abi:cxx11] tag, __cxx11)

  std::once_flag index_once;
  std::unordered_map<std::string, std::vector<std::uint32_t>> by_qualified_name;  // normalized
};

std::shared_ptr<TableFacts> facts_for(const exports::Table& table) {
  static std::mutex mutex;
  static std::unordered_map<const exports::Table*, std::shared_ptr<TableFacts>> cache;
  const auto symbols = table.symbols();
  std::lock_guard lock(mutex);
  if (const auto it = cache.find(&table); it != cache.end()) {
    const auto& f = *it->second;
    if (f.data == symbols.data() && f.size == symbols.size() && f.library == table.library) return it->second;
  }
  if (cache.size() >= 64) cache.clear();  // entries in use live on in their callers' shared_ptr
  auto facts = std::make_shared<TableFacts>();
  facts->data = symbols.data();
  facts->size = symbols.size();
  facts->library = table.library;
  cache[&table] = facts;
  return facts;
}

bool table_exports_cxx11(const exports::Table& table, TableFacts& facts) {
  std::call_once(facts.cxx11_once, [&] {
    for (const auto& e : table.symbols()) {
      if (e.bindable() && e.name.starts_with("_Z") && e.name.find("cxx11") != k_npos) {
        facts.exports_cxx11 = true;
        return;
      }
    }
  });
  return facts.exports_cxx11;
}

const std::vector<std::uint32_t>* index_lookup(const exports::Table& table, TableFacts& facts,
                                               const std::string& normalized_qualified_name) {
  std::call_once(facts.index_once, [&] {
    const auto symbols = table.symbols();
    for (std::size_t k = 0; k < symbols.size(); ++k) {
      const auto& e = symbols[k];
      if (!e.bindable() || !e.name.starts_with("_Z") || cxx::is_special_name(e.name)) continue;
      const auto d = cxx::demangle(e.name);
      if (!d) continue;
      facts.by_qualified_name[cxx::normalize_cxx11_abi(cxx::split_demangled(*d).qualified_name)].push_back(
          static_cast<std::uint32_t>(k));
    }
  });
  const auto it = facts.by_qualified_name.find(normalized_qualified_name);
  return it == facts.by_qualified_name.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------------------
// Classification.

std::string versioned(const exports::Export& e) {
  std::string s(e.name);
  if (!e.version.empty()) s += (e.hidden ? "@" : "@@") + std::string(e.version);
  return s;
}

std::optional<Classification> version_too_new(std::string_view mangled, std::string_view version,
                                              const std::vector<const exports::Table*>& tables,
                                              const std::string& shown) {
  for (const auto* table : tables) {
    if (table == nullptr) continue;
    std::vector<std::string> candidates, versions;
    for (const auto& e : table->find(mangled)) {
      if (!e.bindable()) continue;
      candidates.push_back(versioned(e));
      versions.push_back(e.version.empty() ? "no version" : std::string(e.version) + (e.hidden ? "" : " (default)"));
    }
    if (candidates.empty()) continue;
    Classification c;
    c.classification = "version-too-new";
    c.provider = table->library;
    c.candidates = std::move(candidates);
    const std::string lib = table->library;
    if (version.empty()) {
      c.explanation = shown + " is needed without a version, and " + lib +
                      " exports it only at non-default versions (" + join(c.candidates, ", ") +
                      "): an unversioned reference binds only to an unversioned or default definition";
    } else {
      c.explanation =
          shown + "@" + std::string(version) + " is not exported by " + lib + ", which has it only " +
          (versions == std::vector<std::string>{"no version"} ? "unversioned" : "at " + join(versions, ", ")) + "; ";
      c.explanation += table->defines_version(version)
                           ? lib + " defines the version " + std::string(version) + ", but not " + shown + " at it"
                           : lib + " does not define the version " + std::string(version) +
                                 " at all (an older release than the one the wheel was built against)";
    }
    return c;
  }
  return std::nullopt;
}

enum class Kind {
  Abi,        // the same name across the dual ABI, the sides built with different ABIs
  TagLost,    // only an [abi:cxx11] tag differs, and the library does use the C++11 ABI elsewhere
  TagGained,  // only an [abi:cxx11] tag differs, on the library's side
  Signature,  // other parameters, qualifiers or return type
  Variant,    // demangles exactly alike: another constructor or destructor variant
};

struct Candidate {
  const exports::Table* table = nullptr;
  std::string mangled;
  std::string demangled;
  cxx::DemangledParts parts;
  Kind kind = Kind::Signature;
};

Kind kind_of(const std::string& needed, const std::string& candidate, const exports::Table& table, TableFacts& facts) {
  if (candidate == needed) return Kind::Variant;
  if (cxx::normalize_cxx11_abi(candidate) != cxx::normalize_cxx11_abi(needed)) return Kind::Signature;
  const auto need_markers = cxx::cxx11_abi_markers(needed);
  const auto cand_markers = cxx::cxx11_abi_markers(candidate);
  if (need_markers == cand_markers) return Kind::Abi;
  const bool library_old = cand_markers < need_markers;
  if (cxx::has_old_abi_type(library_old ? candidate : needed)) return Kind::Abi;
  // Only [abi:cxx11] tags differ: the tag follows the return type, which the name does not show.
  if (library_old) return table_exports_cxx11(table, facts) ? Kind::TagLost : Kind::Abi;
  return Kind::TagGained;
}

std::string describe_parameters(const std::string& p) {
  return p.empty() ? "a variable" : p;
}

// Parameters without the qualifiers after them: "(int) const &" -> "(int)".
std::string_view bare_parameters(std::string_view p) {
  const auto close = p.rfind(')');
  return close == k_npos ? p : p.substr(0, close + 1);
}

std::string abi_explanation(const std::string& needed, const Candidate& c) {
  const bool wheel_new = cxx::cxx11_abi_markers(needed) > cxx::cxx11_abi_markers(c.demangled);
  std::string types = cxx::cxx11_abi_types(wheel_new ? needed : c.demangled);
  if (types.empty()) types = "std::string";
  const auto& lib = c.table->library;
  std::string s = needed + " differs from what " + lib + " exports only by the libstdc++ dual ABI: ";
  if (wheel_new) {
    s += "the wheel was built with _GLIBCXX_USE_CXX11_ABI=1 (C++11-ABI " + types + "); " + lib +
         " was built with _GLIBCXX_USE_CXX11_ABI=0 and exports the old-ABI signature " + c.demangled;
  } else {
    s += "the wheel was built with _GLIBCXX_USE_CXX11_ABI=0 (old " + types + "); " + lib +
         " exports the C++11-ABI signature " + c.demangled;
  }
  if (c.kind == Kind::TagGained) {
    s += " (they differ only by an [abi:cxx11] tag, which follows the return type: unless that return type "
         "changed to one involving std::string)";
  }
  return s;
}

std::string signature_explanation(const std::string& needed, const cxx::DemangledParts& need,
                                  const std::vector<const Candidate*>& cands) {
  const auto& first = *cands.front();
  const auto lost =
      std::find_if(cands.begin(), cands.end(), [](const Candidate* c) { return c->kind == Kind::TagLost; });
  if (lost != cands.end()) {
    const auto& lib = (*lost)->table->library;
    return cxx::normalize_cxx11_abi(need.qualified_name) + " is exported by " + lib + " as " + (*lost)->demangled +
           ", without the [abi:cxx11] tag of the wheel's " + needed + ", although " + lib +
           " uses the C++11 ABI elsewhere: its return type changed (the wheel expects one involving std::string "
           "or std::list)";
  }
  bool all_params = true, all_quals = true, all_return = true;
  std::vector<std::string> alts;
  for (const auto* c : cands) {
    const bool same_bare = bare_parameters(c->parts.parameters) == bare_parameters(need.parameters);
    const bool same_params = c->parts.parameters == need.parameters;
    all_params = all_params && !same_bare;
    all_quals = all_quals && same_bare && !same_params;
    all_return = all_return && same_params && c->parts.return_type != need.return_type;
  }
  std::string what;
  if (all_return) {
    what = "another return type: ";
    for (const auto* c : cands) alts.push_back(c->parts.return_type.empty() ? "none" : c->parts.return_type);
    what += join(alts, " or ") + " instead of " + (need.return_type.empty() ? "none" : need.return_type);
  } else {
    what = all_params ? "other parameters: " : all_quals ? "other qualifiers: " : "another signature: ";
    for (const auto* c : cands) {
      alts.push_back(all_params || all_quals ? describe_parameters(c->parts.parameters) : c->demangled);
    }
    what +=
        join(alts, " or ") + " instead of " + (all_params || all_quals ? describe_parameters(need.parameters) : needed);
  }
  return need.qualified_name + " is exported with " + what + ", in " + first.table->library;
}

}  // namespace

Classification classify_missing_symbol(std::string_view mangled, std::string_view version,
                                       const std::vector<const exports::Table*>& tables) {
  const auto demangled = cxx::demangle(mangled);
  const std::string shown = demangled ? *demangled : std::string(mangled);

  if (auto c = version_too_new(mangled, version, tables, shown)) {
    c->demangled = demangled.value_or("");
    return *c;
  }

  Classification out;
  out.demangled = demangled.value_or("");
  std::vector<Candidate> found;
  std::vector<std::string> unbindable;  // defined, but where the loader never binds (local symbols)
  for (const auto* table : tables) {
    if (table == nullptr) continue;
    for (const auto& e : table->find(mangled)) {
      if (!e.bindable()) unbindable.push_back(table->library);
    }
  }

  if (demangled && !cxx::is_special_name(mangled)) {
    const auto need = cxx::split_demangled(*demangled);
    const auto need_key = cxx::normalize_cxx11_abi(need.qualified_name);
    const auto prefixes = cxx::mangled_search_prefixes(mangled);
    for (const auto* table : tables) {
      if (table == nullptr) continue;
      auto facts = facts_for(*table);
      const auto symbols = table->symbols();
      auto consider = [&](const exports::Export& e) {
        if (!e.bindable() || e.name == mangled) return;
        const std::string name(e.name);
        for (const auto& f : found) {
          if (f.table == table && f.mangled == name) return;
        }
        auto d = cxx::demangle(e.name);
        if (!d) return;
        auto parts = cxx::split_demangled(*d);
        if (cxx::normalize_cxx11_abi(parts.qualified_name) != need_key) return;
        Candidate c;
        c.table = table;
        c.mangled = name;
        c.kind = kind_of(*demangled, *d, *table, *facts);
        c.demangled = std::move(*d);
        c.parts = std::move(parts);
        found.push_back(std::move(c));
      };
      if (!prefixes.empty()) {
        for (const auto& prefix : prefixes) {
          for (const auto& e : table->with_prefix(prefix)) consider(e);
        }
      } else if (const auto* hits = index_lookup(*table, *facts, need_key)) {
        for (const auto k : *hits) consider(symbols[k]);
      }
    }

    auto first_of = [&found](auto pred) -> std::vector<const Candidate*> {
      std::vector<const Candidate*> out_c;
      for (const auto& c : found) {
        if (!pred(c.kind)) continue;
        const bool seen =
            std::any_of(out_c.begin(), out_c.end(), [&c](const Candidate* o) { return o->demangled == c.demangled; });
        if (!seen) out_c.push_back(&c);
      }
      return out_c;
    };
    const auto abi = first_of([](Kind k) { return k == Kind::Abi || k == Kind::TagGained; });
    if (!abi.empty()) {
      out.classification = "cxx-abi-mismatch";
      out.provider = abi.front()->table->library;
      for (const auto* c : abi) out.candidates.push_back(c->demangled);
      out.explanation = abi_explanation(*demangled, *abi.front());
      return out;
    }
    const auto sig = first_of([](Kind k) { return k == Kind::TagLost || k == Kind::Signature; });
    if (!sig.empty()) {
      out.classification = "signature-changed";
      out.provider = sig.front()->table->library;
      for (const auto* c : sig) out.candidates.push_back(c->demangled);
      out.explanation = signature_explanation(*demangled, need, sig);
      return out;
    }
  }

  out.classification = "absent";
  out.explanation = "no library in the load scope exports " + shown;
  std::vector<std::string> variants;
  for (const auto& c : found) {
    if (c.kind == Kind::Variant) variants.push_back(c.mangled + " in " + c.table->library);
  }
  if (!variants.empty()) {
    out.explanation += "; only other constructor or destructor variants of it are exported (" + join(variants, ", ") +
                       "), not " + std::string(mangled);
  }
  if (!unbindable.empty()) {
    out.explanation += "; " + join(unbindable, ", ") + " defines it as a local symbol, which the loader never binds";
  }
  return out;
}

}  // namespace wheelcheck::verdict
