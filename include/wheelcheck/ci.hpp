// wheelcheck where CI already looks (issue 30): one model of a run's answers -- a wheel against an image,
// with its findings and routes -- rendered as a SARIF 2.1.0 log (GitHub code scanning) and as JUnit XML
// (every CI's test report), the same for check, gates, environments and the scan (inspector/output/sarif.cpp,
// inspector/output/junit.cpp); and the reasons in the words pip uses ("requires glibc 2.38+ (image: 2.36)").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/run.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::scan {
struct Report;
}

namespace wheelcheck::ci {

// Where a wheel was named: the line of a lock, pins or requirements file, else the wheel's path or URL.
struct Location {
  std::string uri;  // a path (relative where it was given so) or a URL
  int line = 0;     // 1-based; 0: the file as a whole
};
// "pylock.toml:12" -> {pylock.toml, 12}; anything without a trailing :NUMBER is a whole file.
Location location_of(const std::string& source);

// One wheel against one image, where it was named: the run's own cell (run::Cell: the image, whether the
// wheel targets it, the report with its verdict, findings and routes), or why it could not be checked.
// Every rendering of CI's formats reads this, for check, gates, environments and a scan's report
// (cases_of_scan): one typed result, never a copy of its fields.
struct Case {
  run::Cell cell;
  Location location;
  bool checked = true;  // false: it could not be checked (its verdict is "error"; `error` says why)
  std::string error;    // why it could not be checked, or why a lock names no wheel for the image

  const std::string& image() const { return cell.image; }
  const std::string& wheel() const { return cell.report.wheel; }  // "" when the argument names none
  // The gates of its routes that are off, in route order.
  std::vector<std::pair<std::string, std::string>> gates() const;
};

// The image name of the publisher check's cases (`wheelcheck lint`, the scan's publisher findings): a wheel judged
// on its own, with no image; its SARIF run is "wheelcheck/publisher/", its verdict words clean, warnings, errors.
inline constexpr const char* k_publisher = "publisher";

// "error" for a case that could not be checked, else its verdict's name (for the publisher check: "clean",
// "warnings", "errors").
std::string verdict_word(const Case& c);
// A check's cell (check, gates, an environment's wheel); `where` is how the wheel was named.
Case case_of(const run::Cell& cell, const Location& where);
// A wheel that could not be read (verdict nullopt: not checked), or a lock entry without a wheel for the
// image (incompatible), with the reason.
Case failed_case(const std::string& image, const std::string& wheel, const Location& where,
                 std::optional<verdict::Verdict> verdict, const std::string& why);
// Every cell of a scan's report, the publisher check of each new wheel as a case of the image "publisher", and a
// wheel that could not be read as a case of each image; located by each wheel's URL.
std::vector<Case> cases_of_scan(const scan::Report& report);

// The SARIF rule a finding counts under: its kind, or for a missing symbol or version the classification
// that says more (signature-changed, cxx-abi-mismatch, version-too-new).
std::string rule_id(const verdict::Finding& f);
struct Rule {
  std::string id;
  std::string name;  // PascalCase, as SARIF's reportingDescriptor.name
  std::string short_text;
  std::string help;
};
const std::vector<Rule>& rules();  // every rule wheelcheck reports, in a stable order

// A finding in the words pip uses for people: "requires glibc 2.38+ (image: 2.36)", "requires libcudart.so.12
// (not found)", "requires NVIDIA driver 580.65.06+ (image: 535.104.05)"; verdict::summary where no such
// phrase says more.
std::string reason(const verdict::Finding& f);
// A case's headline in those words: what run::decided picks (the route that is off, else the deciding
// finding), said with verdict::requirement; "not checked: ..." and "not for this image: ..." otherwise.
std::string headline(const Case& c);

// The SARIF 2.1.0 log: a run per image (automationDetails.id "wheelcheck/IMAGE/", so that GitHub keeps an
// alert set per image), a rule per finding kind, a result per finding (level error / warning / note,
// conditions and information as notes), partial fingerprints stable across runs and versions of the wheel,
// a location per result (the lock line, else the wheel). `exit_code`: the command's, in each invocation.
nlohmann::ordered_json sarif(const std::vector<Case>& cases, int exit_code);
// JUnit XML: a testsuite per image, a testcase per wheel and one per route of it; a failure for an
// incompatible wheel and for a core route that is off, an error for an unknown verdict (the conditions) or
// a wheel that could not be checked, skipped (with the reason) for an image the wheel is not for and for an
// optional route that is off (its gates).
std::string junit(const std::vector<Case>& cases);

}  // namespace wheelcheck::ci
