// Variants files (PEP 825 draft): a wheel's *.dist-info/variant.json and an index's NAME-VERSION-variants.json.
//
//   {"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
//    "default-priorities": {"namespace": [...], "feature": {NS: [...]}, "property": {NS: {FEATURE: [...]}}},
//    "providers": {NS: {"requires": [...], "plugin-api": "m:o", "enable-if": "...", "optional": false,
//                       "install-time": true, "static-properties": {FEATURE: [...]}}},
//    "static-properties": {NS: {FEATURE: [...]}},
//    "variants": {LABEL: {NS: {FEATURE: [VALUE, ...]}}}}
//
// A member of the wrong JSON type is an error (the file cannot be read); what uv's preview refuses beyond
// that is an Issue with error set, what only does not hold together a warning: the schema version (uv reads
// k_installer_schema alone), priorities that are empty, repeat a namespace or miss one the variants use,
// empty or repeated values, a "null" label with properties, names and values outside the grammar
// (namespace and feature ^[a-z0-9_]+$, value ^[a-z0-9_.]+$, label ^[0-9a-z_.]+$).
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
  void issue(bool error, std::string text) { m_f.issues.push_back({error, std::move(text)}); }

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

}  // namespace

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
  if (f.schema.empty()) {
    r.issue(true,
            "no $schema: the format version is unknown (uv's preview reads " + std::string(k_installer_schema) + ")");
  } else if (f.schema_version != k_installer_schema) {
    r.issue(true,
            fmt::format("schema {} ({}): uv's preview reads only {} (PEP 825), and refuses this file; the drafts "
                        "changed between the two, so an installer's answer for it is not settled",
                        f.schema_version.empty() ? "of no version" : f.schema_version, f.schema, k_installer_schema));
  }
  // default-priorities
  if (const auto it = j.find("default-priorities"); it != j.end()) {
    const Json& dp = r.object(*it, "default-priorities");
    if (const auto ns = dp.find("namespace"); ns != dp.end())
      f.namespace_priorities = r.strings(*ns, "default-priorities.namespace");
    if (const auto fe = dp.find("feature"); fe != dp.end()) {
      for (const auto& [ns, list] : r.object(*fe, "default-priorities.feature").items()) {
        f.feature_priorities[ns] = r.strings(list, "default-priorities.feature." + ns);
      }
    }
    if (const auto pr = dp.find("property"); pr != dp.end()) {
      for (const auto& [ns, features] : r.object(*pr, "default-priorities.property").items()) {
        f.property_priorities[ns] = r.features(features, "default-priorities.property." + ns, true);
      }
    }
  }
  if (f.namespace_priorities.empty()) r.issue(true, "default-priorities.namespace is missing or empty");
  {
    std::set<std::string> seen;
    for (const auto& ns : f.namespace_priorities) {
      if (!seen.insert(ns).second) r.issue(true, "default-priorities.namespace lists '" + printable(ns) + "' twice");
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
      if (!name_ok(ns)) r.issue(true, "providers: '" + printable(ns) + "' is not a namespace name (^[a-z0-9_]+$)");
      if (p.install_time && p.plugin_api.empty() && p.static_properties.empty()) {
        r.issue(false, at + " has no plugin-api: an installer cannot ask it what the machine supports");
      }
      f.providers.emplace_back(ns, std::move(p));
    }
  }
  if (const auto it = j.find("static-properties"); it != j.end()) {
    for (const auto& [ns, features] : r.object(*it, "static-properties").items()) {
      f.static_properties[ns] = r.features(features, "static-properties." + ns, true);
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
                fmt::format("{} uses the namespace '{}', which default-priorities.namespace does not list", at, ns));
      }
      if (f.provider(ns) == nullptr)
        r.issue(true, fmt::format("{} uses the namespace '{}', which has no provider", at, ns));
    }
    if (label == "null" && !props.empty()) r.issue(true, "variants.null has properties: the null variant has none");
    f.labels.push_back(label);
    f.variants[label] = std::move(props);
  }
  return f;
}

void check_in_wheel(File& f, std::string_view label) {
  if (f.variants.size() != 1 || f.variants.count(std::string(label)) == 0) {
    f.issues.push_back(
        {true, fmt::format("a wheel's variant.json holds its own variant alone ('{}'), but it holds {}", label,
                           f.labels.empty() ? std::string("none") : "'" + join(f.labels, "', '") + "'")});
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
    d.issues.push_back({true, fmt::format("the file name's variant label is '{}', but the wheel has no "
                                          "*.dist-info/variant.json: no installer knows its properties",
                                          d.label)});
    return d;
  }
  try {
    d.file = parse(profile.variant_json, "variant.json");
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Internal) throw;
    d.issues.push_back({true, e.what()});
    return d;
  }
  if (!label) {
    d.issues.push_back({true, fmt::format("the wheel has a variant.json ({}) but its file name has no variant label: "
                                          "installers take it for a plain wheel",
                                          d.file->labels.empty() ? std::string("no variant")
                                                                 : "variant '" + join(d.file->labels, "', '") + "'")});
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
  // Priorities must be prefix-compatible (one list the start of the other).
  const auto& a = wheel.namespace_priorities;
  const auto& b = release.namespace_priorities;
  const std::size_t n = std::min(a.size(), b.size());
  if (!std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin())) {
    out.push_back(fmt::format("namespace priorities differ: the wheel's [{}], {}'s [{}]", join(a, ", "), release.what,
                              join(b, ", ")));
  }
  if (wheel.schema != release.schema) {
    out.push_back(fmt::format("the wheel's schema is {}, {}'s {}", wheel.schema, release.what, release.schema));
  }
  return out;
}

}  // namespace wheelcheck::variant
