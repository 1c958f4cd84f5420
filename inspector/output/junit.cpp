// JUnit XML of a run's cases: the test report every CI renders (Jenkins, GitLab, GitHub's test-report
// actions). The shape most of them read: <testsuites> of <testsuite name=IMAGE>, each <testcase> with at most
// one of <failure>, <error> or <skipped>, counts on every suite and on the whole.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "wheelcheck/ci.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::ci {

namespace junit_detail {

// Text and attribute values: the five XML escapes, and the characters XML 1.0 cannot hold at all
// (controls other than tab, newline and carriage return) as U+FFFD.
std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const auto u = static_cast<unsigned char>(ch);
    if (u >= 0x80) {
      // A whole, shortest-form UTF-8 sequence is copied; anything else (a name from a hostile ELF) is U+FFFD.
      const std::size_t n = u >= 0xF0 && u <= 0xF4 ? 4 : u >= 0xE0 ? 3 : u >= 0xC2 && u <= 0xDF ? 2 : 0;
      bool ok = n != 0 && i + n <= s.size();
      for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
      if (ok && n == 3) {
        const auto b1 = static_cast<unsigned char>(s[i + 1]);
        ok = !(u == 0xE0 && b1 < 0xA0) && !(u == 0xED && b1 >= 0xA0) &&
             !(u == 0xEF && b1 == 0xBF && static_cast<unsigned char>(s[i + 2]) >= 0xBE);
      }
      if (ok && n == 4) {
        const auto b1 = static_cast<unsigned char>(s[i + 1]);
        ok = !(u == 0xF0 && b1 < 0x90) && !(u == 0xF4 && b1 >= 0x90);
      }
      if (ok) {
        out.append(s.substr(i, n));
        i += n - 1;
      } else {
        out += "\xEF\xBF\xBD";
      }
      continue;
    }
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      case '\t': out += "&#9;"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += "\xEF\xBF\xBD";
        } else {
          out += ch;
        }
    }
  }
  return out;
}

// Element text: newlines kept as they are (readable in the report).
std::string xml_text(std::string_view s) {
  std::string out;
  for (const auto& line : split(s, "\n", true)) {
    if (!out.empty()) out += "\n";
    out += xml_escape(line);
  }
  return out;
}

struct Testcase {
  std::string classname, name, file;
  int line = 0;
  std::string outcome;  // "", failure, error, skipped
  std::string type, message, body, out;
};

std::string findings_text(const Case& c) {
  std::string body;
  for (const auto& f : c.cell.report.findings) {
    body +=
        fmt::format("{}: {}{}", verdict::severity_name(f.severity), f.member.empty() ? "" : f.member + ": ", reason(f));
    if (!f.explanation.empty()) body += "\n    " + f.explanation;
    if (!f.fix.empty()) body += "\n    fix: " + f.fix;
    body += "\n";
  }
  return body;
}

std::vector<Testcase> testcases_of(const Case& c) {
  std::vector<Testcase> out;
  Testcase t;
  t.classname = c.image();
  t.name = c.wheel().empty() ? c.location.uri : c.wheel();
  t.file = c.location.uri;
  t.line = c.location.line;
  const std::string why = headline(c);
  const auto judged = c.cell.report.verdict;
  const auto& findings = c.cell.report.findings;
  t.out = "verdict: " + (c.cell.targeted ? verdict_word(c) : "not targeted") + (why.empty() ? "" : "\n" + why) + "\n";
  if (!c.checked) {
    t.outcome = "error";
    t.type = "not-checked";
    t.message = c.error;
  } else if (!c.cell.targeted) {
    t.outcome = "skipped";
    t.message = "not for this image: " + c.cell.not_targeted;
  } else if (judged == verdict::Verdict::Incompatible) {
    t.outcome = "failure";
    t.type = "incompatible";
    t.message = why.empty() ? c.error : why;
    t.body = findings.empty() ? c.error : findings_text(c);
  } else if (judged == verdict::Verdict::Unknown) {
    t.outcome = "error";
    t.type = "unknown";
    t.message = why;
    t.body = findings_text(c);
  } else if (!findings.empty()) {
    t.out += findings_text(c);
  }
  out.push_back(std::move(t));
  if (!c.cell.targeted || !c.checked) return out;
  for (const auto& r : c.cell.report.routes) {
    Testcase rt;
    rt.classname = c.image() + "." + (c.wheel().empty() ? c.location.uri : c.wheel());
    rt.name = "route " + r.name + (r.optional ? " (optional)" : " (core)");
    rt.file = c.location.uri;
    rt.line = c.location.line;
    if (!r.available) {
      std::vector<std::string> gates;
      for (const auto& [k, v] : r.gates) gates.push_back(k + "=" + v);
      const std::string reasons = join(r.reasons, "; ");
      if (r.optional) {
        rt.outcome = "skipped";
        rt.message = "off: " + reasons + (gates.empty() ? "" : " (set " + join(gates, " ") + ")");
      } else {
        rt.outcome = "failure";
        rt.type = "core-route-off";
        rt.message = "a core route is off: " + reasons;
        rt.body = join(r.reasons, "\n") + "\n";
      }
    }
    out.push_back(std::move(rt));
  }
  return out;
}

}  // namespace junit_detail

using namespace junit_detail;

std::string junit(const std::vector<Case>& cases) {
  std::vector<std::string> images;
  for (const auto& c : cases) {
    if (std::find(images.begin(), images.end(), c.image()) == images.end()) images.push_back(c.image());
  }
  struct Counts {
    std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
    void add(const Testcase& t) {
      ++tests;
      failures += t.outcome == "failure" ? 1 : 0;
      errors += t.outcome == "error" ? 1 : 0;
      skipped += t.outcome == "skipped" ? 1 : 0;
    }
    std::string attributes() const {
      return fmt::format("tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"", tests, failures, errors, skipped);
    }
  };
  Counts all;
  std::string suites;
  for (const auto& image : images) {
    Counts counts;
    std::string body;
    for (const auto& c : cases) {
      if (c.image() != image) continue;
      for (const auto& t : testcases_of(c)) {
        counts.add(t);
        all.add(t);
        body += fmt::format("    <testcase classname=\"{}\" name=\"{}\"", xml_escape(t.classname), xml_escape(t.name));
        if (!t.file.empty()) body += fmt::format(" file=\"{}\"", xml_escape(t.file));
        if (t.line > 0) body += fmt::format(" line=\"{}\"", t.line);
        body += ">\n";
        if (t.outcome == "skipped") {
          body += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(t.message));
        } else if (!t.outcome.empty()) {
          body += fmt::format("      <{0} type=\"{1}\" message=\"{2}\">{3}</{0}>\n", t.outcome, xml_escape(t.type),
                              xml_escape(t.message), xml_text(t.body));
        }
        if (!t.out.empty()) body += fmt::format("      <system-out>{}</system-out>\n", xml_text(t.out));
        body += "    </testcase>\n";
      }
    }
    suites += fmt::format("  <testsuite name=\"{}\" {}>\n", xml_escape(image), counts.attributes());
    suites += fmt::format("    <properties><property name=\"image\" value=\"{}\"/></properties>\n", xml_escape(image));
    suites += body + "  </testsuite>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
         fmt::format("<testsuites name=\"wheelcheck\" {}>\n", all.attributes()) + suites + "</testsuites>\n";
}

}  // namespace wheelcheck::ci
