// The nightly scan (`wheelcheck scan`).
//
// 1. Pages. Each project's page is fetched from each index with the PEP 691 Accept header and, when the
//    state holds an earlier answer, its ETag / Last-Modified: a 304 reuses the stored body. An index
//    that stays unreadable after the client's retries makes the scan's exit code 2 (the rest still runs).
// 2. New wheels. A wheel is known by its file name and sha256; the state remembers every one seen, with
//    its verdicts. A wheel not in the state is new (with --since, only if uploaded on or after the date);
//    --shard K/N keeps the new wheels whose file-name hash falls in shard K (scan::shard_of: the name alone,
//    so a wheel's shard never changes when others are added), so a CI matrix splits the work. Yanked status
//    is read from the page on every run, never from the state.
// 3. Checks. Each new wheel's profile comes from the profile cache, else from the index (headers-only in
//    byte ranges where the server allows, else a whole download verified against its sha256), and is
//    checked against the images by run::check, the one check every command shares: the images given
//    (resolved by the command line's --image resolver), else every FlagOS image of the db. A cell pip would
//    not install (tags, Requires-Python) is "not targeted", left out of the report but remembered; one whose
//    label names another image's build (run::label_elsewhere) keeps the loader's verdict and is not counted.
//    Exit 1 when a new wheel is incompatible with an image it is for.
// 4. Pins. For each image and project, versions newest first: the first wheel that is not yanked, that is
//    for the image (run::not_targeted, run::label_elsewhere: +cu126 on a CUDA 13 image is passed over), and
//    whose verdict there is compatible, degraded (with its gates) or unknown (with its conditions); every newer
//    one is listed with why it was passed over. No pin is made for an image no file of the project is for
//    (inspector/scan/pins.cpp). The state is written from the typed cells, never read back from the report's JSON.
//    The report is one typed value (scan::Report); its JSON is written and read only at the file's edge
//    (inspector/output/report_json.cpp).
// 5. The state commits last: the caller writes the report (JSON, Markdown, HTML), the pins and standard
//    output, then calls Result::commit, which writes the state in one rename. A scan whose outputs could
//    not be written leaves the state as it was, so the next one reports the same new wheels. A lock in
//    the state folder (flock) makes two scans on one state take turns.
// 6. The record (state.hpp): beside the state, what the run fetched and each new wheel's report entry.
//    `scan --merge` of the shards' folders (shards.cpp checks the set is whole) runs steps 1-5 again with
//    every answer and entry taken from them, never the network: the report, pins, state and record are the
//    ones one process writes.
#include "wheelcheck/scan.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

#include "inspector/scan/pins.hpp"
#include "inspector/scan/shards.hpp"
#include "inspector/scan/state.hpp"
#include "inspector/scan/variants.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/index.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/published.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::scan {

namespace {

using Json = nlohmann::ordered_json;
using detail::Listing;
using detail::ScanTarget;
using detail::State;
using detail::version_of;
using detail::wheel_key;

std::string now_iso() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// --- the run ---------------------------------------------------------------------------------------------

class Scan {
 public:
  Scan(const Options& o, const image::Db& db, net::Client& client, const ProfileCache* cache,
       const detail::Shards* merge)
      : m_o(o),
        m_db(db),
        m_client(client),
        m_cache(cache),
        m_state(o.state_dir, m_warnings),
        m_rules(o.rules, db.dir() + "/rules"),
        m_providers(toolkit::load_providers(db)),
        m_explicit(!o.targets.empty() || !o.images.empty()),
        m_merge(merge) {
    // The images the caller resolved (the command line's one --image resolver: names, patterns, files,
    // folders), else db names, else every FlagOS image of the db: not the packaging targets (what
    // `inspect` measures a wheel against, not places it runs), nor the generic distributions.
    for (const auto& t : o.targets) m_targets.push_back({t.image.name, t});
    for (const auto& name : o.images) m_targets.push_back({name, {db.resolve(name), nullptr}});
    if (!m_explicit) {
      for (const auto& name : db.image_names()) {
        auto im = db.get(name);
        if (im.group != "target" && im.group != "generated") m_targets.push_back({name, {std::move(im), nullptr}});
      }
    }
    for (auto& t : m_targets) image::assume_all(t.target.image, o.assume, "--assume");
    m_published.client = client.options();
    m_published.options.mode = o.mode == remote::Mode::Full ? remote::Mode::Full : remote::Mode::Auto;
    m_published.options.inspect = o.inspect;
    m_published.options.cache = cache;
    m_published.options.log = o.progress;
    m_published.warn = [this](const std::string& line) { m_published_lines.push_back(line); };
    m_options = options_json();  // before any check (a check fills an image's published tables in)
    if (m_merge) start_merge();
  }
  Scan(const Scan&) = delete;  // m_published's warn holds `this`
  Scan& operator=(const Scan&) = delete;

  Report run() {
    read_pages();
    check_new_wheels();
    Report report;
    report.generated_at = now_iso();
    report.wheelcheck_version = WHEELCHECK_VERSION;
    for (const auto& i : m_o.indexes) report.indexes.push_back(net::redact_url(i));
    report.projects = m_o.projects;
    report.images = report_images();
    report.shard = m_merge ? Shard{0, m_merge->count(), true} : Shard{m_o.shard_index, m_o.shard_count, false};
    report.since = m_o.since;
    report.environment = m_o.environment_args;
    report.wheels_seen = m_listings.size();
    report.wheels = m_wheels;
    for (auto& w : report.wheels) {  // the cells of the report's images
      std::erase_if(w.results, [&](const Checked& c) {
        return std::find(report.images.begin(), report.images.end(), c.cell.image) == report.images.end();
      });
    }
    report.pins = detail::pins({m_o.projects, m_listings, m_targets, m_releases, m_state, m_explicit, m_o.since});
    report.warnings = m_warnings;
    std::vector<std::string> names;
    for (const auto& t : m_targets) names.push_back(t.target.image.name);
    for (auto& line : detail::published_warnings(m_published_lines, names)) report.warnings.push_back(std::move(line));
    report.errors = m_errors;
    m_state.record = record();
    return report;
  }

  // The state, to be committed by the caller once the outputs are written (it keeps the lock).
  std::shared_ptr<State> take_state() { return std::make_shared<State>(std::move(m_state)); }

 private:
  void say(const std::string& line) const {
    if (m_o.progress) m_o.progress(line);
  }

  // Asks for a file the state keeps with its validators (a project's page; a release's variants file, which is
  // mutable): an unchanged one (304) comes from the state. `read` makes what the caller wants of the body, its
  // content type and final URL; an answer it refuses (throws) is not kept. What each URL answered goes in the
  // run's record; a merge of shards answers from the shards' records and states, never the network.
  template <typename Read>
  auto kept(const std::string& url, const char* accept, const Read& read) {
    if (m_merge) {
      auto f = m_merge->fetched(url);
      if (f.differed) {
        m_warnings.push_back(url +
                             ": the shards read different answers (it changed while they ran); the first "
                             "shard's that read it is used");
      }
      if (f.body) {
        for (const auto& line : f.failed) {
          m_warnings.push_back(line);
          m_errors.push_back(line);  // exit code 2
        }
      }
      m_fetched[url] = f.outcome;
      if (!f.body) {
        if (f.outcome.is_null()) throw bad_input("no shard's record says what " + url + " answered");
        if (f.outcome.value("not_found", false)) throw net::NotFound(f.outcome.value("error", std::string()));
        throw Error(ErrorKind::BadInput, f.outcome.value("error", std::string()));
      }
      m_state.adopt_page(url, f.entry, *f.body);
      return read(*f.body, f.entry.value("content_type", ""), f.entry.value("final_url", url));
    }
    try {
      net::Validators validators;
      const auto cached_body = m_state.page_body(url);
      if (cached_body) {
        const auto& entry = m_state.pages()[url];
        validators.etag = entry.value("etag", "");
        validators.last_modified = entry.value("last_modified", "");
      }
      auto r = m_client.get(url, accept, validators);
      if (r.not_modified() && cached_body) {
        const auto& entry = m_state.pages()[url];
        auto out = read(*cached_body, entry.value("content_type", ""), entry.value("final_url", url));
        m_fetched[url] = Json{{"sha256", detail::sha256_text(*cached_body)}};
        return out;
      }
      auto out = read(r.body, r.content_type, r.url);
      m_state.remember_page(url, r);
      m_fetched[url] = Json{{"sha256", detail::sha256_text(r.body)}};
      return out;
    } catch (const net::NotFound& e) {
      m_fetched[url] = Json{{"error", e.what()}, {"not_found", true}};
      throw;
    } catch (const Error& e) {
      m_fetched[url] = Json{{"error", e.what()}, {"not_found", false}};
      throw;
    }
  }

  void read_pages() {
    std::size_t n = 0;
    const std::size_t total = m_o.indexes.size() * m_o.projects.size();
    for (const auto& project : m_o.projects) {
      std::set<std::string> seen_urls;
      std::size_t found_on = 0;
      bool failed = false;
      for (const auto& idx : m_o.indexes) {
        say(fmt::format("page {}/{}: {} on {}", ++n, total, project, net::redact_url(idx)));
        try {
          auto page = kept(index::project_url(idx, project), index::k_accept,
                           [&](const std::string& body, const std::string& type, const std::string& final_url) {
                             return index::parse_project_page(body, type, final_url, project);
                           });
          ++found_on;
          for (const auto& w : page.warnings) m_warnings.push_back(net::redact_url(page.url) + ": " + w);
          for (auto& f : page.files) {
            if (const auto version = detail::variants_version(f.filename, project)) {
              read_release(project, *version, f);
              continue;
            }
            if (f.filename.size() < 4 || f.filename.compare(f.filename.size() - 4, 4, ".whl") != 0) continue;
            if (!seen_urls.insert(f.url).second) continue;  // an index that lists a file twice
            m_listings.push_back({project, idx, std::move(f)});
          }
        } catch (const net::NotFound& e) {
          // Not on this index: normal when each vendor has its own index (pip reads a 404 the same way), whether
          // the index said so now or, in a merge, to the shard that read it. Said on the progress line; the
          // report names a project only when no index has it.
          say(fmt::format("page: {} is not on {} ({})", project, net::redact_url(idx), e.what()));
        } catch (const Error& e) {
          failed = true;  // its error makes the exit code 2
          m_warnings.push_back(fmt::format("{}: {} unreadable: {}", net::redact_url(idx), project, e.what()));
          m_errors.push_back(m_warnings.back());
        }
      }
      if (found_on == 0 && !failed) {
        m_warnings.push_back(fmt::format("project {} is on none of the indexes (a misspelt name?)", project));
        m_errors.push_back(m_warnings.back());
      }
    }
    std::stable_sort(m_listings.begin(), m_listings.end(), [](const Listing& a, const Listing& b) {
      return std::tie(a.project, a.file.filename) < std::tie(b.project, b.file.filename);
    });
  }

  // A release's variants file (the first an index lists for the version): read once a run, conditionally.
  void read_release(const std::string& project, const std::string& version, const index::File& f) {
    auto& releases = m_releases[project];
    if (releases.files.count(version) != 0) return;
    try {
      const auto parse = [&](const std::string& body, const std::string&, const std::string&) {
        return variant::parse(body, f.filename);
      };
      releases.files.emplace(version, kept(f.url, "application/json", parse));
      releases.errors.erase(version);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal) throw;
      releases.errors[version] = e.what();
      m_warnings.push_back(fmt::format("{}: {}", net::redact_url(f.url), e.what()));
    }
  }

  bool is_new(const Listing& l) const {
    if (m_o.since && l.file.upload_time && l.file.upload_time->substr(0, 10) < *m_o.since) return false;
    return true;
  }

  // The report's entry of a listed wheel before it is read.
  Wheel listing_wheel(const Listing& l) const {
    Wheel w;
    w.filename = l.file.filename;
    w.project = l.project;
    w.version = version_of(l);
    w.url = net::redact_url(l.file.url);
    w.sha256 = l.file.sha256();
    w.size = l.file.size;
    w.upload_time = l.file.upload_time;
    w.yanked = l.file.yanked;
    w.yanked_reason = l.file.yanked_reason;
    w.integrity = m_o.mode == remote::Mode::Full ? k_integrity_full : k_integrity_headers;
    return w;
  }

  void check_new_wheels() {
    m_base = detail::keys_digest(m_state.wheels());
    std::vector<const Listing*> todo;
    for (const auto& l : m_listings) {
      const std::string key = wheel_key(l.file.filename, l.file.sha256());
      if (m_state.wheels().contains(key) || !is_new(l)) continue;
      if (!m_merge && !in_shard(l.file.filename, m_o.shard_index, m_o.shard_count)) continue;
      todo.push_back(&l);
    }
    std::size_t n = 0;
    for (const auto* l : todo) {
      ++n;
      if (m_merge) {
        adopt(*l);
        continue;
      }
      Wheel w = listing_wheel(*l);
      say(fmt::format("wheel {}/{}: {}", n, todo.size(), l->file.filename));
      const std::size_t errors_before = m_errors.size(), published_before = m_published_lines.size();
      bool read = false;
      std::vector<run::Cell> cells;
      try {
        remote::Fetch fetch;
        fetch.mode = m_o.mode;
        fetch.sha256 = l->file.sha256();
        if (m_o.progress) {
          fetch.progress = [this, &l](const net::DownloadProgress& p) {
            say(fmt::format("download {}: {} / {} at {}/s", l->file.filename, format_size(p.done),
                            p.total != 0 ? format_size(p.total) : std::string("?"),
                            format_size(static_cast<std::uint64_t>(p.bytes_per_second))));
          };
        }
        const auto fetched = remote::inspect_url(l->file.url, fetch, m_o.inspect, m_cache, m_client);
        w.integrity = fetched.profile.integrity;
        if (fetched.profile.has_problems()) {
          const auto& pr = !fetched.profile.problems.empty() ? fetched.profile.problems.front()
                                                             : fetched.profile.record_problems.front();
          w.error = fmt::format("{}: {} {}", pr.kind, pr.path, pr.detail);
          m_errors.push_back(l->file.filename + ": " + *w.error);
        }
        read = true;
        w.publisher = publisher(fetched.profile);
        cells = check(fetched.profile);
        w.results = results_of(cells, l->file);
      } catch (const Error& e) {
        w.error = e.what();
        m_errors.push_back(l->file.filename + ": " + e.what());
      }
      // As the report and the shard's record hold it (the one writer and reader): a merge says the same of it.
      w = wheel_from_json(to_json(w));
      const bool incompatible = std::any_of(w.results.begin(), w.results.end(), [](const Checked& c) {
        return c.counted && c.cell.report.verdict == verdict::Verdict::Incompatible;
      });
      // The run's record of the wheel (shard.json): what a merge of the shards needs to say what this run says.
      Json entry{{"key", wheel_key(l->file.filename, l->file.sha256())},
                 {"report", to_json(w)},
                 {"errors", std::vector<std::string>(m_errors.begin() + static_cast<std::ptrdiff_t>(errors_before),
                                                     m_errors.end())},
                 {"published",
                  std::vector<std::string>(m_published_lines.begin() + static_cast<std::ptrdiff_t>(published_before),
                                           m_published_lines.end())},
                 {"failed", w.failed()},
                 {"incompatible", incompatible},
                 {"remembered", read}};
      m_entries.push_back(std::move(entry));
      // A wheel that could not be fetched (the network, a hash mismatch, a server that stopped answering)
      // is not remembered: the next scan tries it again. One that was read is remembered, problems and
      // all: a broken wheel is reported once, not every night.
      if (read) remember(*l, w, cells);
      m_wheels.push_back(std::move(w));
    }
  }

  // A wheel read, in the state: from the typed cells, in the one shape of a cell (run::to_json: a record, the
  // report's results one size up); images the wheel is not for, with why.
  void remember(const Listing& l, const Wheel& w, const std::vector<run::Cell>& cells) {
    Json remembered{{"filename", l.file.filename}, {"project", l.project},
                    {"version", version_of(l)},    {"sha256", l.file.sha256()},
                    {"first_seen", now_iso()},     {"error", w.error ? Json(*w.error) : Json()},
                    {"results", Json::object()}};
    for (const auto& c : cells) remembered["results"][c.image] = run::to_json(c, run::Size::Record);
    m_state.wheels()[wheel_key(l.file.filename, l.file.sha256())] = remembered;
  }

  // --- shards and their merge (inspector/scan/shards.cpp reads and checks the set) ---

  // What the shards of one scan must share, kept in each shard's record: a merge refuses shards that differ.
  Json options_json() const {
    Json images = Json::array();
    for (const auto& t : m_targets) {
      images.push_back(Json{{"name", t.name}, {"sha256", detail::sha256_text(image::to_json(t.target.image).dump())}});
    }
    Json indexes = Json::array();
    for (const auto& i : m_o.indexes) indexes.push_back(net::redact_url(i));
    return Json{{"wheelcheck_version", WHEELCHECK_VERSION},
                {"indexes", indexes},
                {"projects", m_o.projects},
                {"images", images},
                {"images_given", m_explicit},
                {"since", m_o.since ? Json(*m_o.since) : Json(nullptr)},
                {"rules", m_o.rules},
                {"verify", m_o.mode == remote::Mode::Full      ? "full"
                           : m_o.mode == remote::Mode::Headers ? "headers"
                                                               : "auto"},
                {"environment", m_o.environment_args}};
  }

  // The run's record (shard.json). A merge's is the record one process would have written (shard 1 of 1).
  Json record() const {
    return Json{{"schema", detail::k_record_schema},
                {"shard", Json{{"index", m_merge ? 1 : m_o.shard_index}, {"count", m_merge ? 1 : m_o.shard_count}}},
                {"options", m_options},
                {"base", m_base},
                {"fetched", m_fetched},
                {"wheels", m_entries}};
  }

  // The merge's state starts as the one the shards started from: the state folder given, when it is that one,
  // else the base carried in the first shard's folder.
  void start_merge() {
    if (auto diff = detail::options_difference(m_merge->options(), m_options); !diff.empty()) {
      throw bad_input("scan --merge: the shards ran with other options than this merge (" + diff +
                      "): give the merge the shard runs' --index, --project, --image, --assume, --since, --rules, "
                      "--verify and --with");
    }
    if (!m_state.kept()) throw usage_error("scan --merge needs a --state folder to write the merged state to");
    if (!m_state.empty()) {
      if (detail::keys_digest(m_state.wheels()) != m_merge->base()) {
        throw bad_input("scan --merge: the state " + m_state.dir() +
                        " is not the one the shards started from: merge into that state, or into an empty folder");
      }
      return;
    }
    m_state.pages();  // the order one process writes: pages, then wheels
    const Json pages = m_merge->base_pages(), wheels = m_merge->base_wheels();
    for (const auto& [url, entry] : pages.items()) {
      if (auto body = m_merge->folder(1).body(url)) m_state.adopt_page(url, entry, std::move(*body));
    }
    for (const auto& [key, value] : wheels.items()) m_state.wheels()[key] = value;
  }

  // A new wheel of the merge: what the shard that owns it (its file-name hash) found, as that shard recorded it.
  void adopt(const Listing& l) {
    const std::string key = wheel_key(l.file.filename, l.file.sha256());
    const int owner = shard_of(l.file.filename, m_merge->count());
    const Json* e = m_merge->entry(owner, key);
    const Json* remembered = e != nullptr && e->value("remembered", false) ? m_merge->remembered(owner, key) : nullptr;
    if (e == nullptr || (e->value("remembered", false) && remembered == nullptr)) {
      // Its shard did not check it (it read the index before the file was uploaded, or it could not read the
      // index): an error, never a smaller report; not remembered, so the next scan checks it.
      Wheel w = listing_wheel(l);
      w.error = fmt::format("not checked: {} did not check it (its record has no entry for it); rerun the shard",
                            m_merge->where(owner));
      m_errors.push_back(l.file.filename + ": " + *w.error);
      m_wheels.push_back(std::move(w));
      return;
    }
    Json entry = *e;
    Wheel w;
    try {
      w = wheel_from_json(entry["report"]);
    } catch (const Error& err) {
      throw bad_input(
          fmt::format("scan --merge: {} records {} in a form this wheelcheck cannot read ({}): rerun the shard",
                      m_merge->where(owner), l.file.filename, err.what()));
    }
    for (const auto& line : entry["errors"]) m_errors.push_back(line.get<std::string>());
    // A published table is read once a process: a line another shard said first is not said again.
    Json published = Json::array();
    for (const auto& line : entry["published"]) {
      if (std::find(m_published_lines.begin(), m_published_lines.end(), line) != m_published_lines.end()) continue;
      m_published_lines.push_back(line.get<std::string>());
      published.push_back(line);
    }
    entry["published"] = std::move(published);
    for (const auto& c : w.results) {
      if (m_explicit || (c.cell.targeted && !labelled_elsewhere(l.file, c.cell.image)))
        m_used_images.insert(c.cell.image);
    }
    if (remembered != nullptr) m_state.wheels()[key] = *remembered;
    m_entries.push_back(std::move(entry));
    m_wheels.push_back(std::move(w));
  }

  // The wheel on its own, once (not per image): what it claims against its binaries (`wheelcheck lint`).
  lint::Report publisher(const WheelProfile& profile) {
    lint::Options o;
    o.providers = &m_providers;
    o.policies = m_db.policies_if_present();
    o.rules = m_rules.for_wheel(profile);
    o.db = &m_db;
    o.accepted = &m_o.accepted;
    for (const auto& [project, releases] : m_releases) {
      if (wheel::normalize_project_name(project) == wheel::normalize_project_name(profile.filename.name)) {
        o.release = releases.of(profile.filename.version);
      }
    }
    return lint::lint(profile, o);
  }

  // The cells of one wheel, through the one check every command shares; by default only the images it is
  // for appear in the report (those it is not for are remembered, so that the pins pass over them).
  std::vector<run::Cell> check(const WheelProfile& profile) {
    std::vector<run::Cell> cells;
    run::Request asked{{}, {{}, &m_rules, &m_db, &m_o.accepted}, run::Installed::Together, &m_published};
    for (auto& t : m_targets) {
      // The environment of the image (once per image), less the checked wheel's own project.
      std::vector<const WheelProfile*> beside;
      if (m_o.environment) {
        auto it = m_environments.find(t.name);
        if (it == m_environments.end()) it = m_environments.emplace(t.name, m_o.environment(t.target.image)).first;
        const std::string mine = wheel::normalize_project_name(profile.filename.name);
        for (const WheelProfile* w : it->second) {
          if (wheel::normalize_project_name(w->filename.name) != mine) beside.push_back(w);
        }
      }
      // The new wheel checked, the environment's wheels only providing.
      run::Request::On on{&t.target, {{&profile, "", run::Role::Checked}}, {}, {}};
      for (const WheelProfile* w : beside) on.packages.push_back({w, "", run::Role::Provider});
      asked.images.push_back(std::move(on));
    }
    // The one run (run::run) over every image of the scan.
    run::Result result = run::run(asked);
    for (std::size_t k = 0; k < m_targets.size(); ++k) {
      run::Cell cell = std::move(result.environments[k].cells.front());
      cell.image = m_targets[k].name;
      cells.push_back(std::move(cell));
    }
    return cells;
  }

  // A cell the scan counts (exit code, "verdict" output, pins): pip would install the wheel there and its label or
  // name does not say it is another image's build (+cu130 on a TOPS image). Labels choose the build per image;
  // the cell's verdict, shown wherever the image is, is still the loader's ("counted": false beside it).
  bool counts(const run::Cell& c, const index::File& f) const { return c.targeted && !labelled_elsewhere(f, c.image); }
  bool labelled_elsewhere(const index::File& f, const std::string& image) const {
    return detail::labelled_elsewhere(f, image, m_targets);
  }

  std::vector<Checked> results_of(const std::vector<run::Cell>& cells, const index::File& f) {
    std::vector<Checked> results;
    // Every cell: run() keeps the report's images', one not targeted counted so, never a missing result.
    for (const auto& c : cells) {
      results.push_back(checked_of(c, counts(c, f)));
      if (m_explicit || counts(c, f)) m_used_images.insert(c.image);
    }
    return results;
  }

  std::vector<std::string> report_images() const {
    std::vector<std::string> out;
    for (const auto& t : m_targets) {
      if (m_explicit || m_used_images.count(t.name) != 0) out.push_back(t.name);
    }
    return out;
  }

  const Options& m_o;
  const image::Db& m_db;
  net::Client& m_client;
  const ProfileCache* m_cache;
  run::Published m_published;  // how run::judge reads the tables an image's published distributions lack
  std::vector<std::string> m_warnings;
  std::vector<std::string> m_published_lines;  // "DIST on IMAGE: ..." from run::fill_published
  std::vector<std::string> m_errors;           // what makes the exit code 2, each said as an error too
  State m_state;
  run::RuleChoice m_rules;
  std::vector<toolkit::Provider> m_providers;  // db/providers.json: the publisher check of each new wheel
  bool m_explicit;                             // images were given: every one is reported, targeted or not
  std::vector<ScanTarget> m_targets;
  std::map<std::string, std::vector<const WheelProfile*>> m_environments;  // by target name (--with)
  std::vector<Listing> m_listings;                                         // every wheel file the indexes list
  std::map<std::string, detail::Releases> m_releases;  // by project as asked: its releases' variants files
  std::set<std::string> m_used_images;
  std::vector<Wheel> m_wheels;      // the new ones, every cell (run() keeps the report's images')
  const detail::Shards* m_merge;    // `scan --merge`: the shards whose results this run joins (null: a scan)
  std::string m_base;               // the digest of the state this run started from
  Json m_options;                   // what the shards of one scan share (the record's "options")
  Json m_fetched = Json::object();  // URL -> what it answered (the record's "fetched")
  Json m_entries = Json::array();   // the record's entry of each new wheel, in the report's order
};

}  // namespace

std::pair<int, int> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used = 0;
    const int i = std::stoi(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("i");
    const std::string rest = text.substr(slash + 1);
    const int n = std::stoi(rest, &used);
    if (used != rest.size() || i < 1 || n < 1 || i > n || n > 10000) throw std::invalid_argument("range");
    return {i, n};
  } catch (const std::exception&) {
    throw usage_error("--shard " + text + ": expected i/N with 1 <= i <= N (e.g. 2/4)");
  }
}

int shard_of(const std::string& filename, int count) {
  return count <= 1 ? 1 : static_cast<int>(detail::fnv1a(filename) % static_cast<std::uint64_t>(count)) + 1;
}

bool in_shard(const std::string& filename, int index, int count) {
  return shard_of(filename, count) == index;
}

Result run(const Options& options, const image::Db& db, net::Client& client, const ProfileCache* cache) {
  if (options.indexes.empty()) throw usage_error("scan: no --index given");
  if (options.projects.empty()) throw usage_error("scan: no --project given");
  if (options.since) {
    const auto& s = *options.since;
    const bool ok = s.size() == 10 && s[4] == '-' && s[7] == '-' &&
                    std::all_of(s.begin(), s.end(), [](char c) { return c == '-' || (c >= '0' && c <= '9'); });
    if (!ok) throw usage_error("--since " + s + ": expected a date, YYYY-MM-DD");
  }
  if (options.shard_count > 1 && options.state_dir.empty()) {
    throw usage_error("--shard " + std::to_string(options.shard_index) + "/" + std::to_string(options.shard_count) +
                      " needs --state DIR: each shard keeps its results in its own state folder for `scan --merge`");
  }
  std::optional<detail::Shards> shards;
  if (!options.merge.empty()) shards = detail::read_shards(options.merge);
  Scan scan(options, db, client, cache, shards ? &*shards : nullptr);
  Result r;
  r.report = scan.run();
  auto state = scan.take_state();
  r.commit = [state] { state->commit(); };
  return r;
}

}  // namespace wheelcheck::scan
