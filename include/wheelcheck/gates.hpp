// Gates for setup scripts: the environment variables that turn off the routes a check found
// unavailable, merged over several wheels, in the formats a setup script consumes (sh, GitHub Actions,
// JSON). `wheelcheck gates` and `wheelcheck WHEEL --format sh|github`.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/rules.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::gates {

inline constexpr std::string_view k_gates_schema = "wheelcheck-gates/1";

struct Gate {
  std::string variable;
  std::string value;
  std::string route;  // the route that sets it
  std::string rule_set;
  std::string wheel;  // the wheel whose check found the route unavailable
};

// What a setup script asks of its gates beyond the routes that are off.
struct Options {
  // Also export the on value of every gate whose route is on (a script under `set -u` reads every variable):
  // the other of a 0/1, true/false, yes/no or on/off off value; a gate without one is said in a comment.
  bool export_on = false;
  // A route that holds only under a condition an unknown fact leaves open (a driver floor, unknown exports)
  // counts as off: a cautious CI's choice.
  bool conditions_off = false;
  // The image's accelerator toolkit (image::toolkit_kind_name: "cuda", "cann"); "" when it has none or is
  // unknown. A gate whose value is a path or a name (no on/off opposite, on_value) of a route that is only in
  // some toolkits' builds (a rule set's `toolkits`: FlagCX's NVIDIA bitcode) is set only on an image of one
  // of them: its value is that vendor's file (FLAGCX_BITCODE_PATH names NVIDIA's FlagTree backend).
  std::string image_toolkit;
};

struct Result {
  verdict::Verdict verdict = verdict::Verdict::Compatible;  // the worst of the reports
  std::string image;
  std::vector<const verdict::Report*> reports;
  std::shared_ptr<const std::vector<verdict::Report>> owned;  // the reports, when the result keeps them itself
  std::vector<bool> beside;   // parallel to reports where known: installed beside the checked wheels (--with)
  std::vector<Gate> on;       // Options::export_on: the on values of the gates of the routes a given wheel has
  std::string image_toolkit;  // Options::image_toolkit, for close and add_on_values
  // Gates of the rule sets left unset, a line each: "VAR not set: ...". Options::export_on: a route no given
  // wheel has is never switched on; fail closed: a vendor's path on an image of another vendor or an unknown one.
  std::vector<std::string> unset;
  // Options::conditions_off: "route R (optional) of W.whl is off: holds only if ...", a line per such route.
  std::vector<std::string> cautious;
  std::vector<Gate> gates;  // merged: each variable once, in the order first set
  // "W fails its own integrity check (...): do not pin it", once per problem of each wheel that fails
  // its own integrity (verdict::integrity_problems): its gates cannot be trusted.
  std::vector<std::string> integrity;
  // Set when the wheels could not be evaluated (an unreadable or missing wheel, an unknown image, a bad
  // option): every gate of the rule sets is off, WHEELCHECK_VERDICT is "error", and the sh output ends
  // with a line that makes `eval` itself fail, so that a script under `set -e` stops (fail closed).
  std::string error;
};

// The gates of a check that could not be made: every gate of every route of `sets` at its off value
// (the first value where two routes name one variable), with `error` as the reason. A route's gate whose
// value is a vendor's path (Options::image_toolkit) is set only on an image of that vendor's toolkit
// (`image_toolkit`, "" unknown); else it is left unset and said in Result::unset.
Result fail_closed(const std::vector<rules::RuleSet>& sets, const std::string& error,
                   const std::string& image_toolkit = "");

// Gates that cannot vouch for the wheels they were merged from (a wheel that fails its own RECORD or hash,
// a lock entry whose hash differs, a wheel that could not be read): `merged` failed closed. Every gate of
// `sets` is at its off value (those merged keep theirs), the reports and integrity lines stay for the
// comments, and `error` says why, so WHEELCHECK_VERDICT is "error" and `eval` of the sh output fails.
// Vendor paths as fail_closed, with merged.image_toolkit.
void close(Result& merged, const std::vector<rules::RuleSet>& sets, const std::vector<std::string>& problems);

// Merges the gates of the unavailable routes of every report. Two routes setting one variable to two
// values is an Error(BadInput) naming both routes and rule sets.
Result merge(const std::vector<verdict::Report>& reports, const Options& options = {});
// The on value of a gate whose off value is `off`: "1" for "0", "false" for "true", ...; "" when none is known.
std::string on_value(const std::string& off);
// Options::export_on: the gates of `sets` not set off in `result` whose route a given wheel has (a route of
// result.reports, available), at their on value, into result.on. A route no given wheel has is not switched
// on: its gates stay unset, each said in result.unset (wheelcheck checked nothing that would turn it on).
void add_on_values(Result& result, const std::vector<rules::RuleSet>& sets);
// Whether a gate of `route` set to `value` is withheld on an image of toolkit `image_toolkit` ("" unknown):
// the route is only in some toolkits' builds, its value is no switch (a path), and the image is not of them.
bool vendor_bound(const rules::Route& route, const std::string& value, const std::string& image_toolkit);

// `export VAR='value'` lines (single-quoted, safe to eval), a comment per disabled route saying why,
// and WHEELCHECK_VERDICT.
std::string to_sh(const Result& result);
// VAR=value lines for $GITHUB_ENV (a value with a newline uses the VAR<<DELIMITER form).
std::string github_env(const Result& result);
// ::error:: / ::warning:: / ::notice:: workflow commands, escaped as the runner expects.
std::string github_annotations(const Result& result);
// A Markdown table for $GITHUB_STEP_SUMMARY.
std::string markdown_summary(const Result& result);
nlohmann::ordered_json to_json(const Result& result);

std::string shell_single_quote(std::string_view value);

}  // namespace wheelcheck::gates
