// Variants files (PEP 825 draft): a wheel's *.dist-info/variant.json and an index's NAME-VERSION-variants.json.
//
//   {"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
//    "default-priorities": {"namespace": [...], "feature": {NS: [...]}, "property": {NS: {FEATURE: [...]}}},
//    "providers": {NS: {"requires": [...], "plugin-api": "m:o", "enable-if": "...", "optional": false,
//                       "install-time": true, "static-properties": {FEATURE: [...]}}},
//    "static-properties": {NS: {FEATURE: [...]}},
//    "variants": {LABEL: {NS: {FEATURE: [VALUE, ...]}}}}
//
// A member of the wrong JSON type is an error (the file cannot be read). Beyond that a file is judged by the
// dialect its $schema declares (Dialect, ../shared/reference/variants.md's update of 2026-12-06):
//   every dialect  priorities that are empty, repeat a namespace or miss one the variants use, empty or
//                  repeated values, a "null" label with properties, names and values outside the grammar
//                  (namespace and feature ^[a-z0-9_]+$, value ^[a-z0-9_.]+$, label ^[0-9a-z_.]+$): errors;
//   v0.0.3         (wheelnext/variantlib, PyTorch 2.10) feature and property overrides read and applied; a
//                  namespace without a provider, a provider default-priorities does not list: errors; the
//                  dialect itself a warning (uv's preview refuses it);
//   v0.1.1         (PEP 825, uv's preview) feature or property overrides: errors, and not applied; providers,
//                  static-properties, other members: warnings (outside the schema; uv's preview reads its own
//                  extension); a $schema other than uv's exact URL: an error;
//   unknown        (no $schema, another version) an error naming who reads what; overrides not applied.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "wheelcheck/error.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/variant.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::variant {

namespace {

using Json = nlohmann::ordered_json;

bool name_ok(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

bool value_ok(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
}

class Reader {
 public:
  Reader(File& f) : m_f(f) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw bad_input(fmt::format("{}: {} {}", m_f.what, where, what));
  }
  void issue(bool error, std::string text, Issue::Topic topic = Issue::Topic::Variants) {
    m_f.issues.push_back({error, std::move(text), topic});
  }

  const Json& object(const Json& j, const std::string& where) const {
    if (!j.is_object()) fail(where, "is not a JSON object");
    return j;
  }
  std::string string(const Json& j, const std::string& where) const {
    if (!j.is_string()) fail(where, "is not a string");
    return j.get<std::string>();
  }
  std::vector<std::string> strings(const Json& j, const std::string& where) const {
    if (!j.is_array()) fail(where, "is not a list");
    std::vector<std::string> out;
    for (const auto& v : j) out.push_back(string(v, where + " entry"));
    return out;
  }
  // A list of values: none empty, none repeated, each in the value grammar.
  Values values(const Json& j, const std::string& where, bool check_grammar) {
    Values out = strings(j, where);
    if (out.empty()) issue(true, where + " is an empty list");
    std::set<std::string> seen;
    for (const auto& v : out) {
      if (!seen.insert(v).second) issue(true, fmt::format("{} lists '{}' twice", where, printable(v)));
      if (check_grammar && !value_ok(v)) {
        issue(true, fmt::format("{}: '{}' is not a property value (^[a-z0-9_.]+$)", where, printable(v)));
      }
    }
    return out;
  }
  Features features(const Json& j, const std::string& where, bool check_grammar) {
    Features out;
    for (const auto& [feature, list] : object(j, where).items()) {
      const std::string at = where + " :: " + feature;
      if (!name_ok(feature))
        issue(true, fmt::format("{}: '{}' is not a feature name (^[a-z0-9_]+$)", where, printable(feature)));
      out[feature] = values(list, at, check_grammar);
    }
    return out;
  }

 private:
  File& m_f;
};

std::string schema_version_of(std::string_view url) {
  // ".../v0.0.3.json" -> "v0.0.3"
  const auto slash = url.find_last_of('/');
  std::string_view last = slash == std::string_view::npos ? url : url.substr(slash + 1);
  if (last.size() > 5 && last.substr(last.size() - 5) == ".json") last.remove_suffix(5);
  if (last.size() < 2 || last[0] != 'v' || !(last[1] >= '0' && last[1] <= '9')) return "";
  return std::string(last);
}

// "v0.0.3" -> V003; "v0.1.1" -> V011; anything else (no version, v0.1.0, v1.0.0) -> Unknown.
Dialect dialect_of(std::string_view version) {
  if (version == "v0.0.3") return Dialect::V003;
  if (version == "v0.1.1") return Dialect::V011;
  return Dialect::Unknown;
}

// The dialect a file declares, and who reads it: a warning where one installer reads it and another does not,
// an error where no installer listed reads it (or none would take its $schema as written).
void schema_issues(Reader& r, const File& f) {
  using Topic = Issue::Topic;
  switch (f.dialect) {
    case Dialect::V011:
      if (f.schema != k_v011_schema) {
        r.issue(true,
                fmt::format("$schema {} says PEP 825 v0.1.1, but uv's preview takes $schema equal to {} alone and "
                            "refuses this file; it is judged here by v0.1.1's rules",
                            f.schema, k_v011_schema),
                Topic::Schema);
      }
      return;
    case Dialect::V003:
      r.issue(false,
              fmt::format("schema v0.0.3 ({}): wheelnext's dialect, as PyTorch 2.10 publishes it; {}. It is judged "
                          "here by v0.0.3's rules",
                          f.schema, installers_text(Dialect::V003)),
              Topic::Schema);
      return;
    case Dialect::Unknown: break;
  }
  std::string why;
  if (f.schema.empty()) {
    why = "no $schema: the file declares no dialect";
  } else if (f.schema_version.empty()) {
    why = fmt::format("$schema {} names no version: the file declares no dialect", f.schema);
  } else if (f.schema_version.rfind("v0.", 0) != 0) {
    why = fmt::format("schema {} ({}): a major version no installer knows, and semver says to reject an unknown major",
                      f.schema_version, f.schema);
  } else {
    why = fmt::format(
        "schema {} ({}): a 0.x version other than the two in use, and 0.x versions promise nothing "
        "across versions",
        f.schema_version, f.schema);
  }
  r.issue(true,
          fmt::format("{}. No installer listed reads it: uv's preview (0.13.x) reads PEP 825 v0.1.1 ({}) alone, "
                      "wheelnext/variantlib is frozen at v0.0.3 ({}), pip reads no variants. It is judged here by "
                      "what both dialects share; its priority overrides are not applied and its providers not judged",
                      why, k_v011_schema, k_v003_schema),
          Topic::Schema);
}

}  // namespace

std::string dialect_text(Dialect d) {
  switch (d) {
    case Dialect::V003: return "wheelnext's v0.0.3";
    case Dialect::V011: return "PEP 825 v0.1.1";
    case Dialect::Unknown: break;
  }
  return "an unknown dialect";
}

std::string readers_text(Dialect d) {
  switch (d) {
    case Dialect::V003: return "wheelnext/variantlib";
    case Dialect::V011: return "uv 0.13.x's preview";
    case Dialect::Unknown: break;
  }
  return "";
}

std::string installers_text(Dialect d) {
  switch (d) {
    case Dialect::V003:
      return "read by wheelnext/variantlib (frozen at v0.0.3); uv's preview (0.13.x) reads PEP 825 v0.1.1 alone and "
             "refuses it; pip reads no variants";
    case Dialect::V011:
      return "read by uv's preview (0.13.x); wheelnext/variantlib, frozen at v0.0.3, does not read it; pip reads no "
             "variants";
    case Dialect::Unknown: break;
  }
  return "read by no installer listed (uv's preview reads PEP 825 v0.1.1, wheelnext/variantlib v0.0.3); pip reads "
         "no variants";
}

const Provider* File::provider(std::string_view ns) const {
  for (const auto& [name, p] : providers) {
    if (name == ns) return &p;
  }
  return nullptr;
}

const Features* File::static_of(std::string_view ns) const {
  if (const auto it = static_properties.find(std::string(ns)); it != static_properties.end()) return &it->second;
  const Provider* p = provider(ns);
  if (p != nullptr && !p->static_properties.empty()) return &p->static_properties;
  return nullptr;
}

bool File::has_errors() const {
  return std::any_of(issues.begin(), issues.end(), [](const Issue& i) { return i.error; });
}

std::optional<std::pair<std::string, std::string>> release_file_name(std::string_view filename) {
  constexpr std::string_view k_suffix = "-variants.json";
  if (filename.size() <= k_suffix.size() || !filename.ends_with(k_suffix)) return std::nullopt;
  const std::string_view stem = filename.substr(0, filename.size() - k_suffix.size());
  const auto dash = stem.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == stem.size()) return std::nullopt;
  return std::pair{std::string(stem.substr(0, dash)), std::string(stem.substr(dash + 1))};
}

std::string property_text(std::string_view ns, std::string_view feature, std::string_view value) {
  return fmt::format("{} :: {} :: {}", ns, feature, value);
}

std::string properties_text(const Properties& properties) {
  std::vector<std::string> parts;
  for (const auto& [ns, features] : properties) {
    for (const auto& [feature, values] : features)
      parts.push_back(fmt::format("{} :: {} :: {}", ns, feature, join(values, ", ")));
  }
  return parts.empty() ? std::string("no properties") : join(parts, "; ");
}

File parse(std::string_view text, const std::string& what) {
  File f;
  f.what = what;
  if (text.size() > k_max_file_size) {
    throw bad_input(
        fmt::format("{}: {} bytes, more than a variants file's limit of {}", what, text.size(), k_max_file_size));
  }
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) throw bad_input(what + ": not JSON");
  Reader r(f);
  r.object(j, "the file");
  if (const auto it = j.find("$schema"); it != j.end()) {
    f.schema = r.string(*it, "$schema");
    f.schema_version = schema_version_of(f.schema);
  }
  f.dialect = dialect_of(f.schema_version);
  schema_issues(r, f);
  const bool v011 = f.dialect == Dialect::V011;
  const bool v003 = f.dialect == Dialect::V003;
  // Members a dialect does not have.
  for (const auto& [key, value] : j.items()) {
    if (key == "$schema" || key == "default-priorities" || key == "variants") continue;
    if (key == "providers" || key == "static-properties") {
      if (v011) {
        r.issue(false,
                fmt::format("{} is no part of PEP 825 v0.1.1 (its schema allows $schema, default-priorities and "
                            "variants alone; providers are PEP 850's draft): a validator of the schema refuses the "
                            "file, and uv's preview reads it as its own extension",
                            key),
                Issue::Topic::Providers);
      }
      continue;
    }
    if (v011) {
      r.issue(false,
              fmt::format("'{}' is no member of a PEP 825 v0.1.1 file (additionalProperties: false): a validator of "
                          "the schema refuses the file; uv's preview ignores it",
                          printable(key)),
              Issue::Topic::Schema);
    }
  }
  // default-priorities: namespace in every dialect; feature and property overrides in v0.0.3 alone.
  const auto dpit = j.find("default-priorities");
  if (dpit == j.end() && v011) {
    r.issue(true, "default-priorities is missing: PEP 825 v0.1.1 requires it", Issue::Topic::Priorities);
  }
  if (dpit != j.end()) {
    const Json& dp = r.object(*dpit, "default-priorities");
    if (const auto ns = dp.find("namespace"); ns != dp.end())
      f.namespace_priorities = r.strings(*ns, "default-priorities.namespace");
    for (const auto& [key, value] : dp.items()) {
      if (key == "namespace") continue;
      const bool override_key = key == "feature" || key == "property";
      if (v011) {
        r.issue(true,
                override_key
                    ? fmt::format("default-priorities.{} in a PEP 825 v0.1.1 file: v0.1.1 removed the feature and "
                                  "property overrides (default-priorities holds namespace alone, "
                                  "additionalProperties: false), so the file is invalid, and uv's preview orders "
                                  "its variants by namespace alone",
                                  key)
                    : fmt::format("default-priorities.{} is no member of a PEP 825 v0.1.1 file (it holds namespace "
                                  "alone): the file is invalid",
                                  printable(key)),
                Issue::Topic::Priorities);
        continue;
      }
      if (!override_key) continue;
      if (!v003) {
        r.issue(false,
                fmt::format("default-priorities.{}: an override of wheelnext's v0.0.3, which PEP 825 v0.1.1 "
                            "removed; the file declares neither, so it is not applied here",
                            key),
                Issue::Topic::Priorities);
        continue;
      }
      if (key == "feature") {
        for (const auto& [ns, list] : r.object(value, "default-priorities.feature").items()) {
          f.feature_priorities[ns] = r.strings(list, "default-priorities.feature." + ns);
        }
      } else {
        for (const auto& [ns, features] : r.object(value, "default-priorities.property").items()) {
          f.property_priorities[ns] = r.features(features, "default-priorities.property." + ns, true);
        }
      }
    }
  }
  if (f.namespace_priorities.empty()) {
    r.issue(true, "default-priorities.namespace is missing or empty", Issue::Topic::Priorities);
  }
  {
    std::set<std::string> seen;
    for (const auto& ns : f.namespace_priorities) {
      if (!seen.insert(ns).second) {
        r.issue(true, "default-priorities.namespace lists '" + printable(ns) + "' twice", Issue::Topic::Priorities);
      }
      if (!name_ok(ns)) {
        r.issue(true, "default-priorities.namespace: '" + printable(ns) + "' is not a namespace name (^[a-z0-9_]+$)",
                Issue::Topic::Priorities);
      }
    }
  }
  // providers
  if (const auto it = j.find("providers"); it != j.end()) {
    for (const auto& [ns, pj] : r.object(*it, "providers").items()) {
      const std::string at = "providers." + ns;
      r.object(pj, at);
      Provider p;
      if (const auto q = pj.find("requires"); q != pj.end()) p.requires_ = r.strings(*q, at + ".requires");
      if (const auto q = pj.find("plugin-api"); q != pj.end()) p.plugin_api = r.string(*q, at + ".plugin-api");
      if (const auto q = pj.find("enable-if"); q != pj.end()) p.enable_if = r.string(*q, at + ".enable-if");
      if (const auto q = pj.find("optional"); q != pj.end()) {
        if (!q->is_boolean()) r.fail(at + ".optional", "is not true or false");
        p.optional = q->get<bool>();
      }
      if (const auto q = pj.find("install-time"); q != pj.end()) {
        if (!q->is_boolean()) r.fail(at + ".install-time", "is not true or false");
        p.install_time = q->get<bool>();
      }
      if (const auto q = pj.find("static-properties"); q != pj.end()) {
        p.static_properties = r.features(*q, at + ".static-properties", true);
      }
      if (!name_ok(ns)) {
        r.issue(true, "providers: '" + printable(ns) + "' is not a namespace name (^[a-z0-9_]+$)",
                Issue::Topic::Providers);
      }
      if (p.install_time && p.plugin_api.empty() && p.static_properties.empty()) {
        r.issue(false, at + " has no plugin-api: an installer cannot ask it what the machine supports",
                Issue::Topic::Providers);
      }
      f.providers.emplace_back(ns, std::move(p));
    }
  }
  if (const auto it = j.find("static-properties"); it != j.end()) {
    for (const auto& [ns, features] : r.object(*it, "static-properties").items()) {
      f.static_properties[ns] = r.features(features, "static-properties." + ns, true);
    }
  }
  // v0.0.3: wheelnext/variantlib takes a file whose default-priorities.namespace and providers name the same
  // namespaces.
  if (v003) {
    for (const auto& [ns, p] : f.providers) {
      if (std::find(f.namespace_priorities.begin(), f.namespace_priorities.end(), ns) == f.namespace_priorities.end()) {
        r.issue(true,
                fmt::format("providers.{} names a namespace default-priorities.namespace does not list: in v0.0.3 "
                            "both name the same namespaces (wheelnext/variantlib refuses the file)",
                            ns),
                Issue::Topic::Providers);
      }
    }
  }
  // variants
  const auto vit = j.find("variants");
  if (vit == j.end()) r.fail("variants", "is missing");
  for (const auto& [label, vj] : r.object(*vit, "variants").items()) {
    const std::string at = "variants." + label;
    if (!wheel::valid_variant_label(label)) {
      r.issue(true, fmt::format("variants: '{}' is not a variant label (^[0-9a-z_.]+$)", printable(label)));
    }
    Properties props;
    for (const auto& [ns, features] : r.object(vj, at).items()) {
      if (!name_ok(ns))
        r.issue(true, fmt::format("{}: '{}' is not a namespace name (^[a-z0-9_]+$)", at, printable(ns)));
      props[ns] = r.features(features, at + " :: " + ns, true);
      if (std::find(f.namespace_priorities.begin(), f.namespace_priorities.end(), ns) == f.namespace_priorities.end()) {
        r.issue(true,
                fmt::format("{} uses the namespace '{}', which default-priorities.namespace does not list", at, ns),
                Issue::Topic::Priorities);
      }
      // A provider per namespace is v0.0.3's rule; PEP 825 v0.1.1 has no providers (PEP 850 has them).
      if (v003 && f.provider(ns) == nullptr) {
        r.issue(true,
                fmt::format("{} uses the namespace '{}', which has no provider: in v0.0.3 every namespace has one "
                            "(wheelnext/variantlib refuses the file)",
                            at, ns),
                Issue::Topic::Providers);
      }
    }
    if (label == "null" && !props.empty()) r.issue(true, "variants.null has properties: the null variant has none");
    f.labels.push_back(label);
    f.variants[label] = std::move(props);
  }
  return f;
}

void check_in_wheel(File& f, std::string_view label) {
  if (f.variants.size() != 1 || f.variants.count(std::string(label)) == 0) {
    f.issues.push_back({true,
                        fmt::format("a wheel's variant.json holds its own variant alone ('{}'), but it holds {}", label,
                                    f.labels.empty() ? std::string("none") : "'" + join(f.labels, "', '") + "'"),
                        Issue::Topic::Wheel});
  }
}

const Properties* Declared::properties() const {
  if (!file) return nullptr;
  const auto it = file->variants.find(label.empty() ? std::string("null") : label);
  return it == file->variants.end() ? nullptr : &it->second;
}

std::optional<Declared> declared(const WheelProfile& profile) {
  const auto& label = profile.filename.variant;
  if (!label && profile.variant_json.empty()) return std::nullopt;
  Declared d;
  d.label = label.value_or("");
  if (profile.variant_json.empty()) {
    d.issues.push_back({true,
                        fmt::format("the file name's variant label is '{}', but the wheel has no "
                                    "*.dist-info/variant.json: no installer knows its properties",
                                    d.label),
                        Issue::Topic::Wheel});
    return d;
  }
  try {
    d.file = parse(profile.variant_json, "variant.json");
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Internal) throw;
    d.issues.push_back({true, e.what(), Issue::Topic::Wheel});
    return d;
  }
  if (!label) {
    d.issues.push_back({true,
                        fmt::format("the wheel has a variant.json ({}) but its file name has no variant label: "
                                    "installers take it for a plain wheel",
                                    d.file->labels.empty() ? std::string("no variant")
                                                           : "variant '" + join(d.file->labels, "', '") + "'"),
                        Issue::Topic::Wheel});
  } else {
    check_in_wheel(*d.file, *label);
  }
  for (const auto& i : d.file->issues) d.issues.push_back(i);
  return d;
}

std::vector<std::string> compare(const File& wheel, const File& release, std::string_view label) {
  std::vector<std::string> out;
  const auto w = wheel.variants.find(std::string(label));
  const auto r = release.variants.find(std::string(label));
  if (r == release.variants.end()) {
    out.push_back(
        fmt::format("{} has no variant '{}': an installer does not know this file's properties", release.what, label));
  } else if (w != wheel.variants.end() && w->second != r->second) {
    out.push_back(fmt::format("the wheel's variant.json says {} for '{}', {} says {}", properties_text(w->second),
                              label, release.what, properties_text(r->second)));
  }
  // Priorities: wheelnext/variantlib (v0.0.3) merges files whose priorities are equal, overrides included;
  // uv's preview (v0.1.1) files whose namespace priorities are prefix-compatible (one list the start of the
  // other).
  const auto& a = wheel.namespace_priorities;
  const auto& b = release.namespace_priorities;
  const std::size_t n = std::min(a.size(), b.size());
  if (release.dialect == Dialect::V003) {
    if (a != b || wheel.feature_priorities != release.feature_priorities ||
        wheel.property_priorities != release.property_priorities) {
      out.push_back(
          fmt::format("default priorities differ: the wheel's namespaces [{}], {}'s [{}] (or their feature "
                      "and property overrides); in v0.0.3 wheelnext/variantlib merges equal ones alone",
                      join(a, ", "), release.what, join(b, ", ")));
    }
  } else if (!std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin())) {
    out.push_back(
        fmt::format("namespace priorities differ: the wheel's [{}], {}'s [{}], neither the start of the "
                    "other",
                    join(a, ", "), release.what, join(b, ", ")));
  }
  if (wheel.schema != release.schema) {
    out.push_back(fmt::format("the wheel's schema is {}, {}'s {}", wheel.schema, release.what, release.schema));
  }
  return out;
}

}  // namespace wheelcheck::variant
