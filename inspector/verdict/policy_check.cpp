// A check against a packaging target (manylinux_2_17_aarch64, musllinux_1_2_x86_64, ...): the wheel
// judged as that policy judges it, as auditwheel would.
//
//   1. A wheel without native code is compatible with every target.
//   2. Native code for another machine, or another C library: incompatible for that one reason (the
//      libraries and symbols behind it are not the question, so no cascade of findings).
//   3. Otherwise each reason consistent_with gives (policy::analyze) whose ceiling is below the target is
//      an error: a symbol version the policy does not allow, a library outside its list (with what
//      `auditwheel repair` would graft and what that changes), a blacklisted, UCS2 or PyFPE symbol, an
//      x86-64 ISA level above the baseline. None: compatible.
//   The loader's search is kept as evidence: each root's needs resolved against the policy's libraries.
#include "inspector/verdict/policy_check.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "inspector/verdict/findings.hpp"
#include "inspector/verdict/routes.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::verdict {

Report report_for(const WheelProfile& wheel, const image::Image& image) {
  Report r;
  r.wheel = wheel.filename.filename;
  r.wheel_sha256 = wheel.sha256;
  r.image = image.name;
  r.image_summary = image.summary;
  r.assumptions = image.assumptions;
  return r;
}

// The wheel's own integrity, one finding per fault, each in the words of what is wrong: the archive (its
// ZIP structure, a member's data), RECORD (what pip does with it: it refuses a wheel without one, and
// installs the others without checking a hash, a size or the listing), a member that is not readable ELF
// (the archive and RECORD may be sound: the file was built or packed broken). required_version carries
// the problem's kind ("missing-record", "hash-mismatch", "malformed-elf").
std::vector<Finding> archive_findings(const WheelProfile& wheel) {
  std::vector<Finding> out;
  for (const auto& p : wheel.problems) {
    if (p.kind == "malformed-elf") continue;  // the member's own finding below says it (unreadable-member)
    out.push_back(make(FindingKind::Archive, Severity::Error)
                      .member(p.path)
                      .version(p.kind)
                      .explain("the wheel's archive: " + p.detail + " (" + p.kind + ")")
                      .fix("rebuild or re-download the wheel"));
  }
  for (const auto& p : wheel.record_problems) {
    const bool missing = p.kind == "missing-record";
    out.push_back(
        make(FindingKind::Record, Severity::Error)
            .member(p.path)
            .version(p.kind)
            .explain(missing
                         ? "the wheel has no RECORD (" + p.kind +
                               "): pip refuses to install it (\"OSError: RECORD\"), and nothing vouches for its files"
                         : "RECORD: " + p.detail + " (" + p.kind +
                               "): the wheel is not what its RECORD says (pip does not check RECORD: it installs it "
                               "all the same), so it must not be pinned")
            .fix(missing ? "rebuild the wheel with a wheel builder (it writes RECORD), or re-download it"
                         : "re-download the wheel (the copy is damaged or altered), or rebuild it"));
  }
  for (const auto& m : wheel.members) {
    if (m.elf) continue;
    out.push_back(make(FindingKind::UnreadableMember, Severity::Error)
                      .member(m.path)
                      .version("malformed-elf")
                      .explain("this member could not be read as ELF: " + m.error +
                               "; the loader refuses it, whatever the archive and RECORD say")
                      .fix("rebuild the wheel: the member was built or packed broken"));
  }
  return out;
}

std::vector<std::string> integrity_problems(const WheelProfile& wheel) {
  Report r = report_for(wheel, image::Image{});
  r.findings = archive_findings(wheel);
  return integrity_problems(r);
}

Finding tag_claim_finding(const policy::Overclaim& claim, bool decides) {
  std::vector<std::string> why, evidence;
  bool kernel = false;     // a reason auditwheel does not judge: its `show` names a more compatible tag
  bool libpython = false;  // linked to the interpreter's library: no tag is the publisher's fix
  for (const auto* k : claim.because) {
    kernel = kernel || k->rule == policy::Rule::Kernel;
    libpython = libpython || (k->rule == policy::Rule::Library && k->library.rfind("libpython", 0) == 0);
    why.push_back(k->detail);
    evidence.push_back(fmt::format("{} ({}): {}", k->ceiling, policy::rule_name(k->rule), k->detail));
  }
  // What pip does with the tag is the same whatever this image's verdict: it installs the wheel wherever
  // the tag fits, and on the systems the tag promises that lack what the binaries need, the loader refuses it.
  const bool only_libpython = libpython && claim.because.size() == 1;
  std::string fix =
      only_libpython
          ? fmt::format(
                "build the extension modules without -lpython (CPython provides those symbols to every module it "
                "imports); the binaries are then consistent with the tag {}",
                claim.tag)
          : std::string(libpython ? "build the extension modules without -lpython, and " : "") +
                fmt::format("tag the wheel {} ({}), or rebuild it in the {} image its tag names", claim.consistent_with,
                            kernel
                                ? "wheelcheck judges the kernel its static members need, `auditwheel show` judges no "
                                  "kernel and names a more compatible tag"
                            : claim.auditwheel_agrees
                                ? "`auditwheel show` names the same; `auditwheel repair` grafts the libraries a "
                                  "policy lacks"
                                : "`auditwheel show` differs by design: it does not judge every reason above",
                            claim.tag);
  return make(FindingKind::TagClaim, decides ? Severity::Error : Severity::Warning)
      .library(claim.tag)
      .version(claim.consistent_with)
      .explain(claim.detail + (why.empty() ? "" : ": " + fmt::format("{}", fmt::join(why, "; "))) +
               ". pip installs it wherever its tag fits, and on those of them that lack what its binaries need the "
               "loader refuses it.")
      .fix(std::move(fix))
      .evidence(std::move(evidence));
}

namespace {

using resolve::Object;

// What `auditwheel repair` would do about the libraries outside the target's list, in words.
std::string graft_fix(const std::string& library, const policy::Policy& target, const std::string& after) {
  if (library.rfind("libpython", 0) == 0) {
    return fmt::format(
        "do not link extension modules against {} (the interpreter provides those symbols; build without "
        "-lpython): auditwheel cannot graft an interpreter",
        library);
  }
  return fmt::format(
      "`auditwheel repair --plat {}` would graft it: copy {} (and what it needs outside the policy) into the wheel's "
      "<package>.libs/ folder under a hashed name, point the member's RPATH there and retag the wheel. The wheel then "
      "carries its own copy (it grows by the library's size and ignores the system's, and its licence travels with "
      "it); with every such library grafted it would be consistent with {} (the grafted libraries' own symbol "
      "versions permitting)",
      target.tag(), library, after);
}

// The finding kind of a reason of consistent_with: "policy-" and the rule's name.
FindingKind policy_kind(policy::Rule rule) {
  switch (rule) {
    case policy::Rule::Machine: return FindingKind::PolicyMachine;
    case policy::Rule::Libc: return FindingKind::PolicyLibc;
    case policy::Rule::ApiLevel: return FindingKind::PolicyApiLevel;
    case policy::Rule::SymbolVersion: return FindingKind::PolicySymbolVersion;
    case policy::Rule::Library: return FindingKind::PolicyLibrary;
    case policy::Rule::Blacklist: return FindingKind::PolicyBlacklist;
    case policy::Rule::Ucs2: return FindingKind::PolicyUcs2;
    case policy::Rule::PyFpe: return FindingKind::PolicyPyfpe;
    case policy::Rule::IsaLevel: return FindingKind::PolicyIsaLevel;
    case policy::Rule::Kernel: return FindingKind::PolicyKernel;
  }
  return FindingKind::PolicyMachine;
}

class PolicyChecker {
 public:
  PolicyChecker(const WheelProfile& wheel, const image::Image& target, const CheckOptions& options)
      : m_wheel(wheel), m_target(target), m_options(options) {}

  Report run() {
    Report r = report_for(m_wheel, m_target);
    std::vector<Finding> findings = archive_findings(m_wheel);
    const policy::Policy* target = m_options.policies != nullptr ? m_options.policies->find(m_target.policy) : nullptr;
    if (target == nullptr) {
      findings.push_back(make(FindingKind::PolicyUnknown, Severity::Condition)
                             .explain("the policy " + m_target.policy +
                                      " is not in the db's policy data, so the wheel cannot be judged against it")
                             .fix("use a db with db/policies (scripts/gen-db.sh targets), or `wheelcheck images` for "
                                  "the known targets"));
      return finish(std::move(r), std::move(findings));
    }
    const policy::Consistency c = policy::analyze(m_wheel, *m_options.policies);
    if (c.pure) {
      r.notes.push_back("no native code: every packaging policy accepts the wheel");
      return finish(std::move(r), std::move(findings));
    }
    r.notes.push_back(
        fmt::format("judged as the {} policy judges it (auditwheel's data); the wheel is consistent "
                    "with {} ({}: {})",
                    target->tag(), c.tag.empty() ? "nothing" : c.tag, policy::libc_name(c.libc), c.libc_evidence));
    if (c.tag.empty()) return finish(std::move(r), std::move(findings));  // unreadable members said why
    if (c.arch != target->arch) {
      findings.push_back(
          make(FindingKind::PolicyMachine, Severity::Error)
              .version(c.machine)
              .explain(fmt::format("the wheel's native code is for {}; {} is the policy for {}.", c.machine,
                                   target->tag(), target->arch))
              .fix(c.arch.empty() ? fmt::format("no {} policy covers {}: this wheel can only be tagged {}",
                                                policy::tag_prefix(c.libc), c.machine, c.tag)
                                  : fmt::format("use the wheel built for {} (its tag ends in _{}), or judge this one "
                                                "against a target for {}",
                                                target->arch, policy::tag_arch(target->libc, target->arch), c.arch)));
      return finish(std::move(r), std::move(findings));
    }
    if (c.libc != target->libc) {
      findings.push_back(
          make(FindingKind::PolicyLibc, Severity::Error)
              .version(policy::libc_name(c.libc))
              .explain(fmt::format("the wheel is built for {} ({}); {} is a {} policy.", policy::libc_name(c.libc),
                                   c.libc_evidence, target->tag(), policy::libc_name(target->libc)))
              .fix(fmt::format("use the wheel built for {} ({} tags), or judge this one against a {} target",
                               policy::libc_name(target->libc), policy::tag_prefix(target->libc),
                               policy::tag_prefix(c.libc))));
      return finish(std::move(r), std::move(findings));
    }
    members(r);
    // What grafting every library outside the list would leave: the other reasons' ceiling.
    int after = target->priority;
    for (const auto& k : c.constrained_by) {
      if (k.rule != policy::Rule::Library) after = std::min(after, k.ceiling_priority);
    }
    std::string after_tag = "linux_" + c.arch;
    for (const auto* p : m_options.policies->of(c.libc, c.arch)) {
      if (p->priority == after) after_tag = p->tag();
    }
    for (const auto& k : c.constrained_by) {
      if (k.ceiling_priority >= target->priority) continue;
      findings.push_back(reason(k, *target, after_tag));
    }
    if (const auto claim = policy::check_claim(m_wheel, c, *m_options.policies)) {
      findings.push_back(tag_claim_finding(*claim, target->priority > c.priority));
    }
    return finish(std::move(r), std::move(findings));
  }

 private:
  Finding reason(const policy::Constraint& k, const policy::Policy& target, const std::string& after_tag) const {
    Finding f = make(policy_kind(k.rule), Severity::Error).member(k.member).library(k.library).version(k.version);
    if (!k.symbols.empty()) f.evidence.push_back(fmt::format("uses {}", fmt::join(k.symbols, ", ")));
    f.evidence.push_back(fmt::format("this reason alone allows at most {}", k.ceiling));
    switch (k.rule) {
      case policy::Rule::SymbolVersion: {
        const auto family = k.version.substr(0, k.version.find('_'));
        const auto it = target.symbol_versions.find(family);
        std::string newest;
        if (it != target.symbol_versions.end()) {
          for (const auto& v : it->second) {
            if (newest.empty() || dotted_less(newest, v)) newest = v;
          }
        }
        f.explanation = fmt::format("needs {} of {}; {} allows {}_ versions up to {}.", k.version, k.library,
                                    target.tag(), family, newest.empty() ? "none" : newest);
        f.fix = k.ceiling_priority == 0
                    ? fmt::format("{} is in no policy: rebuild without it", k.version)
                    : fmt::format(
                          "tag the wheel {} (what it is), or rebuild it in the {} image so it needs no newer "
                          "version",
                          k.ceiling, target.tag());
        break;
      }
      case policy::Rule::Library:
        f.explanation = fmt::format(
            "needs {}, which is neither in the wheel nor on {}'s list of {} libraries a wheel may take from the "
            "system.",
            k.library, target.tag(), target.whitelist.size());
        f.fix = graft_fix(k.library, target, after_tag);
        for (const auto& n : m_needs) {
          if (n.name == k.library && !n.found) {
            for (const auto& a : n.tried) f.evidence.push_back(resolve::attempt_text(a));
          }
        }
        break;
      case policy::Rule::Blacklist:
        f.explanation = fmt::format(
            "uses {} of {}: internal symbols {} forbids, because other builds of {} lack "
            "them.",
            fmt::join(k.symbols, ", "), k.library, target.tag(), k.library);
        f.fix = fmt::format("rebuild without those symbols (use {}'s public API), or graft a private copy of {}",
                            k.library, k.library);
        break;
      case policy::Rule::Ucs2:
        f.explanation = k.detail + ".";
        f.fix = "rebuild against a wide-Unicode (UCS4) Python 2, or drop Python 2";
        break;
      case policy::Rule::PyFpe:
        f.explanation = k.detail + ".";
        f.fix = "rebuild against an interpreter configured without --with-fpectl";
        break;
      case policy::Rule::IsaLevel:
        f.explanation = k.detail + ".";
        f.fix = "build for the baseline x86-64 (no -march=x86-64-v2 or newer), or tag the wheel linux_x86_64";
        break;
      case policy::Rule::Kernel:
        f.explanation = k.detail + ".";
        f.fix = fmt::format(
            "link it dynamically (it then runs on the system's own glibc), or build its static glibc with an older "
            "--enable-kernel; as it is, tag the wheel {}",
            k.ceiling);
        break;
      case policy::Rule::Machine:
        f.explanation = k.detail + ".";
        f.fix = "build every member for the same machine";
        break;
      case policy::Rule::ApiLevel:
        f.explanation = fmt::format("{}; {} is for API level {}.", k.detail, target.tag(), target.libc_version());
        f.fix = fmt::format("judge it against {} or a newer API level", k.ceiling);
        break;
      case policy::Rule::Libc: {  // the musl release: an assumption, so a condition
        const policy::Policy* assumed = m_options.policies->find(k.ceiling);
        f.severity = Severity::Condition;
        f.explanation = fmt::format(
            "the wheel was built against musl {} or older (musl has no symbol versions, so no binary states the "
            "release it needs; musl {} is assumed, as auditwheel assumes the musl it runs on)",
            target.libc_version(), assumed != nullptr ? assumed->libc_version() : k.ceiling);
        f.fix = fmt::format("if it was (Alpine 3.12 or older for musl 1.1), it is consistent with {}", target.tag());
        break;
      }
    }
    return f;
  }

  // The loader's search against the policy's libraries, kept as evidence: each root and its needs.
  void members(Report& r) {
    const resolve::Space space(m_target, m_wheel, {});
    std::set<std::string> needed;
    for (const Object* o : space.wheel_members()) {
      if (o->binary != nullptr) needed.insert(o->needed.begin(), o->needed.end());
    }
    for (const Object* o : space.wheel_members()) {
      if (o->binary == nullptr) continue;
      const std::string base = o->member.substr(o->member.find_last_of('/') + 1);
      if (!o->python_extension && o->binary->type != elf::FileType::Executable &&
          (needed.count(base) || needed.count(o->soname)))
        continue;
      MemberReport mr;
      mr.path = o->member;
      mr.kind = o->python_extension ? "extension" : resolve::is_program(*o->binary) ? "executable" : "library";
      for (const auto& need : resolve::load(space, *o).needs) {
        NeedReport nr =
            need_report(need, need.requester->member.empty() ? need.requester->path : need.requester->member);
        if (!nr.found) mr.missing_libraries.push_back(nr.name);
        m_needs.push_back(nr);
        mr.needs.push_back(std::move(nr));
      }
      r.members.push_back(std::move(mr));
    }
  }

  Report finish(Report r, std::vector<Finding> findings) const {
    for (auto& m : r.members) {
      for (const auto& f : findings) {
        if (f.severity == Severity::Error && (f.member == m.path || f.member.empty())) m.loads = false;
      }
    }
    std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
      return static_cast<int>(a.severity) > static_cast<int>(b.severity);
    });
    for (const auto& f : findings) {
      if (f.severity == Severity::Condition) r.conditions.push_back(f.explanation);
    }
    r.findings = std::move(findings);
    r.verdict = verdict_of(tally(r));  // no routes: errors, then conditions
    return r;
  }

  const WheelProfile& m_wheel;
  const image::Image& m_target;
  const CheckOptions& m_options;
  std::vector<NeedReport> m_needs;
};

}  // namespace

Report check_policy(const WheelProfile& wheel, const image::Image& target, const CheckOptions& options) {
  return PolicyChecker(wheel, target, options).run();
}

}  // namespace wheelcheck::verdict
