// The .dist-info files: WHEEL and METADATA are RFC 822 style header blocks ("Key: value", continuation
// lines start with white space, a blank line ends the headers); keys are matched without case.
#include <algorithm>
#include <cctype>

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

Metadata parse_metadata(std::string_view text) {
  const auto h = parse_headers(text);
  Metadata m;
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
