// Issue 60's sentence contract: every finding kind has one row of words (inspector/verdict/kinds.cpp), and every
// kind renders in every format with a title of words: never empty, never the bare kind, never the kind twice
// ("tag-claim  tag-claim"), never a placeholder. The sentences real checks write under a verdict are held to it
// in tests/jobs/sentences_job.py (jobs.sentences), against pip and CPython where they say what those do.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "support.hpp"
#include "wheelcheck/ci.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/verdict.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_sentences {

using wheelcheck::verdict::Finding;
using wheelcheck::verdict::FindingKind;
using wheelcheck::verdict::Severity;
namespace verdict = wheelcheck::verdict;

std::vector<FindingKind> every_kind() {
  std::vector<FindingKind> out;
  for (int i = 0; i <= static_cast<int>(verdict::k_last_finding_kind); ++i) out.push_back(static_cast<FindingKind>(i));
  return out;
}

// A finding of `kind` with every typed fact a check may set, as one would: the words are the table's and
// summary()'s from these facts, never from the explanation.
Finding finding_of(FindingKind kind, Severity severity) {
  Finding f;
  f.kind = kind;
  f.severity = severity;
  f.member = "pkg/_native.cpython-312-x86_64-linux-gnu.so";
  f.library = "libfoo.so.1";
  f.symbol = "foo_bar";
  f.required_version = "GLIBC_2.38";
  f.explanation = "what this finding found.";
  f.fix = "what would make it work";
  return f;
}

// A placeholder left in a sentence: fmt's braces, an empty pair of parentheses or quotes, "TODO".
bool has_placeholder(const std::string& s) {
  static const std::regex placeholder(R"(\{\}|\{[0-9]\}|\(\s*\)|""|''|``|TODO|\bnull\b|\bundefined\b \()");
  return std::regex_search(s, placeholder);
}

// The kind written twice in a row ("tag-claim  tag-claim", "tag-claim tag-claim").
bool kind_twice(const std::string& s, const std::string& kind) {
  return std::regex_search(s, std::regex(kind + R"([\s:]+)" + kind + R"(\b)"));
}

TEST(SentenceContract, EveryKindHasOneRowOfWords) {
  std::set<std::string> names, rules, titles;
  const std::string docs = wheelcheck::test::read_file(wheelcheck::test::source_dir() + "/docs/verdict.md");
  for (FindingKind k : every_kind()) {
    const auto& row = verdict::kind_text(k);
    const std::string name(row.name), title(row.title), meaning(row.meaning);
    SCOPED_TRACE(name);
    EXPECT_EQ(row.kind, k) << "the table is in FindingKind's order";
    EXPECT_TRUE(std::regex_match(name, std::regex("[a-z0-9]+(-[a-z0-9]+)*")));
    EXPECT_TRUE(names.insert(name).second) << "a name said twice";
    EXPECT_TRUE(rules.insert(std::string(row.rule)).second) << "a SARIF rule said twice";
    EXPECT_TRUE(titles.insert(title).second) << "a title said twice: " << title;
    EXPECT_FALSE(title.empty());
    EXPECT_TRUE(std::isupper(static_cast<unsigned char>(title[0])) || title.rfind("variant.json", 0) == 0 ||
                title.rfind("x86-64", 0) == 0 || title.rfind("PyFPE", 0) == 0)
        << title;
    EXPECT_FALSE(title.ends_with(".")) << "a title is a heading, not a sentence";
    EXPECT_TRUE(meaning.ends_with(".") || meaning.ends_with(".\"") || meaning.ends_with(")"))
        << "a meaning is sentences: " << meaning;
    EXPECT_FALSE(has_placeholder(title + " " + meaning)) << title << " / " << meaning;
    EXPECT_NE(wheelcheck::ascii_lower(title), name);
    EXPECT_EQ(verdict::kind_name(k), name);
    EXPECT_EQ(verdict::is_integrity(k), row.integrity);
    // The meaning is the same under every verdict: it says nothing of loading here or not.
    EXPECT_EQ(meaning.find("loads here"), std::string::npos) << meaning;
    EXPECT_NE(docs.find("`" + name + "`"), std::string::npos) << "docs/verdict.md does not name " << name;
  }
  EXPECT_EQ(verdict::kind_texts().size(), every_kind().size());
}

TEST(SentenceContract, EverySummaryIsWordsUnderEverySeverity) {
  for (FindingKind k : every_kind()) {
    for (Severity s : {Severity::Info, Severity::Condition, Severity::Warning, Severity::Error}) {
      const Finding f = finding_of(k, s);
      const std::string name = verdict::kind_name(k);
      const std::string summary = verdict::summary(f), requirement = verdict::requirement(f);
      SCOPED_TRACE(name + " / " + verdict::severity_name(s) + ": " + summary);
      EXPECT_FALSE(summary.empty());
      EXPECT_NE(summary, name) << "the bare kind is no title";
      EXPECT_FALSE(kind_twice(summary, name));
      EXPECT_FALSE(has_placeholder(summary));
      EXPECT_FALSE(requirement.empty());
      EXPECT_FALSE(has_placeholder(requirement));
      // Words from the facts alone: no summary or requirement is cut from the explanation's text.
      Finding other = f;
      other.explanation = "Quite another sentence; its first clause (if cut) would show: the image's driver is 1.";
      EXPECT_EQ(verdict::summary(other), summary);
      EXPECT_EQ(verdict::requirement(other), requirement);
    }
  }
}

// Each kind in a report of its own (a report lists a few findings in full), rendered in every format a check,
// the gates, lint and the scan write: titled in words in each.
TEST(SentenceContract, EveryFormatTitlesEveryKind) {
  for (FindingKind k : every_kind()) {
    const std::string name = verdict::kind_name(k);
    const Finding f = finding_of(k, Severity::Error);
    verdict::Report report;
    report.wheel = "pkg-1.0-cp312-cp312-manylinux_2_17_x86_64.whl";
    report.image = "cuda13.0";
    report.verdict = verdict::Verdict::Incompatible;
    report.findings.push_back(f);

    wheelcheck::run::Cell cell;
    cell.image = report.image;
    cell.report = report;
    const auto c = wheelcheck::ci::case_of(cell, wheelcheck::ci::Location{report.wheel, 0});
    wheelcheck::lint::Report lint_report;
    lint_report.wheel = report.wheel;
    lint_report.findings = report.findings;
    lint_report.status = wheelcheck::lint::Status::Errors;

    const auto sarif = wheelcheck::ci::sarif({c}, 1);
    const std::vector<std::pair<std::string, std::string>> renderings = {
        {"text", verdict::render_text(report, false)},
        {"json", verdict::to_json(report).dump()},
        {"sarif", sarif.dump()},
        {"junit", wheelcheck::ci::junit({c})},
        {"lint text", wheelcheck::lint::render_text(lint_report, false)},
        {"lint markdown", wheelcheck::lint::render_markdown({lint_report})},
        {"lint github", wheelcheck::lint::render_github({lint_report})},
    };
    for (const auto& [format, out] : renderings) {
      SCOPED_TRACE(name + " in " + format);
      if (format != "json" && format != "sarif") {  // where "{}" and "[]" are JSON's own
        EXPECT_EQ(out.find("{}"), std::string::npos);
        EXPECT_EQ(out.find("[]"), std::string::npos) << "an empty classification";
      }
      EXPECT_FALSE(kind_twice(out, name));
      // A line that ends in the bare kind is a finding without words.
      EXPECT_FALSE(std::regex_search(out, std::regex(": " + name + "\n")));
      if (format == "json") continue;  // JSON carries the kind and the facts; the words are the renderers'
      // As the reader sees it: XML's and GitHub's escapes undone.
      std::string seen = out;
      for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{{"&apos;", "'"},
                                                                                     {"&quot;", "\""},
                                                                                     {"&lt;", "<"},
                                                                                     {"&gt;", ">"},
                                                                                     {"&amp;", "&"},
                                                                                     {"%3A", ":"},
                                                                                     {"%2C", ","}})
        for (auto at = seen.find(from); at != std::string::npos; at = seen.find(from, at + to.size()))
          seen.replace(at, from.size(), to);
      const bool worded = seen.find(verdict::summary(f).substr(0, 12)) != std::string::npos ||
                          seen.find(verdict::requirement(f).substr(0, 12)) != std::string::npos;
      EXPECT_TRUE(worded) << "the finding's words are missing";
    }
    // SARIF: the result's rule is one the run's driver lists, with a title and help.
    std::set<std::string> ids;
    for (const auto& r : sarif["runs"][0]["tool"]["driver"]["rules"]) {
      ids.insert(r["id"].get<std::string>());
      EXPECT_FALSE(r["shortDescription"]["text"].get<std::string>().empty());
    }
    for (const auto& r : sarif["runs"][0]["results"]) EXPECT_TRUE(ids.count(r["ruleId"].get<std::string>())) << r;
  }
}

}  // namespace unity_test_sentences
