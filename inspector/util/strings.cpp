// Small string helpers shared by the stages (include/wheelcheck/util.hpp): trimming, case, joining, URL
// escapes, sizes, dotted version numbers.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = hex_value(s[i + 1]);
      const int lo = hex_value(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool is_sha256_hex(std::string_view s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view k_space = " \t\r\n\f\v";
  const auto b = s.find_first_not_of(k_space);
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(k_space);
  return s.substr(b, e - b + 1);
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) out += sep;
    out += items[i];
  }
  return out;
}

std::vector<std::string> split(std::string_view s, std::string_view separators, bool keep_empty) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto at = s.find_first_of(separators, start);
    std::string_view part = s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start);
    if (keep_empty || !part.empty()) out.emplace_back(part);
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && ascii_lower(s.substr(0, prefix.size())) == ascii_lower(prefix);
}

std::optional<int> small_number(std::string_view digits) {
  if (digits.empty() || digits.size() > 6) return std::nullopt;
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::optional<int> compare_dotted(std::string_view a, std::string_view b) {
  auto valid = [](std::string_view s) {
    if (s.empty() || s.front() == '.' || s.back() == '.') return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '.' ? s[i - 1] == '.' : (c < '0' || c > '9')) return false;
    }
    return true;
  };
  if (!valid(a) || !valid(b)) return std::nullopt;
  // Component by component as numbers of any length: leading zeros go, then the longer is larger.
  auto next = [](std::string_view& s) {
    const auto dot = s.find('.');
    std::string_view part = s.substr(0, dot);
    s.remove_prefix(dot == std::string_view::npos ? s.size() : dot + 1);
    while (part.size() > 1 && part.front() == '0') part.remove_prefix(1);
    return part;
  };
  while (!a.empty() || !b.empty()) {
    std::string_view x = a.empty() ? "0" : next(a), y = b.empty() ? "0" : next(b);
    if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
    if (const int c = x.compare(y); c != 0) return c < 0 ? -1 : 1;
  }
  return 0;
}

bool dotted_less(std::string_view a, std::string_view b) {
  if (const auto c = compare_dotted(a, b)) return *c < 0;
  const bool a_ok = compare_dotted(a, a).has_value(), b_ok = compare_dotted(b, b).has_value();
  if (a_ok != b_ok) return !a_ok;
  return a < b;
}

std::uint64_t parse_size(std::string_view text) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr == text.data()) throw usage_error("not a size: '" + std::string(text) + "'");
  std::string_view suffix(ptr, static_cast<std::size_t>(end - ptr));
  int shift = 0;
  if (suffix.empty() || suffix == "B")
    shift = 0;
  else if (suffix == "k" || suffix == "K" || suffix == "KiB")
    shift = 10;
  else if (suffix == "M" || suffix == "MiB")
    shift = 20;
  else if (suffix == "G" || suffix == "GiB")
    shift = 30;
  else if (suffix == "T" || suffix == "TiB")
    shift = 40;
  else
    throw usage_error("not a size: '" + std::string(text) + "' (use a number with k, M, G or T)");
  if (shift != 0 && value > (~std::uint64_t{0} >> shift)) throw usage_error("size too large: " + std::string(text));
  return value << shift;
}

std::string printable(std::string_view text) {
  const auto safe = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u != 0x7f;
  };
  if (std::all_of(text.begin(), text.end(), safe)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  for (const char c : text) {
    if (safe(c)) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    }
  }
  return out;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* k_units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024.0 && unit < 4) {
    v /= 1024.0;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", v, k_units[unit]);
  return buf;
}

bool json_deeper_than(std::string_view text, std::size_t limit) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

}  // namespace wheelcheck
