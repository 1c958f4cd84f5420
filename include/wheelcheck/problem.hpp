// Something a reader met and could not use as it stands (a wheel's archive or RECORD, a probed root's
// file or loader configuration); the reader goes on and reports it. Written to JSON as
// {"kind", "path", "detail"}.
#pragma once

#include <string>

namespace wheelcheck {

// `kind` is a stable identifier (documented in docs/inspect.schema.json for wheels: "unsafe-path", ...; for a
// probe: "symlink-loop", "escapes-root", "unreadable", "too-large", "malformed-cache", "malformed-conf",
// "not-elf", "malformed-elf", ...); `path` names the member or the image path, never a host path;
// `detail` is for people.
struct Problem {
  std::string kind;
  std::string path;
  std::string detail;
  bool operator==(const Problem&) const = default;
};

}  // namespace wheelcheck
