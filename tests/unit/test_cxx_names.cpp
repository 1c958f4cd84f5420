// C++ names (include/wheelcheck/cxx_names.hpp): splitting demangled names (operators, conversion
// operators, qualifiers after the parameters, return types of template functions), normalizing the
// libstdc++ dual ABI and telling its two sides apart, special names, the mangled prefixes a search for
// the same qualified name uses, and the demangler itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wheelcheck/cxx_names.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_cxx_names {

using namespace wheelcheck;

TEST(CxxNames, SplitsDemangledNames) {
  struct Case {
    const char* demangled;
    const char* return_type;
    const char* qualified;
    const char* parameters;
  };
  const Case cases[] = {
      {"ns::f(int)", "", "ns::f", "(int)"},
      {"c10::MessageLogger::MessageLogger(char const*, int, int)", "", "c10::MessageLogger::MessageLogger",
       "(char const*, int, int)"},
      {"ns::X::~X()", "", "ns::X::~X", "()"},
      {"ns::X::get() const", "", "ns::X::get", "() const"},
      {"ns::X::take() const &&", "", "ns::X::take", "() const &&"},
      {"ns::X::operator()(int) &&", "", "ns::X::operator()", "(int) &&"},
      {"ns::X::operator<(ns::X const&) const", "", "ns::X::operator<", "(ns::X const&) const"},
      {"ns::X::operator<<(int)", "", "ns::X::operator<<", "(int)"},
      {"ns::X::operator>>=(int)", "", "ns::X::operator>>=", "(int)"},
      {"ns::X::operator->() const", "", "ns::X::operator->", "() const"},
      {"ns::X::operator[](unsigned long)", "", "ns::X::operator[]", "(unsigned long)"},
      {"ns::X::operator<=>(ns::X const&) const", "", "ns::X::operator<=>", "(ns::X const&) const"},
      {"bool ns::operator< <int>(std::list<int, std::allocator<int> > const&, int)", "bool", "ns::operator< <int>",
       "(std::list<int, std::allocator<int> > const&, int)"},
      {"std::ostream& ns::operator<< <char>(std::ostream&, ns::Y<char> const&)", "std::ostream&",
       "ns::operator<< <char>", "(std::ostream&, ns::Y<char> const&)"},
      {"ns::X::operator std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >() const", "",
       "ns::X::operator std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >", "() const"},
      {"ns::X::operator unsigned int() const", "", "ns::X::operator unsigned int", "() const"},
      {"c10::complex<double> const* at::TensorBase::const_data_ptr<c10::complex<double>, 0>() const",
       "c10::complex<double> const*", "at::TensorBase::const_data_ptr<c10::complex<double>, 0>", "() const"},
      {"void ns::apply<void (*)(int)>(void (*)(int))", "void", "ns::apply<void (*)(int)>", "(void (*)(int))"},
      {"int (*ns::pick<int>(long))(char)", "int (*)(char)", "ns::pick<int>", "(long)"},
      {"decltype ({parm#1}+{parm#2}) ns::add<int, int>(int, int)", "decltype ({parm#1}+{parm#2})", "ns::add<int, int>",
       "(int, int)"},
      {"ns::h[abi:cxx11](int)", "", "ns::h[abi:cxx11]", "(int)"},
      {"(anonymous namespace)::helper(int)", "", "(anonymous namespace)::helper", "(int)"},
      {"ns::run()::{lambda(int)#1}::operator()(int) const", "", "ns::run()::{lambda(int)#1}::operator()",
       "(int) const"},
      {"ns::f(int) [clone .cold]", "", "ns::f", "(int)"},
      {"operator new(unsigned long)", "", "operator new", "(unsigned long)"},
      {"operator delete[](void*, unsigned long)", "", "operator delete[]", "(void*, unsigned long)"},
      {"ns::operator\"\" _km(unsigned long long)", "", "ns::operator\"\" _km", "(unsigned long long)"},
      {"ns::counter", "", "ns::counter", ""},
      {"ns::name[abi:cxx11]", "", "ns::name[abi:cxx11]", ""},
      {"vtable for ns::X", "", "vtable for ns::X", ""},
      {"guard variable for ns::f()::x", "", "guard variable for ns::f()::x", ""},
  };
  for (const auto& c : cases) {
    const auto parts = cxx::split_demangled(c.demangled);
    EXPECT_EQ(parts.return_type, c.return_type) << c.demangled;
    EXPECT_EQ(parts.qualified_name, c.qualified) << c.demangled;
    EXPECT_EQ(parts.parameters, c.parameters) << c.demangled;
    EXPECT_EQ(cxx::qualified_name(c.demangled), c.qualified);
  }
}

TEST(CxxNames, QualifiedNamesOfWhatTheDemanglerWrites) {
  const std::map<std::string, std::string> cases = {
      {"_ZN3c1013MessageLoggerC1EPKcii", "c10::MessageLogger::MessageLogger"},
      {"_ZN3c104impl12PyObjectSlotD1Ev", "c10::impl::PyObjectSlot::~PyObjectSlot"},
      {"_ZNK3c106SymIntplERKS0_", "c10::SymInt::operator+"},
      {"_ZN3c106SymIntpLERKS0_", "c10::SymInt::operator+="},
      {"_ZN2nsltIiEEbRKSt4listIT_SaIS2_EEi", "ns::operator< <int>"},
      {"_ZNO2ns1XclEi", "ns::X::operator()"},
      {"_ZNK2ns1XcviEv", "ns::X::operator int"},
      {"_ZNK2at10TensorBase14const_data_ptrIN3c107complexIdEELi0EEEPKT_v",
       "at::TensorBase::const_data_ptr<c10::complex<double>, 0>"},
      {"_ZN3c1013getDtypeNamesB5cxx11ENS_10ScalarTypeE", "c10::getDtypeNames[abi:cxx11]"},
      {"_ZN2ns2tfIiEET_S1_", "ns::tf<int>"},
  };
  for (const auto& [mangled, qualified] : cases) {
    const auto d = cxx::demangle(mangled);
    ASSERT_TRUE(d) << mangled;
    EXPECT_EQ(cxx::qualified_name(*d), qualified) << *d;
  }
}

TEST(CxxNames, NormalizesTheDualAbi) {
  // The same declarations, as the demangler writes them from each ABI's mangling.
  const auto old_f = cxx::demangle("_ZN2ns1fERKSs");
  const auto new_f = cxx::demangle("_ZN2ns1fERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");
  const auto old_g = cxx::demangle("_ZN2ns1gERSt4listIiSaIiEE");
  const auto new_g = cxx::demangle("_ZN2ns1gERNSt7__cxx114listIiSaIiEEE");
  const auto old_h = cxx::demangle("_ZN2ns1hEi");
  const auto new_h = cxx::demangle("_ZN2ns1hB5cxx11Ei");
  ASSERT_TRUE(old_f && new_f && old_g && new_g && old_h && new_h);
  EXPECT_NE(*old_f, *new_f);
  EXPECT_EQ(cxx::normalize_cxx11_abi(*old_f), cxx::normalize_cxx11_abi(*new_f));
  EXPECT_EQ(cxx::normalize_cxx11_abi(*old_g), cxx::normalize_cxx11_abi(*new_g));
  EXPECT_EQ(cxx::normalize_cxx11_abi(*old_h), cxx::normalize_cxx11_abi(*new_h));
  EXPECT_EQ(cxx::normalize_cxx11_abi(*new_f), "ns::f(std::string const&)");
  EXPECT_EQ(cxx::normalize_cxx11_abi(*new_g), "ns::g(std::list<int, std::allocator<int> >&)");
  const auto old_box = cxx::demangle("_ZN2ns3BoxISsE3putEi");
  const auto new_box = cxx::demangle("_ZN2ns3BoxINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEE3putEi");
  ASSERT_TRUE(old_box && new_box);
  EXPECT_EQ(cxx::normalize_cxx11_abi(*old_box), "ns::Box<std::string>::put(int)");
  EXPECT_EQ(cxx::normalize_cxx11_abi(*new_box), "ns::Box<std::string>::put(int)");
  // Other std types are left alone.
  EXPECT_EQ(cxx::normalize_cxx11_abi("ns::v(std::basic_string_view<char, std::char_traits<char> >)"),
            "ns::v(std::basic_string_view<char, std::char_traits<char> >)");
}

TEST(CxxNames, MangledSearchPrefixes) {
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  // Nested names: one prefix per cv/ref-qualifier combination, ending at the own name's head.
  auto p = cxx::mangled_search_prefixes("_ZN3c1013MessageLoggerC1EPKcii");
  EXPECT_EQ(p.size(), 24u);
  EXPECT_TRUE(has(p, "_ZN3c1013MessageLoggerC"));
  EXPECT_TRUE(has(p, "_ZNK3c1013MessageLoggerC"));
  EXPECT_TRUE(has(p, "_ZNrVKO3c1013MessageLoggerC"));
  EXPECT_TRUE(has(cxx::mangled_search_prefixes("_ZN3c104impl12PyObjectSlotD1Ev"), "_ZN3c104impl12PyObjectSlotD"));
  EXPECT_TRUE(has(cxx::mangled_search_prefixes("_ZNK3c106SymIntplERKS0_"), "_ZN3c106SymIntpl"));
  EXPECT_TRUE(has(cxx::mangled_search_prefixes("_ZNK3c106SymIntplERKS0_"), "_ZNK3c106SymIntpl"));
  EXPECT_TRUE(has(cxx::mangled_search_prefixes("_ZNK2ns1XcviEv"), "_ZNK2ns1Xcv"));
  // The own name's ABI tag and template arguments are not part of it (both ABIs share the prefix).
  EXPECT_TRUE(
      has(cxx::mangled_search_prefixes("_ZN3c1013getDtypeNamesB5cxx11ENS_10ScalarTypeE"), "_ZN3c1013getDtypeNames"));
  EXPECT_TRUE(has(cxx::mangled_search_prefixes("_ZN2ns2tfINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEEET_S7_"),
                  "_ZN2ns2tf"));
  // Template arguments of the scopes are followed, substitutions included.
  EXPECT_TRUE(
      has(cxx::mangled_search_prefixes("_ZN3c1013intrusive_ptrINS_10TensorImplENS_6detail34intrusive_"
                                       "target_default_null_typeIS1_EEE5resetEv"),
          "_ZN3c1013intrusive_ptrINS_10TensorImplENS_6detail34intrusive_target_default_null_typeIS1_EEE5reset"));
  EXPECT_TRUE(has(cxx::mangled_search_prefixes("_ZNK2at10TensorBase14const_data_ptrIN3c107complexIdEELi0EEEPKT_v"),
                  "_ZNK2at10TensorBase14const_data_ptr"));
  // An expression in a scope's template arguments: the prefix stops before them.
  EXPECT_TRUE(has(cxx::mangled_search_prefixes("_ZN2ns1AIXadL_Z1fvEEE3getEv"), "_ZN2ns1A"));
  // Unscoped names.
  EXPECT_EQ(cxx::mangled_search_prefixes("_Z3fooi"), std::vector<std::string>{"_Z3foo"});
  EXPECT_EQ(cxx::mangled_search_prefixes("_ZSt4swapIiEvRT_S1_"), std::vector<std::string>{"_ZSt4swap"});
  EXPECT_EQ(cxx::mangled_search_prefixes("_ZplRK1XS1_"), std::vector<std::string>{"_Zpl"});
  // No reliable prefix: scopes the two ABIs mangle differently, local names, special names, C names.
  EXPECT_TRUE(cxx::mangled_search_prefixes("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc").empty());
  EXPECT_TRUE(cxx::mangled_search_prefixes("_ZNSs6appendEPKc").empty());
  EXPECT_TRUE(cxx::mangled_search_prefixes("_ZNSt4listIiSaIiEE9push_backERKi").empty());
  EXPECT_TRUE(cxx::mangled_search_prefixes("_ZN2ns3BoxISsE3putEi").empty());
  EXPECT_TRUE(cxx::mangled_search_prefixes("_ZZN2ns3runEvE5count").empty());
  EXPECT_TRUE(cxx::mangled_search_prefixes("_ZTVN2ns1XE").empty());
  EXPECT_TRUE(cxx::mangled_search_prefixes("memcpy").empty());
  // Malformed and hostile names: no crash, nothing unreliable.
  for (const std::string bad : {"_Z", "_ZN", "_ZN99x", "_ZN3fooI", "_ZN3fooIiE", "_ZN1aIL", "_Z9", "_ZNK"}) {
    for (const auto& prefix : cxx::mangled_search_prefixes(bad)) EXPECT_TRUE(bad.starts_with(prefix.substr(0, 3)));
  }
  const std::string deep = "_ZN1a" + std::string(100000, 'I') + "E";
  EXPECT_NO_THROW(cxx::mangled_search_prefixes(deep));
  EXPECT_NO_THROW(cxx::mangled_search_prefixes("_ZN1a" + std::string(100000, 'P') + "E"));
}

TEST(CxxNames, DualAbiMarkersAndTypes) {
  const std::string new_f =
      "ns::f(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)";
  const std::string new_g = "ns::g(std::__cxx11::list<int, std::allocator<int> >&)";
  EXPECT_EQ(cxx::cxx11_abi_markers(new_f), 1u);
  EXPECT_EQ(cxx::cxx11_abi_markers("ns::h[abi:cxx11](int)"), 1u);
  EXPECT_EQ(cxx::cxx11_abi_markers("ns::f(int)"), 0u);
  EXPECT_TRUE(cxx::has_old_abi_type("ns::f(std::string const&)"));
  EXPECT_TRUE(cxx::has_old_abi_type("ns::g(std::list<int, std::allocator<int> >&)"));
  EXPECT_FALSE(cxx::has_old_abi_type(new_f));
  EXPECT_FALSE(cxx::has_old_abi_type("ns::v(std::string_view)"));
  EXPECT_EQ(cxx::cxx11_abi_types(new_f), "std::string");
  EXPECT_EQ(cxx::cxx11_abi_types(new_g), "std::list");
  EXPECT_EQ(
      cxx::cxx11_abi_types("ns::k(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, "
                           "std::__cxx11::list<int, std::allocator<int> >)"),
      "std::string, std::list");
  EXPECT_EQ(cxx::cxx11_abi_types("ns::h[abi:cxx11](int)"), "std::string");
  EXPECT_EQ(cxx::cxx11_abi_types("ns::f(int)"), "");
}

TEST(CxxNames, SpecialNames) {
  EXPECT_TRUE(cxx::is_special_name("_ZTVN2ns1XE"));
  EXPECT_TRUE(cxx::is_special_name("_ZTIN2ns1XE"));
  EXPECT_TRUE(cxx::is_special_name("_ZGVZN2ns1fEvE1x"));
  EXPECT_FALSE(cxx::is_special_name("_ZN2ns1fEv"));
  EXPECT_FALSE(cxx::is_special_name("_Z3fooi"));
}

TEST(CxxNames, Demangles) {
  EXPECT_EQ(cxx::demangle("_ZN3c1013MessageLoggerC1EPKcii"),
            std::optional<std::string>("c10::MessageLogger::MessageLogger(char const*, int, int)"));
  EXPECT_FALSE(cxx::demangle("memcpy").has_value());
  EXPECT_FALSE(cxx::demangle("_Z").has_value());
  EXPECT_EQ(cxx::demangle_or_self("memcpy"), "memcpy");
  EXPECT_EQ(cxx::demangle_or_self("_Z3fooi"), "foo(int)");
}

}  // namespace unity_test_cxx_names
