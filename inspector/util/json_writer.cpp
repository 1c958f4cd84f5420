#include <charconv>

#include "wheelcheck/util.hpp"

namespace wheelcheck {

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char k_hex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t run = 0;  // copy runs of plain bytes at once
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) continue;
    out.append(s.substr(run, i - run));
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(k_hex[c >> 4]);
          out.push_back(k_hex[c & 15]);
        } else {
          // Non-ASCII: keep valid UTF-8 sequences, replace invalid bytes with U+FFFD so the document
          // stays valid JSON whatever bytes a hostile ELF string table holds.
          std::size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
          bool ok = len != 0 && i + len <= s.size();
          for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
          if (ok) {
            out.append(s.substr(i, len));
            i += len - 1;
            run = i + 1;
          } else {
            out += "\xEF\xBF\xBD";
          }
        }
    }
  }
  out.append(s.substr(run));
  out.push_back('"');
}

void JsonWriter::separate() {
  if (m_sink && m_out.size() > (std::size_t{1} << 20)) {
    m_sink(m_out);
    m_out.clear();
  }
  if (m_after_key) {
    m_after_key = false;
    return;
  }
  if (!m_first.empty()) {
    if (!m_first.back()) m_out.push_back(',');
    m_first.back() = false;
  }
}

JsonWriter& JsonWriter::begin_object() {
  separate();
  m_out.push_back('{');
  m_first.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  m_out.push_back('}');
  m_first.pop_back();
  return *this;
}
JsonWriter& JsonWriter::begin_array() {
  separate();
  m_out.push_back('[');
  m_first.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::end_array() {
  m_out.push_back(']');
  m_first.pop_back();
  return *this;
}
JsonWriter& JsonWriter::key(std::string_view k) {
  separate();
  append_json_string(m_out, k);
  m_out.push_back(':');
  m_after_key = true;
  return *this;
}
JsonWriter& JsonWriter::value(std::string_view v) {
  separate();
  append_json_string(m_out, v);
  return *this;
}
JsonWriter& JsonWriter::value(bool v) {
  separate();
  m_out += v ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::value(std::int64_t v) {
  separate();
  char buf[24];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  m_out.append(buf, p);
  return *this;
}
JsonWriter& JsonWriter::value(std::uint64_t v) {
  separate();
  char buf[24];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  m_out.append(buf, p);
  return *this;
}
JsonWriter& JsonWriter::null() {
  separate();
  m_out += "null";
  return *this;
}

}  // namespace wheelcheck
