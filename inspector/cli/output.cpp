// What every command shares on its way out: colour and progress only on a terminal, one format for
// errors and warnings ("wheelcheck: error: ..."), and JSON documents that are complete even when a wheel
// fails (the failed wheel is an entry carrying its error).
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "commands.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cli {

bool use_color(std::FILE* f) {
  return ::isatty(::fileno(f)) != 0 && getenv_or("NO_COLOR", "").empty() && getenv_or("TERM", "") != "dumb";
}

bool show_progress(bool quiet) {
  return !quiet && ::isatty(STDERR_FILENO) != 0;
}

std::optional<std::size_t> terminal_columns() {
  if (::isatty(STDOUT_FILENO) == 0) return std::nullopt;
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  const std::string columns = getenv_or("COLUMNS", "");
  // COLUMNS as a number of 40 or more; anything else (unset, words, a narrow width) gives the default.
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(columns.data(), columns.data() + columns.size(), n);
  if (ec == std::errc() && end == columns.data() + columns.size() && n >= 40) return n;
  return 100;
}

std::size_t terminal_width() {
  return terminal_columns().value_or(120);
}

std::string wrap_to_terminal(const std::string& text) {
  const auto columns = terminal_columns();
  if (!columns) return text;  // a pipe or a file gets whole lines, for grep
  const std::size_t width = *columns;
  // Visible columns of a line: escape sequences take none, UTF-8 continuation bytes none.
  auto visible = [](std::string_view s) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\x1b') {
        while (i < s.size() && s[i] != 'm') ++i;
        continue;
      }
      if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++n;
    }
    return n;
  };
  std::string out;
  for (const auto& line : split(text, "\n", true)) {
    if (visible(line) <= width) {
      out += std::string(line) + "\n";
      continue;
    }
    const std::size_t indent = line.find_first_not_of(' ') == std::string_view::npos ? 0 : line.find_first_not_of(' ');
    const std::string lead(std::min<std::size_t>(indent + 2, width / 2), ' ');
    std::string current(line.substr(0, indent));
    bool first_word = true;
    for (const auto& word : split(line.substr(indent), " ", false)) {
      if (!first_word && visible(current) + 1 + visible(word) > width) {
        out += current + "\n";
        current = lead;
        first_word = true;
      }
      current += (first_word ? "" : " ") + std::string(word);
      first_word = false;
    }
    out += current + "\n";
  }
  if (!text.empty() && text.back() == '\n' && out.size() >= 2 && out.ends_with("\n\n")) out.pop_back();
  return out;
}

void warn(const std::string& message) {
  std::fprintf(stderr, "wheelcheck: warning: %s\n", message.c_str());
}

int usage_failure(const CLI::App& command, const std::string& message) {
  std::fprintf(stderr, "wheelcheck: error: %s\n%s\n", message.c_str(), usage_line(command).c_str());
  return k_exit_bad_input;
}

std::string error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Usage: return "usage";
    case ErrorKind::BadInput: return "bad-input";
    case ErrorKind::Io: return "io";
    case ErrorKind::Internal: return "internal";
  }
  return "internal";
}

int exit_code_of(const Error& e) {
  return e.kind() == ErrorKind::Internal ? k_exit_internal : k_exit_bad_input;
}

output::Problem problem_of(const std::string& wheel, const Error& e) {
  return {error_kind_name(e.kind()), wheel, e.what(), exit_code_of(e)};
}

nlohmann::ordered_json error_entry(const std::string& wheel, const Error& e) {
  return output::problem_json(problem_of(wheel, e));
}

void keep_in_cache(const std::function<void()>& store, const std::string& what) {
  try {
    store();
  } catch (const Error& e) {  // a cache that cannot be written costs speed, never the answer
    if (e.kind() == ErrorKind::Internal) throw;
    warn(what + " was not kept in the profile cache: " + e.what());
  }
}

output::Sinks stdout_sinks() {
  output::Sinks s;
  s.out = [](std::string_view text) { print_out(text); };
  s.err = [](std::string_view text) { std::fwrite(text.data(), 1, text.size(), stderr); };
  s.write = [](const std::string& path, const std::string& text) { write_file_atomic(path, text); };
  s.append = [](const std::string& path, const std::string& text) { append_to_file(path, text); };
  s.wrap = [](const std::string& text) { return wrap_to_terminal(text); };
  s.color = use_color(stdout);
  s.width = terminal_width();
  return s;
}

namespace {
[[noreturn]] void stdout_failed(int saved) {
  if (saved == EPIPE) throw StdoutClosed();
  throw Error(ErrorKind::Io,
              std::string("cannot write standard output: ") + (saved != 0 ? std::strerror(saved) : "a write failed"));
}
}  // namespace

void check_stdout() {
  // Right after the write that failed, errno still says why.
  if (std::ferror(stdout) != 0) stdout_failed(errno);
}

void flush_stdout() {
  if (std::fflush(stdout) != 0) stdout_failed(errno);
  check_stdout();
}

void print_out(std::string_view text) {
  if (std::ferror(stdout) != 0) return;  // said once, by the next check
  std::fwrite(text.data(), 1, text.size(), stdout);
  check_stdout();
}

void print_json(const nlohmann::ordered_json& j) {
  print_out(j.dump(2) + "\n");
}

}  // namespace wheelcheck::cli
