// The .dist-info files: WHEEL and METADATA are RFC 822 style header blocks ("Key: value", continuation
// lines start with white space, a blank line ends the headers); keys are matched without case.
#include <algorithm>
#include <cctype>
#include <map>

#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::wheel {

namespace {

std::optional<std::string> first(const HeaderFields& h, const std::string& key) {
  auto it = h.find(key);
  if (it == h.end()) return std::nullopt;
  return it->second;
}

}  // namespace

HeaderFields parse_headers(std::string_view text) {
  HeaderFields out;
  HeaderFields::iterator last = out.end();
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // the body (a long description) follows
    if ((line.front() == ' ' || line.front() == '\t') && last != out.end()) {
      last->second += "\n";
      last->second += trim(line);
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // tolerate a stray line, as pip does
    last = out.emplace(ascii_lower(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1))));
  }
  return out;
}

WheelFile parse_wheel_file(std::string_view text) {
  const auto h = parse_headers(text);
  WheelFile w;
  w.wheel_version = first(h, "wheel-version").value_or("");
  w.generator = first(h, "generator").value_or("");
  if (auto p = first(h, "root-is-purelib")) w.root_is_purelib = ascii_lower(*p) == "true";
  w.build = first(h, "build");
  for (auto [it, end] = h.equal_range("tag"); it != end; ++it) w.tags.push_back(it->second);
  return w;
}

std::string metadata_issue_name(MetadataIssue::Kind kind) {
  switch (kind) {
    case MetadataIssue::Kind::AfterHeaders: return "after-headers";
    case MetadataIssue::Kind::Duplicate: return "duplicate";
  }
  return "after-headers";
}

std::string metadata_issue_text(const MetadataIssue& i) {
  const std::string lines = std::to_string(i.count) + (i.count == 1 ? " line" : " lines");
  if (i.kind == MetadataIssue::Kind::AfterHeaders) {
    return i.field + ": " + lines + " (from line " + std::to_string(i.line) + ") after the blank line " +
           std::to_string(i.end_line) +
           " that ends the headers: installers read them as the description and ignore them";
  }
  return i.field + ": written " + std::to_string(i.count) + " times (line " + std::to_string(i.line) +
         " first), a field that may appear once: installers keep one of them";
}

namespace {

// The core metadata fields (packaging.python.org, "Core metadata specifications", versions 1.0 to 2.5), lower
// case; `single`: may appear once (the multiple-use ones are Classifier, Platform, Supported-Platform,
// Requires-Dist, Provides-Extra, Project-URL, Dynamic, License-File, Import-Name, ...).
struct Field {
  const char* name;
  bool single;
};
constexpr Field k_fields[] = {
    {"metadata-version", true},
    {"name", true},
    {"version", true},
    {"dynamic", false},
    {"platform", false},
    {"supported-platform", false},
    {"summary", true},
    {"description", true},
    {"description-content-type", true},
    {"keywords", true},
    {"home-page", true},
    {"download-url", true},
    {"author", true},
    {"author-email", true},
    {"maintainer", true},
    {"maintainer-email", true},
    {"license", true},
    {"license-expression", true},
    {"license-file", false},
    {"classifier", false},
    {"requires-dist", false},
    {"requires-python", true},
    {"requires-external", false},
    {"project-url", false},
    {"provides-extra", false},
    {"provides-dist", false},
    {"obsoletes-dist", false},
    {"requires", false},
    {"provides", false},
    {"obsoletes", false},
    {"import-name", false},
    {"import-namespace", false},
};

const Field* field_named(std::string_view lower) {
  for (const auto& f : k_fields) {
    if (lower == f.name) return &f;
  }
  return nullptr;
}

// "Key: value" where the key is one token of a field name's characters.
std::optional<std::string_view> header_key(std::string_view line) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  const std::string_view key = line.substr(0, colon);
  for (char c : key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return std::nullopt;
  }
  return key;
}

// The issues of a METADATA text: known fields lost after the end of the headers (counted per field), single-use
// fields written twice. A field after the end counts when it is one of a block of header lines that starts right
// after the blank line (a blank line inside the headers cut them there), or when it is a Requires-Dist or
// Requires-Python line anywhere in the body; "Version: 2" in the middle of a description is prose.
std::vector<MetadataIssue> metadata_issues(std::string_view text) {
  std::vector<MetadataIssue> out;
  std::map<std::string, std::size_t> seen_at;  // single fields: the line of their first occurrence
  bool in_body = false;
  bool lost_block = false;  // the body so far is header lines
  std::size_t end_line = 0;
  std::size_t line_no = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!in_body && line.empty()) {
      in_body = lost_block = true;
      end_line = line_no;
      continue;
    }
    if (line.empty()) {
      lost_block = false;
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') continue;
    const auto key = header_key(line);
    const std::string lower = key ? ascii_lower(*key) : std::string();
    const Field* f = key ? field_named(lower) : nullptr;
    if (f == nullptr) {
      lost_block = false;
      continue;
    }
    if (in_body && !lost_block && lower != "requires-dist" && lower != "requires-python") continue;
    const auto kind = in_body ? MetadataIssue::Kind::AfterHeaders : MetadataIssue::Kind::Duplicate;
    if (!in_body) {
      if (!f->single) continue;
      if (seen_at.emplace(lower, line_no).second) continue;
    }
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const MetadataIssue& i) { return i.kind == kind && ascii_lower(i.field) == lower; });
    if (it != out.end()) {
      ++it->count;
      continue;
    }
    MetadataIssue i;
    i.kind = kind;
    i.field = std::string(*key);
    i.line = in_body ? line_no : seen_at[lower];
    i.end_line = in_body ? end_line : 0;
    i.count = in_body ? 1 : 2;
    out.push_back(std::move(i));
  }
  return out;
}

}  // namespace

bool metadata_field_known(std::string_view lower_name) {
  return field_named(lower_name) != nullptr;
}

bool metadata_field_single(std::string_view lower_name) {
  const Field* f = field_named(lower_name);
  return f != nullptr && f->single;
}

Metadata parse_metadata(std::string_view text) {
  const auto h = parse_headers(text);
  Metadata m;
  m.issues = metadata_issues(text);
  m.metadata_version = first(h, "metadata-version").value_or("");
  m.name = first(h, "name").value_or("");
  m.version = first(h, "version").value_or("");
  m.requires_python = first(h, "requires-python");
  for (auto [it, end] = h.equal_range("requires-dist"); it != end; ++it) m.requires_dist.push_back(it->second);
  return m;
}

std::vector<RecordEntry> parse_record(std::string_view text) {
  std::vector<RecordEntry> out;
  std::size_t pos = 0;
  std::size_t line_no = 0;
  while (pos < text.size()) {
    ++line_no;
    std::vector<std::string> fields(1);
    bool quoted = false;
    bool any = false;
    for (; pos < text.size(); ++pos) {
      const char c = text[pos];
      if (quoted) {
        if (c == '"') {
          if (pos + 1 < text.size() && text[pos + 1] == '"') {
            fields.back().push_back('"');
            ++pos;
          } else {
            quoted = false;
          }
        } else {
          fields.back().push_back(c);
        }
        continue;
      }
      if (c == '\n') {
        ++pos;
        break;
      }
      if (c == '\r') continue;
      any = true;
      if (c == '"')
        quoted = true;
      else if (c == ',')
        fields.emplace_back();
      else
        fields.back().push_back(c);
    }
    if (quoted) throw bad_input("RECORD line " + std::to_string(line_no) + ": unterminated quoted field");
    if (!any && fields.size() == 1 && fields[0].empty()) continue;  // blank line
    if (fields.size() != 3) {
      throw bad_input("RECORD line " + std::to_string(line_no) + ": " + std::to_string(fields.size()) +
                      " fields, expected 3 (path,hash,size)");
    }
    RecordEntry e;
    e.path = fields[0];
    if (!fields[1].empty()) {
      const auto eq = fields[1].find('=');
      if (eq == std::string::npos) {
        throw bad_input("RECORD line " + std::to_string(line_no) + ": hash '" + fields[1] +
                        "' is not ALGORITHM=DIGEST");
      }
      e.algorithm = ascii_lower(fields[1].substr(0, eq));
      e.digest = fields[1].substr(eq + 1);
    }
    if (!fields[2].empty()) {
      std::uint64_t v = 0;
      for (char c : fields[2]) {
        if (!std::isdigit(static_cast<unsigned char>(c)) || v > (~std::uint64_t{0} - 9) / 10) {
          throw bad_input("RECORD line " + std::to_string(line_no) + ": size '" + fields[2] + "' is not a number");
        }
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
      }
      e.size = v;
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace wheelcheck::wheel
