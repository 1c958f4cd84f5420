#include "support.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace wheelcheck::test {

namespace fs = std::filesystem;

namespace {
// No test reads a published wheel from the internet (the db's images name PyTorch's indexes): every
// wheelcheck a test runs inherits this, unless the test set it first (the published-wheel tests serve their
// own index on loopback, and unset it for their own commands).
[[maybe_unused]] const bool k_offline = ::setenv("WHEELCHECK_OFFLINE", "1", 0) == 0;
}  // namespace

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "wheelcheck-test-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  m_path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

std::string TempDir::write(const std::string& name, const std::string& content) const {
  const auto p = file(name);
  fs::create_directories(fs::path(p).parent_path());
  write_binary(p, content);
  return p;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out.push_back(c);
  }
  return out + "'";
}

CommandResult run(const std::string& command) {
  TempDir dir;
  const std::string out = dir.file("out"), err = dir.file("err");
  const std::string full = "(" + command + ") >" + shell_quote(out) + " 2>" + shell_quote(err) + " </dev/null";
  const int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

std::string chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::is_regular_file(p)) return p;
  return {};
}

CommandResult run_chromium(const TempDir& dir, const std::string& args, const std::string& file) {
  CommandResult r;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    const std::string profile = dir.file("chromium-profile-" + std::to_string(attempt));
    r = run("HOME=" + shell_quote(dir.path()) +
            " DBUS_SESSION_BUS_ADDRESS=disabled: DBUS_SYSTEM_BUS_ADDRESS=disabled: " + "timeout -k 5 90 " + chromium() +
            " --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions --hide-scrollbars" +
            " --disable-dev-shm-usage --disable-background-networking --disable-sync --no-default-browser-check" +
            " --user-data-dir=" + shell_quote(profile) + " " + args + " " + shell_quote("file://" + file));
    if (r.exit_code != 124 && r.exit_code != 137) break;
    std::cout << "[  INFO    ] chromium did not finish in 90 s (attempt " << attempt << ")\n";
  }
  return r;
}

bool have_program(const std::string& name) {
  return run("command -v " + shell_quote(name)).exit_code == 0;
}

std::optional<std::string> build_shared(const TempDir& dir, const std::string& name, const std::string& source_name,
                                        const std::string& source, const std::string& flags,
                                        const std::string& compiler, std::string* error) {
  const auto src = dir.write(source_name, source);
  const auto out = dir.file(name);
  fs::create_directories(fs::path(out).parent_path());
  const auto r = run(compiler + " -shared -fPIC -o " + shell_quote(out) + " " + shell_quote(src) + " " + flags);
  if (r.exit_code != 0) {
    if (error != nullptr) *error = r.out + r.err;
    return std::nullopt;
  }
  return out;
}

std::string make_wheel(const TempDir& dir, const std::string& wheel_name,
                       const std::vector<std::pair<std::string, std::string>>& files,
                       const std::vector<std::string>& options) {
  const std::string out = dir.file(wheel_name);
  std::string cmd = "python3 " + shell_quote(source_dir() + "/tests/tools/make_wheel.py") + " " + shell_quote(out);
  for (const auto& o : options) cmd += " " + shell_quote(o);
  for (const auto& [arc, src] : files) cmd += " " + shell_quote(arc + "=" + src);
  const auto r = run(cmd);
  if (r.exit_code != 0) throw std::runtime_error("make_wheel.py failed: " + r.err);
  return out;
}

std::string source_dir() {
  return WHEELCHECK_SOURCE_DIR;
}
std::string build_samples_dir() {
  return WHEELCHECK_SAMPLES_DIR_DEFAULT;
}
std::string shared_dir() {
  return WHEELCHECK_SHARED_DIR;
}
std::string binary_path() {
  return WHEELCHECK_BINARY;
}
std::string corpus_dir() {
  if (const char* c = std::getenv("WHEELCHECK_CORPUS"); c != nullptr && *c != '\0') return c;
  return std::string(std::getenv("HOME") != nullptr ? std::getenv("HOME") : "/root") + "/.cache/wheelcheck-corpus";
}

std::vector<std::string> find_files(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const auto p = it->path().string();
    if (it->is_regular_file(ec) && p.size() >= suffix.size() &&
        p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(p);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string auditwheel_show_file(const std::string& wheel) {
  const fs::path p(wheel);
  const std::string folder = p.parent_path().filename().string();
  std::string prefix;
  if (folder == "glibc" || folder == "musllinux_1_2" || folder == "android") prefix = folder + "_";
  return shared_dir() + "/fixtures/auditwheel-show/" + prefix + p.stem().string() + ".json";
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_binary(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// python3 -c SCRIPT SCHEMA FILE...: one line "FILE: /json/pointer: message" per error (an anyOf's
// alternatives in parentheses); exit 1 when a file does not validate, and a traceback when the schema
// itself is not a valid draft 2020-12 schema.
constexpr const char* k_validate = R"PY(
import json, sys
from jsonschema import Draft202012Validator
with open(sys.argv[1]) as f:
    schema = json.load(f)
Draft202012Validator.check_schema(schema)
validator = Draft202012Validator(schema)
invalid = 0
for path in sys.argv[2:]:
    with open(path) as f:
        doc = json.load(f)
    for e in validator.iter_errors(doc):
        invalid += 1
        where = "/" + "/".join(str(p) for p in e.absolute_path)
        alternatives = "; ".join(c.message[:160] for c in e.context)
        print("%s: %s: %s%s" % (path, where, e.message[:300], " (" + alternatives + ")" if alternatives else ""))
sys.exit(1 if invalid else 0)
)PY";

// python3 on PATH when it has jsonschema with draft 2020-12, else Debian's /usr/bin/python3 (where
// python3-jsonschema installs when PATH's python3 is another build, a pyenv one); "" when neither has it.
const std::string& python_with_jsonschema() {
  static const std::string found = [] {
    for (const std::string py : {"python3", "/usr/bin/python3"}) {
      if (run(py + " -c 'from jsonschema import Draft202012Validator'").exit_code == 0) return py;
    }
    return std::string();
  }();
  return found;
}

CommandResult validate_json(const std::string& schema, const std::vector<std::string>& files) {
  std::string cmd = python_with_jsonschema() + " -c " + shell_quote(k_validate) + " " + shell_quote(schema);
  for (const auto& f : files) cmd += " " + shell_quote(f);
  return run(cmd);
}

}  // namespace wheelcheck::test
