// Test support: temporary folders, running commands, building ELF fixtures from C sources at test time,
// packing wheels with tests/tools/make_wheel.py, where ../shared and the corpus are, and JSON Schema
// validation. Nothing binary is kept in the repository.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wheelcheck::test {

// A fresh folder under $TMPDIR, removed at the end of the test.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return m_path; }
  std::string file(const std::string& name) const { return m_path + "/" + name; }
  std::string write(const std::string& name, const std::string& content) const;

 private:
  std::string m_path;
};

struct CommandResult {
  int exit_code = -1;  // -1 when the command did not exit (a signal)
  std::string out;     // stdout
  std::string err;     // stderr
};
// Runs a shell command with stdin from /dev/null; stdout and stderr are captured separately.
CommandResult run(const std::string& command);
std::string shell_quote(const std::string& s);
bool have_program(const std::string& name);

// Compiles C (or C++, by the source's extension) into a shared library with `compiler` and extra flags.
// Returns the output path, or nullopt with the compiler's message in `error`.
std::optional<std::string> build_shared(const TempDir& dir, const std::string& name, const std::string& source_name,
                                        const std::string& source, const std::string& flags,
                                        const std::string& compiler = "gcc", std::string* error = nullptr);

// tests/tools/make_wheel.py: OUT must be named like a wheel; files maps archive names to paths.
std::string make_wheel(const TempDir& dir, const std::string& wheel_name,
                       const std::vector<std::pair<std::string, std::string>>& files,
                       const std::vector<std::string>& options = {});

std::string source_dir();         // the repository root (WHEELCHECK_SOURCE_DIR)
std::string build_samples_dir();  // the build's samples folder (WHEELCHECK_SAMPLES_DIR_DEFAULT)
std::string shared_dir();         // ../shared beside the repository (WHEELCHECK_SHARED_DIR)
std::string binary_path();        // the wheelcheck executable (WHEELCHECK_BINARY)
std::string corpus_dir();         // $WHEELCHECK_CORPUS or ~/.cache/wheelcheck-corpus
std::vector<std::string> find_files(const std::string& dir, const std::string& suffix);

// What `auditwheel show --json` said for one of ../shared/fixtures/auditwheel-wheels (its folder below
// auditwheel-wheels, glibc/musllinux_1_2/android, is the file's prefix).
std::string auditwheel_show_file(const std::string& wheel);

// Headless Chromium (Debian: chromium): its path, or "" where it is absent.
std::string chromium();
// Runs Chromium headless on file://`file` with `args` (--dump-dom, --screenshot=...), with HOME and the
// profile in `dir`, D-Bus turned off (no bus in a container: its connect timeouts stall start-up) and a
// 90 s limit. A start that hangs on a loaded machine (exit 124) is tried once more with a fresh profile;
// a page that fails twice is the test's failure.
CommandResult run_chromium(const TempDir& dir, const std::string& args, const std::string& file);

std::string read_file(const std::string& path);
void write_binary(const std::string& path, const std::string& bytes);

// JSON Schema (draft 2020-12) validation with Python's jsonschema (Debian: python3-jsonschema): python3
// on PATH when it has it, else /usr/bin/python3; "" when neither does. validate_json prints one line
// "FILE: /json/pointer: message" per error and exits 1 when a file does not validate.
const std::string& python_with_jsonschema();
CommandResult validate_json(const std::string& schema, const std::vector<std::string>& files);

// In a test body: skip, saying why, where Python's jsonschema is absent.
#define SKIP_WITHOUT_JSONSCHEMA()                                               \
  do {                                                                          \
    if (::wheelcheck::test::python_with_jsonschema().empty()) {                 \
      GTEST_SKIP() << "python3-jsonschema absent: run scripts/install-deps.sh"; \
    }                                                                           \
  } while (false)

}  // namespace wheelcheck::test
