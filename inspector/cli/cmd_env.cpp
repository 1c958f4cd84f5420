// Environments: `wheelcheck pylock.toml --image NAME` (a lock wherever a wheel goes: check, gates, and
// --with). For each image, every package of the lock is resolved as an installer resolves it there (its
// marker evaluated for the image's Python, the wheel picked by tags and Requires-Python among those the lock
// lists, or among the pinned version's files on its indexes), every picked wheel is read (headers-only from
// its URL, in parallel, through the profile cache; --verify full downloads it and checks the lock's hash),
// and each is checked with all the others installed beside it in one site-packages (the image's own
// distributions of the same names replaced, as pip replaces them). One verdict and one exit code for the
// environment: the worst of its wheels; a package with no wheel for the image is an error of it.
// Each image's set is judged by the one run (run::run, each image by run::judge), which also reads the export tables of
// the published wheels images name for their distributions (run::fill_published, with the options published_of makes
// for check and gates alike).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "commands.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/environment.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/index.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/published.hpp"
#include "wheelcheck/remote.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/variant.hpp"
#include "wheelcheck/verdict.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::cli {

void refuse_misnamed_locks(const CheckArgs& a) {
  for (const auto* list : {&a.wheels, &a.with}) {
    for (const auto& w : *list) {
      if (net::is_url(w) || lock::is_lock_path(w)) continue;
      const std::string name = w.substr(w.find_last_of('/') + 1);
      if (!ascii_lower(name).ends_with(".toml")) continue;
      throw usage_error(fmt::format(
          "{}: a .toml file is read as a lock only when it is named as PEP 751 names lock files, pylock.toml or "
          "pylock.NAME.toml (rename it pylock.{}); a project's settings go in wheelcheck.toml (--config)",
          w, name));
    }
  }
}

bool names_a_lock(const CheckArgs& a) {
  auto is_lock = [](const std::string& s) { return !net::is_url(s) && lock::is_lock_path(s); };
  return std::any_of(a.wheels.begin(), a.wheels.end(), is_lock) || std::any_of(a.with.begin(), a.with.end(), is_lock);
}

run::Published published_of(const CheckArgs& a, const ProfileCache* cache, bool progress) {
  run::Published p;
  p.client = client_options(!progress, a.limits);
  p.options.mode = a.verify == "full" ? remote::Mode::Full : remote::Mode::Auto;
  apply_limits(a.limits, p.options.inspect);
  p.options.cache = cache;
  if (progress) p.options.log = [](const std::string& line) { std::fprintf(stderr, "wheelcheck: %s\n", line.c_str()); };
  p.warn = [](const std::string& line) { warn(line); };
  return p;
}

namespace {

using environment::Entry;
using environment::Environment;
using environment::ReadWheel;

// net::offline(): an index or page of links is not looked up, a wheel's URL is read only from the profile cache;
// each says so ("offline: not looked up").

constexpr const char* k_env_offline_words = "offline (WHEELCHECK_OFFLINE is set)";

// The release's variants file a page links, read (a URL fetched afresh each run: the file is mutable; a
// --find-links folder's file read from disk). The first readable one wins; one that cannot be read leaves
// `release` empty and says why in `release_error`.
void read_release(const index::ProjectPage& page, const lock::Package& p, net::Client& client,
                  std::optional<variant::File>& release, std::string& release_error) {
  if (release) return;
  const index::File* f = lock::variants_file(page, p);
  if (f == nullptr) return;
  if (net::is_url(f->url) && net::offline()) {
    release_error = std::string(k_env_offline_words) + ": " + net::redact_url(f->url) + " was not looked up";
    return;
  }
  try {
    std::string text;
    if (net::is_url(f->url)) {
      text = client.get(f->url, "application/json").body;
    } else {
      text = read_text_file(f->url, variant::k_max_file_size);
    }
    release = variant::parse(text, f->filename);
    release_error.clear();
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Internal) throw;
    release_error = e.what();
  }
}

// The files of a package that come from its indexes (and --find-links pages), as pip finds them: every
// index's page for the project, merged (as pip merges them), then the pinned version's files; and the
// places that could not be asked (offline: not looked up; an index that could not be read), which leave
// the answer unknown where nothing found decides it.
struct EnvLookup {
  std::vector<lock::File> files;
  std::vector<std::string> not_looked_up;  // offline: the indexes and pages not asked
  std::vector<std::string> failed;         // "URL: why" of each that could not be read
  bool incomplete() const { return !not_looked_up.empty() || !failed.empty(); }
  // In words: "offline (WHEELCHECK_OFFLINE is set): https://pypi.org/simple was not looked up; the lookup of
  // https://h/simple failed: ...".
  std::string words() const {
    std::vector<std::string> parts;
    if (!not_looked_up.empty()) {
      parts.push_back(fmt::format("{}: {} {} not looked up", k_env_offline_words, join(not_looked_up, ", "),
                                  not_looked_up.size() == 1 ? "was" : "were"));
    }
    if (!failed.empty()) parts.push_back("the lookup failed: " + join(failed, "; "));
    return join(parts, "; ");
  }
};

EnvLookup index_files(const lock::Package& p, net::Client& client, std::optional<variant::File>& release,
                      std::string& release_error) {
  EnvLookup out;
  const bool offline = net::offline();
  // --find-links: a page of links (read as a PEP 503 page: any project's files, those of this one kept) or a
  // local folder of wheels (its files have no hash: the lock's hashes are checked on the file read).
  for (const auto& where : p.find_links) {
    if (net::is_url(where) && offline) {
      out.not_looked_up.push_back(net::redact_url(where));
      continue;
    }
    try {
      index::ProjectPage page;
      page.name = p.name;
      if (net::is_url(where)) {
        const net::Response r = client.get(where, "text/html");
        page = index::parse_project_page(r.body, "text/html", r.url, p.name);
      } else {
        const std::string dir = where.rfind("file://", 0) == 0 ? where.substr(7) : where;
        std::error_code ec;
        // A folder that is not there: pip ignores it (the lock's reader warned, naming both places tried).
        if (!std::filesystem::exists(dir, ec)) continue;
        for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
          if (!entry.is_regular_file(ec)) continue;
          index::File f;
          f.filename = entry.path().filename().string();
          f.url = entry.path().string();
          page.files.push_back(std::move(f));
        }
        if (ec) throw bad_input("--find-links " + dir + ": " + ec.message());
      }
      read_release(page, p, client, release, release_error);
      for (auto& f : lock::files_for(page, p)) {
        if (!net::is_url(f.url)) {
          f.path = f.url;  // a local file of a --find-links folder
          f.url.clear();
        }
        out.files.push_back(std::move(f));
      }
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal) throw;
      out.failed.push_back(e.what());
    }
  }
  for (const auto& where : p.indexes) {
    if (offline) {
      out.not_looked_up.push_back(net::redact_url(where));
      continue;
    }
    try {
      const net::Response r = client.get(index::project_url(where, p.name), index::k_accept);
      const auto page = index::parse_project_page(r.body, r.content_type, r.url, p.name);
      read_release(page, p, client, release, release_error);
      for (auto& f : lock::files_for(page, p)) out.files.push_back(std::move(f));
    } catch (const net::NotFound&) {
      continue;  // not on this index (a 404 is an answer, not a failure): the others may have it
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal) throw;
      out.failed.push_back(e.what());
    }
  }
  return out;
}

// Whether the sha256 `sha` is one `p`'s hashes allow (requirements --hash; any when it lists none).
bool env_hash_allowed(const lock::Package& p, const std::string& sha) {
  return p.hashes.empty() || std::find(p.hashes.begin(), p.hashes.end(), ascii_lower(sha)) != p.hashes.end();
}

// What the command line names: a lock file (read once), or a wheel (a file or a URL).
struct Arg {
  std::optional<lock::Lock> lock;
  std::string wheel;
  bool beside = false;  // --with: installed, not checked
};

std::vector<Arg> load_args(const std::vector<std::string>& wheels, const std::vector<std::string>& with,
                           std::vector<std::string>& lock_paths) {
  std::vector<Arg> args;
  for (const auto* list : {&wheels, &with}) {
    for (const auto& w : *list) {
      Arg arg;
      arg.beside = list == &with;
      if (!net::is_url(w) && lock::is_lock_path(w)) {
        arg.lock = lock::load(w);
        lock_paths.push_back(w);
        for (const auto& warning : arg.lock->warnings) warn(w + ": " + warning);
      } else {
        arg.wheel = w;
      }
      args.push_back(std::move(arg));
    }
  }
  return args;
}

// Every wheel read once, whichever images pick it (by where it is), with the hashes it must have.
struct EnvPending {
  lock::File file;
  std::size_t at = 0;
  std::vector<std::string> allowed;  // the sha256 values the file may have ("" none: no hash was given)
  std::string claimed_by;            // who gives them: "the lock's --hash", "the lock", "its index", "its URL"
};

struct Wheels {
  std::vector<ReadWheel> read;
  std::map<std::string, std::size_t> at;
  std::vector<EnvPending> pending;
  std::size_t index(const lock::File& f, std::vector<std::string> allowed = {}, std::string claimed_by = {}) {
    auto [it, added] = at.emplace(f.where(), read.size());
    if (added) {
      read.emplace_back();
      pending.push_back({f, it->second, std::move(allowed), std::move(claimed_by)});
    }
    return it->second;
  }
  // A lock package's file: the lock's --hash values when it lists some, else the file's own sha256 (the
  // lock's, or its index page's).
  std::size_t index(const lock::File& f, const lock::Package& p) {
    if (!p.hashes.empty()) return index(f, p.hashes, "the lock's --hash");
    if (f.sha256().empty()) return index(f);
    return index(f, {ascii_lower(f.sha256())}, p.from_index() ? "its index" : "the lock");
  }
};

// The entries of the arguments for one image: each lock package resolved as an installer resolves it there.
std::vector<Entry> expand(const std::vector<Arg>& args, const image::Image& image, net::Client& client,
                          Wheels& wheels) {
  std::vector<Entry> entries;
  const image::Python* python = image.pythons.empty() ? nullptr : &image.pythons.front();
  const lock::MarkerEnv marker_env = lock::marker_env(image, python);
  for (const auto& arg : args) {
    if (!arg.lock) {
      Entry e;
      e.given = true;
      e.beside = arg.beside;
      e.name = arg.wheel.substr(arg.wheel.find_last_of('/') + 1);
      e.source = "command line";
      if (net::is_url(arg.wheel)) {
        const auto u = remote::parse_wheel_url(arg.wheel);
        e.file.url = arg.wheel;
        e.file.filename = u.filename;
        if (!u.sha256.empty()) e.file.hashes["sha256"] = u.sha256;
      } else {
        e.file.path = arg.wheel;
        e.file.filename = e.name;
      }
      e.wheel =
          e.file.sha256().empty() ? wheels.index(e.file) : wheels.index(e.file, {e.file.sha256()}, "its URL's #sha256");
      entries.push_back(std::move(e));
      continue;
    }
    for (const auto& pkg : arg.lock->packages) {
      Entry e;
      e.beside = arg.beside;
      e.name = pkg.name;
      e.version = pkg.version;
      e.source = pkg.source;
      if (!pkg.marker.empty() && !lock::evaluate_marker(pkg.marker, marker_env)) {
        e.state = Entry::State::Skipped;
        e.reason = "its marker (" + pkg.marker + ") does not hold for this image's Python";
        entries.push_back(std::move(e));
        continue;
      }
      if (!pkg.other.empty()) {
        e.state = Entry::State::NoWheel;
        e.reason = "installed from " + pkg.other + ", not a wheel: it cannot be checked";
        entries.push_back(std::move(e));
        continue;
      }
      std::vector<lock::File> files = pkg.wheels;
      std::string release_error;
      std::optional<variant::File> release;
      EnvLookup lookup;
      if (pkg.from_index()) {
        lookup = index_files(pkg, client, release, release_error);
        files = lookup.files;
      }
      const lock::Pick pick = lock::pick_wheel(files, pkg, image, release ? &*release : nullptr);
      if (pick.file == nullptr) {
        if (lookup.incomplete()) {
          // What was not asked may hold the wheel: the answer is unknown, not "no wheel".
          e.state = Entry::State::Unknown;
          e.reason = lookup.words() + ": whether a wheel for the image exists is unknown" +
                     (files.empty() ? std::string() : " (among the files found: " + pick.why + ")");
        } else {
          e.state = Entry::State::NoWheel;
          std::vector<std::string> places = pkg.find_links;
          places.insert(places.end(), pkg.indexes.begin(), pkg.indexes.end());
          e.reason = !files.empty() || !pkg.from_index() ? pick.why
                     : places.empty() ? std::string("the lock names no file and no index for it (--index-url)")
                                      : fmt::format("{}{} is on none of its indexes ({})", pkg.name,
                                                    pkg.version.empty() ? "" : "==" + pkg.version, join(places, ", "));
        }
        for (const auto& f : files) {
          if (f.url.empty() && !f.path.empty()) e.unpicked.push_back(wheels.index(f, pkg));
        }
        if (!release_error.empty()) e.reason += "; the release's variants file could not be read: " + release_error;
        entries.push_back(std::move(e));
        continue;
      }
      if (lookup.incomplete()) e.lookup_note = lookup.words() + "; picked among the files found, as pip picks then";
      // The lock's --hash against the sha256 the index gives the file picked: pip refuses to install it.
      if (const std::string sha = pick.file->sha256(); !sha.empty() && !env_hash_allowed(pkg, sha)) {
        e.state = Entry::State::Integrity;
        e.file = *pick.file;
        e.reason = fmt::format(
            "{} is not the file the lock's hash says: its index gives sha256 {}, the lock's --hash allows {}; pip "
            "refuses it (hash mismatch): do not pin it",
            printable(pick.file->filename), ascii_lower(sha), join(pkg.hashes, ", "));
        entries.push_back(std::move(e));
        continue;
      }
      e.file = *pick.file;
      e.variant = pick.variant;
      e.variant_note = pick.variant_note;
      if (!release_error.empty())
        e.variant_note +=
            (e.variant_note.empty() ? "" : "; ") + ("the release's variants file could not be read: " + release_error);
      e.depends_on = pick.depends_on;
      if (pick.without_variants != pick.file) {
        e.without_variants = pick.without_variants ? pick.without_variants->filename : std::string("none");
      }
      e.wheel = wheels.index(e.file, pkg);
      entries.push_back(std::move(e));
    }
  }
  return entries;
}

struct ReadOptions {
  std::string verify = "auto";
  const ProfileCache* cache = nullptr;
  bool progress = false;
  LimitArgs limits;
};

// A wheel's profile from the cache alone (offline: no socket): a full one of its claimed sha256 (verified
// when stored), else a headers-only one made earlier from this very URL with that claim.
std::optional<WheelProfile> env_cached(const lock::File& file, const InspectOptions& options, const ProfileCache* cache,
                                       bool headers_ok) {
  const std::string sha = ascii_lower(file.sha256());
  if (cache == nullptr || !is_sha256_hex(sha)) return std::nullopt;
  const std::string reader = elf::reader_name(options.reader);
  if (auto p = cache->load(sha, reader)) return p;
  if (headers_ok) return cache->load(sha, headers_key(reader, net::redact_url(file.url)));
  return std::nullopt;
}

// "FILE is not the file the lock's hash says: its sha256 is X, the lock's --hash allows Y": a file whose
// sha256 was computed from all of its bytes and is not one `pending` allows ("" when it is, or none is given).
std::string env_hash_mismatch(const EnvPending& pending, const WheelProfile& profile) {
  if (pending.allowed.empty() || profile.integrity != k_integrity_full || profile.sha256.empty()) return "";
  const std::string actual = ascii_lower(profile.sha256);
  if (std::find(pending.allowed.begin(), pending.allowed.end(), actual) != pending.allowed.end()) return "";
  const bool lock = pending.claimed_by.rfind("the lock", 0) == 0;
  return fmt::format("{} is not the file {} says: its sha256 is {}, {} {} {}: {}", printable(pending.file.filename),
                     lock ? "the lock's hash" : pending.claimed_by + "'s sha256", actual, pending.claimed_by,
                     pending.allowed.size() == 1 ? "says" : "allows", join(pending.allowed, ", "),
                     "an integrity failure of the file, so it was not checked; do not pin it");
}

// The pending wheels, read in parallel, each on its own (one that fails is that package's error): a URL
// headers-only where its server answers ranges (--verify full: downloaded whole, its sha256 computed and
// compared with the lock's), a file through the profile cache. Offline (WHEELCHECK_OFFLINE), a URL is read
// from the profile cache only. A file read in full whose sha256 is not the lock's is an integrity failure.
void read_pending(Wheels& wheels, std::unique_ptr<net::Client>& client, const ReadOptions& o) {
  auto& todo = wheels.pending;
  if (o.progress && todo.size() > 1) std::fprintf(stderr, "wheelcheck: reading %zu wheels\n", todo.size());
  std::atomic<std::size_t> done{0};
  std::mutex log_mutex;
  const bool offline = net::offline();
  parallel_for(todo.size(), std::min<unsigned>(8, static_cast<unsigned>(std::max<std::size_t>(1, todo.size()))),
               [&](std::size_t i, unsigned) {
                 const EnvPending& pending = todo[i];
                 const lock::File& file = pending.file;
                 ReadWheel& r = wheels.read[pending.at];
                 try {
                   InspectOptions options;
                   if (file.url.empty()) {
                     r.profile = inspect_any(file.path, options, o.verify, o.cache, client, false, o.limits).profile;
                   } else {
                     apply_limits(o.limits, options);
                     const remote::Mode mode = o.verify == "full"      ? remote::Mode::Full
                                               : o.verify == "headers" ? remote::Mode::Headers
                                                                       : remote::Mode::Auto;
                     if (offline || mode == remote::Mode::Full) {
                       r.profile = env_cached(file, options, o.cache, mode != remote::Mode::Full);
                       if (r.profile) r.from_cache = true;
                     }
                     if (!r.profile && offline) {
                       r.offline = fmt::format("{}: {} was not read (and the profile cache has no profile of it)",
                                               k_env_offline_words, net::redact_url(file.url));
                     } else if (!r.profile) {
                       remote::Fetch fetch;
                       fetch.mode = mode;
                       // A whole download is compared with the lock's hash here, after it is read, so that a
                       // mismatch is said as one (the claim is still the key of a headers-only read).
                       std::string url = file.url;
                       if (mode != remote::Mode::Full) {
                         fetch.sha256 = file.sha256();
                       } else {
                         url = remote::parse_wheel_url(file.url).url;
                       }
                       auto fetched = remote::inspect_url(url, fetch, options, o.cache, *client);
                       r.bytes_fetched = fetched.bytes_fetched;
                       r.from_cache = fetched.from_cache;
                       r.whole = fetched.whole;
                       r.profile = std::move(fetched.profile);
                     }
                   }
                   // The lock's hash against what was read in full (a local file, a whole download).
                   if (r.profile) {
                     r.integrity = env_hash_mismatch(pending, *r.profile);
                     if (!r.integrity.empty()) r.profile.reset();
                   }
                 } catch (const Error& e) {
                   if (e.kind() == ErrorKind::Internal) throw;
                   r.profile.reset();
                   r.error = e.what();
                 }
                 if (o.progress) {
                   std::lock_guard<std::mutex> lock(log_mutex);
                   std::fprintf(stderr, "wheelcheck: [%zu/%zu] %s%s\n", ++done, todo.size(), file.filename.c_str(),
                                !r.error.empty() || !r.integrity.empty() ? " (failed)"
                                : !r.offline.empty()                     ? " (offline: not read)"
                                                                         : "");
                 }
               });
  todo.clear();
}

}  // namespace

std::function<std::vector<const WheelProfile*>(const image::Image&)> installed_beside(
    const std::vector<std::string>& with, const std::string& verify, const ProfileCache* cache,
    std::unique_ptr<net::Client>& client, bool progress, const LimitArgs& limits) {
  if (with.empty()) return {};
  std::vector<std::string> locks;
  auto args = std::make_shared<std::vector<Arg>>(load_args({}, with, locks));
  auto wheels = std::make_shared<Wheels>();
  if (!client) client = std::make_unique<net::Client>(client_options(!progress, limits));
  ReadOptions o{verify, cache, progress, limits};
  return [args, wheels, &client, o](const image::Image& image) {
    std::vector<Entry> entries = expand(*args, image, *client, *wheels);
    read_pending(*wheels, client, o);
    std::vector<const WheelProfile*> out;
    for (const auto& e : entries) {
      if (e.state != Entry::State::Checked) {
        warn(fmt::format("--with: {} on {}: {}", e.name, image.name, e.reason));
        continue;
      }
      const ReadWheel& r = wheels->read[e.wheel];
      if (!r.profile) {
        warn(fmt::format("--with: {} on {}: {}", e.file.filename, image.name,
                         !r.integrity.empty() ? r.integrity
                         : !r.offline.empty() ? r.offline
                                              : r.error));
        continue;
      }
      out.push_back(&*r.profile);
    }
    return out;
  };
}

int check_environment(const CheckArgs& a, output::Format format, bool gates_output) {
  require_images(a);
  image::Db db(image::Db::locate(a.db));
  const std::optional<ProfileCache> cache = open_cache(a.no_cache, a.cache_dir, a.cache_max_size);
  const ProfileCache* cache_ptr = cache ? &*cache : nullptr;
  const bool progress = show_progress(a.quiet);
  std::unique_ptr<net::Client> client = std::make_unique<net::Client>(client_options(!progress, a.limits));
  std::vector<std::string> lock_paths;
  const std::vector<Arg> args = load_args(a.wheels, a.with, lock_paths);
  ImageRequest request;
  request.env = parse_env(a.image_env, "--image-env");
  request.platform = a.platform;
  request.cache_dir = a.cache_dir;
  request.quiet = a.quiet;
  request.progress = progress;
  request.limits = &a.limits;
  auto images = resolve_images(a.images, db, request);
  apply_assumptions(images, a.assume);
  if (gates_output && images.size() != 1) throw usage_error("gates need exactly one --image");
  const run::RuleChoice rules(a.rules, db.dir() + "/rules");

  Wheels set_wheels;
  std::vector<Environment> envs;
  for (const auto& t : images) {
    Environment env;
    env.image = t.image.name;
    env.entries = expand(args, t.image, *client, set_wheels);
    envs.push_back(std::move(env));
  }
  read_pending(set_wheels, client, ReadOptions{a.verify, cache_ptr, progress, a.limits});
  const std::vector<ReadWheel>& wheels = set_wheels.read;

  const run::Context context{{}, &rules, &db, &a.accepted};
  const run::Published published = published_of(a, cache_ptr, progress);
  const std::vector<rules::RuleSet> closed = fail_closed_sets(a.rules, a.db);
  // The one run (run::run): on each image the set installed together, each package judged on its own with
  // the others as providers; a package beside the set (--with) is judged too, its routes that are off
  // turning their gates off. A package without a wheel for the image, or one that could not be read, makes
  // it incompatible; one that could not be read leaves its gates nothing to vouch for.
  run::Request asked{{}, context, run::Installed::Together, &published};
  std::vector<std::vector<std::size_t>> entry_of(images.size());  // per image: packages[j] is entries[entry_of[j]]
  for (std::size_t k = 0; k < images.size(); ++k) {
    Environment& env = envs[k];
    run::Request::On on{&images[k], {}, {}, {}};
    for (std::size_t i = 0; i < env.entries.size(); ++i) {
      Entry& e = env.entries[i];
      if (e.state == Entry::State::Checked && !wheels[e.wheel].profile) {
        const ReadWheel& r = wheels[e.wheel];
        e.state = !r.integrity.empty() ? Entry::State::Integrity
                  : !r.offline.empty() ? Entry::State::Unknown
                                       : Entry::State::Error;
        e.reason = !r.integrity.empty() ? r.integrity : !r.offline.empty() ? r.offline : r.error;
      } else if (e.state == Entry::State::Checked && (e.name.empty() || e.given)) {
        e.name = wheels[e.wheel].profile->filename.name;
        e.version = wheels[e.wheel].profile->filename.version;
      }
      // Only a package nothing installs on the image makes it incompatible; one whose answer is unknown
      // (not looked up, not read offline) makes it unknown at least, below; a file that is not the lock's
      // is an integrity failure (exit 2, the gates fail closed), one that could not be read an error (exit 2).
      if (e.state == Entry::State::NoWheel) on.missing.push_back(e.name);
      if (e.state == Entry::State::Integrity)
        on.problems.push_back({run::Problem::Kind::LockHash, e.name + ": " + e.reason});
      for (const std::size_t u : e.unpicked) {
        if (!wheels[u].profile) continue;  // unread: no installer takes it here, so its error is not this image's
        for (auto& line : verdict::integrity_problems(*wheels[u].profile))
          on.problems.push_back({run::Problem::Kind::OwnIntegrity, std::move(line)});
      }
      if (e.state == Entry::State::Error) {
        on.packages.push_back({nullptr, e.name + ": " + e.reason, run::Role::Checked});
      } else if (e.state == Entry::State::Checked) {
        on.packages.push_back({&*wheels[e.wheel].profile, "", e.beside ? run::Role::Beside : run::Role::Checked});
      } else {
        continue;
      }
      entry_of[k].push_back(i);
    }
    asked.images.push_back(std::move(on));
  }
  run::Result result = run::run(asked);
  // A package whose answer is unknown, whose file is not the lock's, or whose wheel could not be read was
  // not judged: the environment is unknown at least (incompatible where something else decides it).
  for (std::size_t k = 0; k < images.size(); ++k) {
    for (const Entry& e : envs[k].entries) {
      if (e.state == Entry::State::Unknown || e.state == Entry::State::Integrity || e.state == Entry::State::Error) {
        result.environments[k].verdict = verdict::worst(result.environments[k].verdict, verdict::Verdict::Unknown);
      }
    }
    result.verdict = verdict::worst(result.verdict, result.environments[k].verdict);
  }
  for (std::size_t k = 0; k < images.size(); ++k) {
    Environment& env = envs[k];
    env.judged = &result.environments[k];
    for (std::size_t c = 0; c < env.judged->cells.size(); ++c) {
      env.cell_entry.push_back(entry_of[k][env.judged->package_of[c]]);
    }
    env.verdict = env.judged->verdict;
    env.bad_input = !env.judged->problems.empty();
    for (const auto& p : env.judged->problems) {
      if (p.kind == run::Problem::Kind::OwnIntegrity) env.integrity.push_back(p.text);
    }
  }
  for (const Environment& env : envs) {
    for (const Entry& e : env.entries) {
      if (e.state == Entry::State::Integrity) std::fprintf(stderr, "wheelcheck: error: %s\n", e.reason.c_str());
    }
  }
  for (const auto& p : result.problems) {
    if (p.kind == run::Problem::Kind::OwnIntegrity) std::fprintf(stderr, "wheelcheck: error: %s\n", p.text.c_str());
  }
  // The answer: the environments as judged, and their gates (a package without a wheel for the image makes
  // the environment's verdict, whatever its wheels say; a wheel that could not be read, or whose hash is not
  // the lock's, leaves the gates nothing to vouch for).
  const int rc = a.gates ? result.exit_code(true) : exit_with(a, result.exit_code(false));
  for (Environment& env : envs) env.gates = run::gates_of({env.judged}, closed);
  output::EnvironmentAnswer answer{&envs, &wheels, &lock_paths, &images, {}, gates_output, rc};
  gates::Options o = a.gate_options;  // a vendor's path is set only on that vendor's image
  if (images.size() == 1 && images.front().image.toolkit)
    o.image_toolkit = image::toolkit_kind_name(images.front().image.toolkit->kind);
  const output::Sinks sinks = sinks_for(a);
  if (output::reads_gates(format, gates_output, sinks)) answer.gates = result.gates(closed, o);
  output::print({std::move(answer)}, format, sinks);
  return rc;
}

}  // namespace wheelcheck::cli
