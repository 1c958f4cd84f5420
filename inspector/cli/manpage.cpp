// `wheelcheck help --man`: the manual page, in roff, made from the command line's own definitions (every
// command, its options with their help, its examples) and the texts `--help` prints (exit codes, settings,
// environment). One source: an option added to the CLI is in the man page of the next build
// (CMakeLists.txt makes build/wheelcheck.1 from it; scripts/package.sh installs it as
// share/man/man1/wheelcheck.1), and tests/docs/test_manpage.py checks the rendered page against --help.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "wheelcheck/process.hpp"

namespace wheelcheck::cli {

// The exit codes, the settings file and the environment: the footer of every command's --help and of the
// manual page.
const char* const k_exit_codes = R"(Exit codes:
  0  done (inspect, probe, images); compatible (verdict commands); nothing new incompatible (scan)
  1  incompatible (verdict commands); a new wheel incompatible with an image its tags target (scan)
  2  bad input or usage: a wheel that is not a readable zip, a malformed member, a wheel that fails
     its own RECORD (every command; the report, verdict or gates are still printed), a malformed
     description, an unknown image or file, a wrong or mistyped option, conflicting flags, a
     --cache-dir that cannot be written or is not private to you, a URL or index unreadable after
     the retries (a lock package's index: its answer is unknown, 4), a download or a lock's file
     that does not match its sha256 or --hash (an integrity failure), an input over a limit (the error names
     the option that raises it), a probed root with symlink loops or links above its /, a container
     image that fails a digest or holds a hostile layer, output that
     could not be written (stdout, -o, --report, --pins, --env-file, --summary: a full disk; a closed
     pipe ends quietly), a scan state that could not be saved. Each has its "wheelcheck: error:" line
     on stderr. With --json, stdout still holds one complete JSON document. SECURITY.md lists the limits.
  3  degraded (verdict commands)
  4  unknown (verdict commands; an environment package whose index was not looked up, offline, or
     could not be read)
  70 internal error (a bug in wheelcheck: please report it)
The same code whatever --format prints (text, json, sh, github, sarif, junit); gates exit 0 once they
could evaluate, whatever the verdict; --exit-zero (check, scan) turns 1, 3 and 4 into 0.

Settings: wheelcheck.toml, or [tool.wheelcheck] in pyproject.toml, in the working folder or above it
(--config FILE, --no-config): images, assume, rules, verify, format, output, exit-zero and accepted
conditions with an expiry date; the command line overrides it. `wheelcheck config` shows what is used.

Environment:
  WHEELCHECK_DB         the image database folder (else installed beside the binary)
  WHEELCHECK_CACHE_DIR  profile cache folder (else $XDG_CACHE_HOME/wheelcheck, else $HOME/.cache/wheelcheck;
                        without HOME, no cache); it must be yours and writable by nobody else
  XDG_CACHE_HOME, HOME  where the profile cache goes when WHEELCHECK_CACHE_DIR is unset (HOME: ~/.netrc too)
  WHEELCHECK_OFFLINE    set, and not 0: the export tables of an image's published distributions (its torch,
                        from PyPI) are not downloaded; what they would say stays unknown; a container image's
                        registry is not asked: its reference is answered from the image cache, else exit 2
  NO_COLOR              no colour in text output, even on a terminal (TERM=dumb: none either)
  COLUMNS               the text width where the terminal does not say it (40 or more)
  SSL_CERT_FILE         the CA bundle for https (the static build, which has none compiled in, else
                        looks in the distributions' usual places)
  PIP_INDEX_URL         scan: the index when no --index is given (PIP_EXTRA_INDEX_URL: more)
  NETRC                 credentials for indexes (else ~/.netrc); never sent to another host
  REGISTRY_AUTH_FILE    credentials for container registries (podman's and skopeo's auth.json); else
  DOCKER_CONFIG         $DOCKER_CONFIG/config.json, else ~/.docker/config.json (docker login's "auths")
  WHEELCHECK_INSECURE_REGISTRIES  host:port list of registries spoken to over plain HTTP (loopback always is)
  http_proxy, https_proxy, no_proxy   proxies for URLs (libcurl's own rules)
  TMPDIR                where a wheel given by URL is downloaded (else /tmp)
  GITHUB_ENV            --format github: the file the gates' VAR=value lines go to (else --env-file)
  GITHUB_OUTPUT         --format github, scan: the step outputs file (else --github-output)
  WHEELCHECK_NVIDIA_SMI probe: the nvidia-smi to run for the driver and GPUs (set but empty: none), in
                        place of the one on PATH
  WHEELCHECK_PROC_NVIDIA  probe: the folder read in place of /proc/driver/nvidia
  LD_LIBRARY_PATH, LD_PRELOAD, PATH, PYTHONPATH, VIRTUAL_ENV, CONDA_PREFIX, CUDA_HOME, CUDA_PATH,
  ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, MACA_PATH, ROCM_PATH, DTK_PATH, MUSA_HOME, MUSA_PATH, TOPS_HOME
                        probe --root / without --env (or with --env-from-process): the image's environment
  MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_   glibc's allocator settings: one that is
                        set is kept in place of wheelcheck's own)";

namespace {

// Text for roff: backslashes escaped, hyphens as \- (so that options can be searched and copied), and a
// line that would start with a control character made literal.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  return out;
}

// The option as --help names it: "-i, --image TEXT ...", bold names and an italic value.
std::string option_label(const CLI::Option& o) {
  std::string label;
  if (o.get_positional()) return "\\fI" + roff(o.get_name()) + "\\fR";
  for (const auto& s : o.get_snames()) label += (label.empty() ? "" : ", ") + std::string("\\fB\\-") + roff(s) + "\\fR";
  for (const auto& l : o.get_lnames())
    label += (label.empty() ? "" : ", ") + std::string("\\fB\\-\\-") + roff(l) + "\\fR";
  const std::string type = o.get_type_name();
  if (o.get_type_size() != 0 && !type.empty()) label += " \\fI" + roff(type) + "\\fR";
  if (o.get_expected_max() > 1) label += " ...";
  return label;
}

// A block that --help prints as it is (examples, tables): kept line for line.
std::string preformatted(const std::string& text) {
  if (text.empty()) return "";
  return ".PP\n.nf\n" + roff(text) + (text.back() == '\n' ? "" : "\n") + ".fi\n";
}

std::string options(const CLI::App& app) {
  std::string out;
  std::string group;
  for (const auto* o : app.get_options()) {
    if (o->get_group().empty() || o->get_name() == "--help" || o->get_name() == "-h,--help") continue;  // hidden
    if (o->get_group() != group) {
      group = o->get_group();
      out += ".PP\n\\fI" + roff(group) + "\\fR\n";
    }
    out += ".TP\n" + option_label(*o) + "\n" + roff(o->get_description()) + "\n";
  }
  return out;
}

// The footer without the exit codes, settings and environment that most commands repeat after their
// examples: the manual says those once, in their own sections.
std::string own_footer(const CLI::App& app) {
  std::string footer = app.get_footer();
  const auto at = footer.find(k_exit_codes);
  if (at != std::string::npos) footer.erase(at);
  while (!footer.empty() && (footer.back() == '\n' || footer.back() == ' ')) footer.pop_back();
  return footer;
}

void command(const CLI::App& app, const std::string& path, std::string& out) {
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;  // hidden
    const std::string name = path + " " + sub->get_name();
    out += ".SS \"" + roff(name) + "\"\n" + roff(sub->get_description()) + "\n";
    out += options(*sub);
    out += preformatted(own_footer(*sub));
    command(*sub, name, out);
  }
}

// k_exit_codes is three parts, in this order: the codes, the settings file, the environment.
std::string part(const std::string& text, const std::string& from, const std::string& to) {
  const auto a = text.find(from);
  if (a == std::string::npos) return "";
  const auto b = to.empty() ? std::string::npos : text.find(to, a);
  std::string s = text.substr(a, b == std::string::npos ? std::string::npos : b - a);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace

std::string man_page(const CLI::App& app) {
  const std::string codes = k_exit_codes;
  std::string out;
  out += ".\\\" The manual of wheelcheck, made by `wheelcheck help --man` from the command line's own help.\n";
  out += ".TH WHEELCHECK 1 \"\" \"wheelcheck " + roff(version()) + "\" \"User Commands\"\n";
  out += ".nh\n.ad l\n";  // no hyphenation (option names and paths stay whole), ragged right
  out += ".SH NAME\nwheelcheck \\- will this wheel's native code load and work in that image?\n";
  out += ".SH SYNOPSIS\n";
  out += ".B wheelcheck\n\\fIWHEEL\\fR... \\fB\\-\\-image\\fR \\fINAME\\fR [\\fIOPTIONS\\fR]\n.br\n";
  out += ".B wheelcheck\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n.br\n";
  out += ".B wheelcheck help\n[\\fICOMMAND\\fR] | \\fB\\-\\-man\\fR\n";
  out += ".SH DESCRIPTION\n" + roff(app.get_description()) + "\n";
  out +=
      ".PP\nWithout a command, the words are the check's: \\fBwheelcheck WHEEL \\-\\-image NAME\\fR is "
      "\\fBwheelcheck check WHEEL \\-\\-image NAME\\fR. "
      "\\fBwheelcheck help COMMAND\\fR prints one command's help; \\fBwheelcheck help \\-\\-man\\fR prints "
      "this page.\n";
  out += ".SH OPTIONS\nThe check's options, taken when no command is named.\n";
  out += options(app);
  out += preformatted(own_footer(app));
  out += ".SH COMMANDS\n";
  command(app, "wheelcheck", out);
  out += ".SH EXIT STATUS\n" + preformatted(part(codes, "Exit codes:", "\n\nSettings:"));
  out += ".SH FILES\n" + preformatted(part(codes, "Settings:", "\n\nEnvironment:"));
  out +=
      ".PP\nThe image database: \\fI<prefix>/share/wheelcheck/db\\fR beside the binary (or \\fB\\-\\-db\\fR, "
      "\\fBWHEELCHECK_DB\\fR). The profile cache: \\fI~/.cache/wheelcheck\\fR (or \\fB\\-\\-cache\\-dir\\fR, "
      "\\fBWHEELCHECK_CACHE_DIR\\fR, \\fBXDG_CACHE_HOME\\fR).\n";
  out += ".SH ENVIRONMENT\n" + preformatted(part(codes, "Environment:", ""));
  out += ".SH SEE ALSO\n";
  out +=
      "The manual by task, in the source's \\fIdocs/\\fR: checking.md, verdict.md, gates.md, images.md, "
      "cuda.md, scan.md, ci.md, policies.md, cli.md, internals.md, packaging.md, development.md; "
      "\\fISECURITY.md\\fR for the limits against hostile input.\n";
  out += ".PP\n\\fBauditwheel\\fR(1), \\fBld.so\\fR(8), \\fBldconfig\\fR(8), \\fBpip\\fR(1)\n";
  return out;
}

}  // namespace wheelcheck::cli
