// Internal to the verdict: findings on what a member's load binds (inspector/verdict/load_findings.cpp):
// a version a wheel object needs that its provider lacks, and the same for the image's and the
// distributions' own libraries the load maps anew. Those are said as the image's: the library that needs
// it and what it needs, reported on that library (Finding::object), against the members whose load
// reaches it; no build of the wheel fixes them.
#pragma once

#include "inspector/verdict/findings.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

// "needs version GLIBC_2.38 of libc.so.6, which the image's ... does not define": a wheel object's need.
Finding member_missing_version(const image::Image& image, const resolve::MissingVersion& mv, const std::string& member);
// "libLerc.so.4 in this image cannot be loaded: it needs GLIBCXX_3.4.29 of libstdc++.so.6, which the
// image's /usr/lib/x86_64-linux-gnu/libstdc++.so.6 does not define (newest GLIBCXX_3.4.28) ..."
Finding image_missing_version(const image::Image& image, const resolve::MissingVersion& mv);
// An undefined, non-weak symbol of such a library that nothing in the load's scope defines.
Finding image_unbound_symbol(const resolve::ImageUnbound& u);
// The same of a library of a distribution the wheel requires (`import torch` fails): an error against
// every extension module of the wheel (`modules`), Finding::provider set.
Finding provider_unbound_symbol(const resolve::ImageUnbound& u, const std::vector<std::string>& modules);
// A failure of a library that a required distribution's library loads, said as that distribution's
// import failing: against every extension module, Finding::provider set.
Finding provider_failure(Finding f, const std::string& distribution, const std::vector<std::string>& modules);
// The versions a required distribution's library needs (its DT_VERNEED, as a probe recorded it) of the
// library `need` found for it that the provider does not define: "torch in this image cannot be
// imported: libc10.so needs GLIBC_2.38, the image has glibc 2.36; ...", one finding each.
std::vector<Finding> provider_version_needs(const resolve::Space& space, const image::Image& image,
                                            const resolve::Object& lib, const resolve::Need& need,
                                            const std::vector<std::string>& modules);
// A wheel object's undefined symbol that nothing in its load scope defines: classified against `tables` (the
// scope's export tables, `searched` naming the objects) as changed signature, other C++ ABI, newer version or
// absent, with the fix; with u.unknown set, an old-ABI signature that the C++11-ABI libraries there cannot export.
Finding unbound_symbol_finding(const resolve::Unbound& u, const std::string& member,
                               const std::vector<const exports::Table*>& tables,
                               const std::vector<std::string>& searched);
// How the image names one of its objects: "/usr/lib/x86_64-linux-gnu/libLerc.so.4" (or torch's
// "torch 2.10.0 (torch/lib/libc10.so)").
std::string image_object_name(const resolve::Object& o);
// A library that is there (`there`: in the wheel, a wheel beside it, the image or a distribution), but on no
// search path of `req` (named `needer`): where it is, and what would reach it (for a wheel's own member, the
// RUNPATH from its folder to the library's).
void explain_unreachable(Draft& f, const resolve::Object& req, const std::string& needer, const resolve::Object& there,
                         const std::string& name);

// A need whose cause is no package the image lacks, said as what it is: the C library of another kind
// (libc.musl-x86_64.so.1 in a glibc image, libc.so.6 in a musl one: the member is for the other libc, and no
// package is the fix), or the interpreter's own libpython (an extension module linked to it loads only where
// the interpreter that imports it loaded that very library: a condition where the image does not state what
// its interpreter loads, and the publisher's fix is not to link it). Rewrites the draft's explanation, fix
// and severity; false when the need is neither, or where only the image's unstated contents could tell (the
// draft is untouched). absent_known: the image states the library is nowhere the loader looks.
bool explain_special_need(Draft& f, const std::string& who, const std::string& name, const image::Image& image,
                          const image::Python* python, bool extension, bool absent_known);

}  // namespace wheelcheck::verdict
