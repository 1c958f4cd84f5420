// C++ names, mangled and demangled (the Itanium C++ ABI that GCC and Clang use on Linux): the demangler
// (inspector/cxx/demangle.cpp), the parts of a demangled name and the libstdc++ dual ABI in it
// (inspector/cxx/names.cpp), and the mangled prefix every overload of a name shares (inspector/cxx/mangled.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelcheck::cxx {

// `_ZN3c1013MessageLoggerC1EPKcii` -> `c10::MessageLogger::MessageLogger(char const*, int, int)`
// (abi::__cxa_demangle), or nullopt when `mangled` is not a mangled C++ name.
std::optional<std::string> demangle(std::string_view mangled);
// The demangled name when there is one, else `name` itself.
std::string demangle_or_self(std::string_view name);

// ---------------------------------------------------------------------------------------------------
// Demangled names (inspector/cxx/names.cpp).

// The parts of a demangled C++ name: "bool ns::operator< <int>(ns::X const&, int) const" has the
// return_type "bool" (only template functions have one), the qualified_name "ns::operator< <int>" (scopes,
// name and template arguments, everything before the top-level parameter list) and the parameters
// "(ns::X const&, int) const" (with the qualifiers after them). A name that is no function ("ns::counter",
// "vtable for ns::X") is all qualified_name, with empty parameters. " [clone .cold]" suffixes are dropped.
struct DemangledParts {
  std::string return_type;
  std::string qualified_name;
  std::string parameters;
};
DemangledParts split_demangled(std::string_view demangled);
inline std::string qualified_name(std::string_view demangled) {
  return split_demangled(demangled).qualified_name;
}
// The first scope of a symbol's qualified name, with its "::", for people: "at::" for
// `_ZNK2at10TensorBase8data_ptrIlEEPT_v` ("long* at::TensorBase::data_ptr<long>() const": the return type of
// a template function is not a scope), "c10::" for "vtable for c10::Error" (the special name's subject);
// "" for a name in no scope (`foo`, "at::Tensor make<int>()"), an operator at the top level, or a name that
// is not C++. `name` may be mangled or demangled.
std::string leading_scope(std::string_view name);

// The libstdc++ dual ABI made invisible, to compare a name across it: "std::__cxx11::" becomes "std::",
// "[abi:cxx11]" tags go, and std::basic_string<char, ...> is written std::string (as the old ABI's Ss).
std::string normalize_cxx11_abi(std::string_view demangled);
// How many marks of the C++11 ABI a demangled name carries ("__cxx11" and "[abi:cxx11]").
std::size_t cxx11_abi_markers(std::string_view demangled);
// Whether the name has a type of the old ABI (std::string, std::list, ... without __cxx11).
bool has_old_abi_type(std::string_view demangled);
// The types the C++11 side spells with __cxx11, for people: "std::string, std::list" ("std::string" for
// a name with only an [abi:cxx11] tag; "" for none).
std::string cxx11_abi_types(std::string_view demangled);

// ---------------------------------------------------------------------------------------------------
// Mangled names (inspector/cxx/mangled.cpp).

// Whether a mangled name (_Z...) is a special name: _ZT... (vtables, typeinfo, thunks, TLS wrappers) or
// _ZG... (guard variables, reference temporaries, clones).
bool is_special_name(std::string_view mangled);

// The mangled prefixes that every export with the same qualified name as `mangled` starts with, one per
// cv- and ref-qualifier combination of a nested name (_ZN3ns1XC, _ZNK3ns1XC, ...): the mangled scopes and
// the head of the function's own name (a source name, an operator code, C for constructors, D for
// destructors), without its ABI tags and template arguments. Empty when none can be derived reliably: a
// local name, a construct the parser does not follow, or scopes the dual ABI mangles differently
// (std::__cxx11, Ss, an [abi:cxx11] tag); classify_missing_symbol then uses a per-table index.
std::vector<std::string> mangled_search_prefixes(std::string_view mangled);

}  // namespace wheelcheck::cxx
