// A TOML document as JSON (toml++, in inspector/env/pylock.cpp: the one translation unit that includes it),
// for the settings files: wheelcheck.toml and pyproject.toml's [tool.wheelcheck]. Dates and times become
// their TOML text ("2027-03-31"); every value's line is kept, by JSON pointer, for messages.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace wheelcheck::toml_doc {

struct Document {
  nlohmann::ordered_json root;
  std::map<std::string, int> lines;  // "/tool/wheelcheck/images" -> 3; 0 where toml++ knows none
};
// Throws Error(BadInput) "PATH:LINE: not valid TOML: ..." (and for keys nested beyond the bound pylock
// readers use).
Document parse(std::string_view text, const std::string& path);

}  // namespace wheelcheck::toml_doc
