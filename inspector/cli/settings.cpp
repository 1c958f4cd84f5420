// The settings file: wheelcheck.toml (its top level), or pyproject.toml's [tool.wheelcheck], found in the
// working folder or the nearest folder above it that has one (wheelcheck.toml first in a folder), or named
// with --config; --no-config reads none. It gives what a project passes every time: images, assumptions,
// the rule set, the read mode, the format, the files to write, and accepted conditions, each with a reason
// and an expiry date. The command line overrides it, setting by setting.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>

#include "commands.hpp"
#include "wheelcheck/container.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/toml.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cli {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace settings_detail {

const std::vector<std::string> k_keys = {"images", "assume", "rules",     "verify",
                                         "format", "output", "exit-zero", "accept"};
const std::vector<std::string> k_accept_keys = {"rule", "wheel", "image", "match", "reason", "expires"};

// Today in UTC, as YYYY-MM-DD.
std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

bool is_date(const std::string& s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  const int month = std::stoi(s.substr(5, 2)), day = std::stoi(s.substr(8, 2));
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

class Reader {
 public:
  Reader(const std::string& path, const toml_doc::Document& doc, std::string prefix)
      : m_path(path), m_folder(fs::path(path).parent_path().string()), m_doc(doc), m_prefix(std::move(prefix)) {}

  std::string at(const std::string& pointer) const {
    const auto it = m_doc.lines.find(m_prefix + pointer);
    return it != m_doc.lines.end() && it->second > 0 ? m_path + ":" + std::to_string(it->second) : m_path;
  }

  [[noreturn]] void fail(const std::string& pointer, const std::string& what) const {
    throw bad_input(at(pointer) + ": " + what);
  }

  std::vector<std::string> string_list(const json& v, const std::string& key) const {
    std::vector<std::string> out;
    if (v.is_string()) return {v.get<std::string>()};
    if (!v.is_array()) fail("/" + key, key + " must be a string or an array of strings");
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) fail("/" + key + "/" + std::to_string(i), key + " must hold strings");
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }

  std::string string_of(const json& v, const std::string& pointer, const std::string& what) const {
    if (!v.is_string()) fail(pointer, what + " must be a string");
    return v.get<std::string>();
  }

  // A path written in the file: relative to the file's folder.
  std::string path_of(const std::string& p) const {
    if (p.empty() || p[0] == '/' || net::is_url(p)) return p;
    return (fs::path(m_folder.empty() ? "." : m_folder) / p).lexically_normal().string();
  }

  // An --image value: a path (a description .json, a root folder) is relative to the file's folder; so is the
  // file or folder of a local container image (oci:DIR:TAG, oci-archive:, docker-archive:), while a
  // registry's reference (docker://) is no path at all.
  std::string image_of(const std::string& v) const {
    if (container::is_reference(v)) {
      const auto ref = container::parse_reference(v);
      if (ref.transport == container::Transport::Registry) return v;
      const std::string transport = v.substr(0, v.find(':') + 1);
      return transport + path_of(ref.path) + (ref.tag.empty() ? "" : ":" + ref.tag);
    }
    const bool looks_like_path = v.find('/') != std::string::npos || v.ends_with(".json");
    return looks_like_path ? path_of(v) : v;
  }

  Settings read(const json& table) {
    Settings s;
    s.file = m_path;
    if (!table.is_object()) fail("", "the settings must be a table");
    for (const auto& [key, value] : table.items()) {
      if (std::find(k_keys.begin(), k_keys.end(), key) == k_keys.end()) {
        const auto near = closest(key, k_keys);
        fail("/" + key, "unknown setting '" + key + "'" + (near ? " (did you mean '" + *near + "'?)" : "") +
                            "; known: " + join(k_keys, ", "));
      }
      const std::string where = at("/" + key);
      if (key == "images") {
        std::vector<std::string> images;
        for (const auto& i : string_list(value, key)) images.push_back(image_of(i));
        s.images = {images, where};
      } else if (key == "assume") {
        const auto list = string_list(value, key);
        for (const auto& a : list) {
          if (a.find('=') == std::string::npos) fail("/" + key, "assume: '" + a + "' is not FACT=VALUE");
        }
        s.assume = {list, where};
      } else if (key == "rules") {
        const std::string r = string_of(value, "/rules", "rules");
        s.rules = {{r.find('/') != std::string::npos || r.ends_with(".json") ? path_of(r) : r}, where};
      } else if (key == "verify") {
        const std::string v = string_of(value, "/verify", "verify");
        if (v != "auto" && v != "full" && v != "headers") fail("/verify", "verify must be auto, full or headers");
        s.verify = {{v}, where};
      } else if (key == "format") {
        const std::string f = string_of(value, "/format", "format");
        const std::vector<std::string> formats = output::printed_by(output::k_check);
        if (std::find(formats.begin(), formats.end(), f) == formats.end())
          fail("/format", "format must be one of " + join(formats, ", "));
        s.format = {{f}, where};
      } else if (key == "exit-zero") {
        if (!value.is_boolean()) fail("/exit-zero", "exit-zero must be true or false");
        s.exit_zero = {{value.get<bool>() ? "true" : "false"}, where};
      } else if (key == "output") {
        if (!value.is_object()) fail("/output", "output must be a table: FORMAT = \"PATH\"");
        std::vector<std::string> outputs;
        for (const auto& [format, path] : value.items()) {
          const std::vector<std::string> known = output::written_by(output::k_check);
          if (std::find(known.begin(), known.end(), format) == known.end())
            fail("/output/" + format, "output: unknown format '" + format + "' (" + join(known, ", ") + ")");
          outputs.push_back(format + "=" + path_of(string_of(path, "/output/" + format, "output." + format)));
        }
        s.outputs = {outputs, where};
      } else if (key == "accept") {
        read_accept(value, s);
      }
    }
    return s;
  }

 private:
  void read_accept(const json& value, Settings& s) {
    if (!value.is_array()) fail("/accept", "accept must be an array of tables ([[accept]])");
    const std::string now = today();
    for (std::size_t i = 0; i < value.size(); ++i) {
      const std::string p = "/accept/" + std::to_string(i);
      const json& t = value[i];
      if (!t.is_object()) fail(p, "each [[accept]] must be a table");
      verdict::Acceptance a;
      a.source = at(p);
      for (const auto& [key, v] : t.items()) {
        if (std::find(k_accept_keys.begin(), k_accept_keys.end(), key) == k_accept_keys.end()) {
          const auto near = closest(key, k_accept_keys);
          fail(p + "/" + key, "[[accept]]: unknown key '" + key + "'" +
                                  (near ? " (did you mean '" + *near + "'?)" : "") +
                                  "; known: " + join(k_accept_keys, ", "));
        }
        const std::string text = string_of(v, p + "/" + key, "[[accept]] " + key);
        if (key == "rule") a.rule = text;
        if (key == "wheel") a.wheel = text;
        if (key == "image") a.image = text;
        if (key == "match") a.match = text;
        if (key == "reason") a.reason = text;
        if (key == "expires") a.expires = text.substr(0, 10);
      }
      if (trim(a.reason).empty()) fail(p, "[[accept]] needs a reason: why the condition is accepted");
      if (a.expires.empty())
        fail(p, "[[accept]] needs expires = YYYY-MM-DD: an accepted condition cannot stay accepted forever");
      if (!is_date(a.expires)) fail(p + "/expires", "[[accept]] expires must be a date (YYYY-MM-DD)");
      if (a.rule.empty() && a.match.empty())
        fail(p, "[[accept]] needs a rule (a finding kind such as driver) or a match: it would accept every condition");
      if (!a.rule.empty()) check_accept_rule(a.rule, p + "/rule");
      (a.expires < now ? s.expired : s.accept).push_back(std::move(a));
    }
  }

  // An accepted rule names a finding kind or a classification that can be a condition: a typo would accept
  // nothing, and an error (missing-version) is never a condition to accept. A missing library is a condition
  // only where the image does not state it, and that is for stating (--assume library=NAME), not accepting.
  void check_accept_rule(const std::string& rule, const std::string& p) const {
    using verdict::Why;
    std::vector<std::string> known;
    for (const auto& row : verdict::kind_texts()) known.emplace_back(row.name);  // the one row per kind
    for (Why w : {Why::LibraryMissing, Why::SignatureChanged, Why::CxxAbiMismatch, Why::VersionTooNew, Why::Absent,
                  Why::UnknownExports})
      known.push_back(verdict::why_name(w));
    if (std::find(known.begin(), known.end(), rule) == known.end()) {
      const auto near = closest(rule, known);
      fail(p, "[[accept]]: unknown rule '" + rule + "'" + (near ? " (did you mean '" + *near + "'?)" : "") +
                  "; a finding kind or classification of docs/verdict.md (driver, unknown-exports, ...)");
    }
    if (rule == "missing-library") {
      fail(p,
           "[[accept]]: rule 'missing-library' is a condition only where the image does not state the library: "
           "state it instead (--assume library=NAME or library=!NAME, a layer that lists it, or a probe of the image)");
    }
    static const std::vector<std::string> k_never_conditions = {
        "missing-version",   "archive",          "record",          "unreadable-member",
        "tag-claim",         "requires-dist",    "driver-too-old",  "library-missing",
        "signature-changed", "cxx-abi-mismatch", "version-too-new", "absent"};
    if (std::find(k_never_conditions.begin(), k_never_conditions.end(), rule) != k_never_conditions.end()) {
      fail(p, "[[accept]]: rule '" + rule +
                  "' is never a condition (an error or a warning, not an unknown fact): only conditions can be "
                  "accepted (driver, gpu-coverage, unknown-exports, ...)");
    }
  }

  std::string m_path, m_folder;
  const toml_doc::Document& m_doc;
  std::string m_prefix;
};

// The settings table of a file, and the JSON pointer prefix of its lines; nullopt for a pyproject.toml
// without [tool.wheelcheck].
std::optional<std::pair<json, std::string>> table_of(const std::string& path, const toml_doc::Document& doc) {
  if (fs::path(path).filename() != "pyproject.toml") return std::pair<json, std::string>{doc.root, ""};
  if (!doc.root.contains("tool") || !doc.root["tool"].is_object() || !doc.root["tool"].contains("wheelcheck"))
    return std::nullopt;
  return std::pair<json, std::string>{doc.root["tool"]["wheelcheck"], "/tool/wheelcheck"};
}

std::optional<Settings> read_settings(const std::string& path) {
  const std::string text = read_text_file(path, std::uint64_t{4} << 20);
  const toml_doc::Document doc = toml_doc::parse(text, path);
  auto table = table_of(path, doc);
  if (!table) return std::nullopt;
  return Reader(path, doc, table->second).read(table->first);
}

}  // namespace settings_detail

Settings load_settings(const std::string& explicit_path, bool no_config) {
  if (no_config) {
    if (!explicit_path.empty()) throw usage_error("--config and --no-config conflict");
    return {};
  }
  if (!explicit_path.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(explicit_path, ec)) throw usage_error("--config " + explicit_path + ": no such file");
    auto s = settings_detail::read_settings(explicit_path);
    if (!s) throw bad_input(explicit_path + ": no [tool.wheelcheck] table");
    s->found = "--config";
    return *s;
  }
  std::error_code ec;
  fs::path dir = fs::current_path(ec);
  if (ec) return {};
  for (int depth = 0; depth < 64; ++depth) {
    for (const char* name : {"wheelcheck.toml", "pyproject.toml"}) {
      const fs::path candidate = dir / name;
      if (!fs::is_regular_file(candidate, ec)) continue;
      if (auto s = settings_detail::read_settings(candidate.string())) {
        s->found = "found from the working folder";
        return *s;
      }
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  return {};
}

void warn_expired(const Settings& s) {
  for (const auto& a : s.expired) {
    warn(fmt::format("{}: the accepted condition ({}{}) expired on {}: it counts again ({})", a.source,
                     a.rule.empty() ? "match '" + a.match + "'" : a.rule, a.wheel.empty() ? "" : " of " + a.wheel,
                     a.expires, a.reason));
  }
}

void add_settings_options(CLI::App& app, std::string& config, bool& no_config) {
  app.add_option("--config", config,
                 "The settings file (wheelcheck.toml, or a pyproject.toml with [tool.wheelcheck]); default: the one "
                 "in the working folder or the nearest folder above it (`wheelcheck config` shows what is used)");
  app.add_flag("--no-config", no_config, "Read no settings file");
}

}  // namespace wheelcheck::cli
