// docs/image.schema.json and its validation, for the tests of image descriptions.
#pragma once

#include <string>
#include <vector>

#include "support.hpp"

namespace wheelcheck::test {

inline std::string schema_path() {
  return source_dir() + "/docs/image.schema.json";
}

inline CommandResult validate(const std::vector<std::string>& files) {
  return validate_json(schema_path(), files);
}

}  // namespace wheelcheck::test
