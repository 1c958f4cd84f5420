// The nightly scan (`wheelcheck scan`).
//
// 1. Pages. Projects are taken in sorted order (the report's), each project's page asked of each index with the
//    PEP 691 Accept header and, when the state holds an earlier answer, its ETag / Last-Modified: a 304 reuses the
//    stored body. The pages of the next projects are asked ahead on worker threads (inspector/scan/ahead.hpp). An
//    index that stays unreadable after the client's retries makes the scan's exit code 2 (the rest still runs).
// 2. New wheels. A wheel is known by its file name and sha256; the state remembers every one seen, with
//    its verdicts. A wheel not in the state is new (with --since, only if uploaded on or after the date);
//    --shard K/N keeps the new wheels whose file-name hash falls in shard K (scan::shard_of: the name alone,
//    so a wheel's shard never changes when others are added), so a CI matrix splits the work. Yanked status
//    is read from the page on every run, never from the state.
// 3. Checks. Each new wheel's profile comes from the profile cache, else from the index (headers-only in
//    byte ranges where the server allows, else a whole download verified against its sha256), fetched and read
//    ahead on a worker, then checked in its turn against the images by run::check, the one check every command
//    shares: the images given (resolved by the command line's --image resolver), else every FlagOS image of the db.
//    A cell pip would not install (tags, Requires-Python) is "not targeted", left out of the report but remembered;
//    one whose label names another image's build (run::label_elsewhere) keeps the loader's verdict and is not
//    counted. Each result is committed to the state's run record as it is made (inspector/scan/state.hpp): the scan
//    holds the wheels in flight, never the run. Exit 1 when a new wheel is incompatible with an image it is for.
// 4. Pins, once a project's last wheel is in. For each image and project, versions newest first: the first wheel that
//    is not yanked, that is for the image (run::not_targeted, run::label_elsewhere: +cu126 on a CUDA 13 image is
//    passed over), and whose verdict there is compatible, degraded (with its gates) or unknown (with its conditions);
//    every newer one is listed with why it was passed over. No pin is made for an image no file of the project is
//    for (inspector/scan/pins.cpp). The state is written from the typed cells, never read back from the report's
//    JSON. The report is one typed value (scan::Report) whose wheels and pins are read back from the state one at a
//    time (scan::Stored); its JSON is written and read only at the file's edge (inspector/output/report_json.cpp).
// 5. The state commits last: the caller writes the report, the pins and standard output, then calls Result::commit
//    (the run's wheels join the state in one transaction). A scan whose outputs could not be written leaves the
//    state's wheels as they were: the next one reports the same new wheels, taking the unfinished run's results.
//    A lock in the state folder (flock) makes two scans on one state take turns.
// 6. The record (state.hpp): what the run fetched and each new wheel's report entry. `scan --merge` of the shards'
//    folders (shards.cpp checks the set is whole) runs steps 1-5 again with every answer and entry taken from them,
//    a row at a time, never the network: the report, pins, state and record are the ones one process writes.
#include "wheelcheck/scan.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <set>

#include "inspector/scan/ahead.hpp"
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
using detail::Ahead;
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

// A page asked for ahead of its turn, on a worker: what the index answered.
struct PageJob {
  std::string url;
  net::Validators validators;
  std::optional<net::Response> response;
  std::optional<std::string> not_found, error;
};

// A wheel fetched and read ahead of its turn, on a worker: its profile, or why it could not be had.
struct WheelJob {
  const Listing* listing = nullptr;
  std::optional<remote::Fetched> fetched;
  std::optional<std::string> error;
  std::shared_future<void> done;
};

// A project on its way through the scan: its pages, asked ahead; its listings once read; its new wheels, each
// fetched ahead and then checked in turn; its pins once the last is checked.
struct ProjectWork {
  std::string project;
  std::size_t position = 0;  // in the projects as asked (the pins' order)
  std::vector<std::shared_ptr<PageJob>> pages;
  std::vector<std::shared_future<void>> pages_done;
  bool expanded = false;
  std::vector<Listing> listings;
  std::deque<const Listing*> waiting;               // new wheels not yet asked for
  std::deque<std::shared_ptr<WheelJob>> in_flight;  // asked for, in order
  // What reading its pages said, said in the project's turn (before its wheels' errors): the report's warnings and
  // errors come in the same order however far ahead the pages were read.
  std::vector<std::string> warnings, errors;
  bool said = false;
};

class Scan {
 public:
  Scan(const Options& o, const image::Db& db, net::Client& client, const ProfileCache* cache, detail::Shards* merge)
      : m_o(o),
        m_db(db),
        m_client(client),
        m_cache(cache),
        m_state(std::make_shared<State>(o.state_dir, m_warnings)),
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
    m_base = m_state->keys_digest();
    m_state->begin_run(m_options, m_merge ? 1 : m_o.shard_index, m_merge ? 1 : m_o.shard_count, m_base);
    if (m_state->resumable() != 0) {
      say(fmt::format("resuming: {} wheels the last run checked before it stopped are taken from its record",
                      m_state->resumable()));
    }
    {
      // Workers only for a scan that fetches; a merge reads the shards' states.
      Ahead ahead(m_merge ? 0 : m_o.jobs, m_o.per_host, m_client.options(), m_client);
      m_ahead = &ahead;
      pipeline();
      m_stats = ahead.stats();
      m_ahead = nullptr;
    }
    Report report;
    report.generated_at = now_iso();
    report.wheelcheck_version = WHEELCHECK_VERSION;
    for (const auto& i : m_o.indexes) report.indexes.push_back(net::redact_url(i));
    report.projects = m_o.projects;
    report.images = report_images();
    report.shard = m_merge ? Shard{0, m_merge->count(), true} : Shard{m_o.shard_index, m_o.shard_count, false};
    report.since = m_o.since;
    report.environment = m_o.environment_args;
    report.wheels_seen = m_wheels_seen;
    report.stored = detail::stored_run(m_state, report.images, m_new);
    report.warnings = m_warnings;
    std::vector<std::string> names;
    for (const auto& t : m_targets) names.push_back(t.target.image.name);
    for (auto& line : detail::published_warnings(m_published_lines, names)) report.warnings.push_back(std::move(line));
    report.errors = m_errors;
    return report;
  }

  // The state, to be committed by the caller once the outputs are written (it keeps the lock).
  std::shared_ptr<State> state() const { return m_state; }
  const net::Stats& stats() const { return m_stats; }

 private:
  void say(const std::string& line) const {
    if (m_o.progress) m_o.progress(line);
  }

  // Asks for a file the state keeps with its validators (a project's page; a release's variants file, which is
  // mutable): an unchanged one (304) comes from the state. `read` makes what the caller wants of the body, its
  // content type and final URL; an answer it refuses (throws) is not kept. What each URL answered goes in the
  // run's record; a merge of shards answers from the shards' records and states, never the network. `job`: the
  // request already made ahead (null: made now).
  template <typename Read>
  auto kept(const std::string& url, const char* accept, const Read& read, PageJob* job = nullptr) {
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
      if (!f.outcome.is_null()) m_state->record_fetched(url, f.outcome);
      if (!f.body) {
        if (f.outcome.is_null()) throw bad_input("no shard's record says what " + url + " answered");
        if (f.outcome.value("not_found", false)) throw net::NotFound(f.outcome.value("error", std::string()));
        throw Error(ErrorKind::BadInput, f.outcome.value("error", std::string()));
      }
      m_state->adopt_page(url, f.entry, *f.body);
      return read(*f.body, f.entry.value("content_type", ""), f.entry.value("final_url", url));
    }
    try {
      net::Validators validators;
      const auto cached = m_state->page(url);
      if (cached) {
        validators.etag = cached->entry.value("etag", "");
        validators.last_modified = cached->entry.value("last_modified", "");
      }
      net::Response r;
      if (job != nullptr) {
        if (job->not_found) throw net::NotFound(*job->not_found);
        if (job->error) throw Error(ErrorKind::BadInput, *job->error);
        r = std::move(*job->response);
        // The request went out with the validators of the page then kept; a 304 needs that page still.
        if (r.not_modified() && (!cached || job->validators.etag != validators.etag ||
                                 job->validators.last_modified != validators.last_modified))
          r = m_client.get(url, accept, validators);
      } else {
        r = m_client.get(url, accept, validators);
      }
      if (r.not_modified() && cached) {
        auto out = read(cached->body, cached->entry.value("content_type", ""), cached->entry.value("final_url", url));
        m_state->record_fetched(url, Json{{"sha256", cached->entry.value("sha256", "")}});
        return out;
      }
      auto out = read(r.body, r.content_type, r.url);
      m_state->remember_page(url, r);
      m_state->record_fetched(url, Json{{"sha256", detail::sha256_text(r.body)}});
      return out;
    } catch (const net::NotFound& e) {
      m_state->record_fetched(url, Json{{"error", e.what()}, {"not_found", true}});
      throw;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Internal)
        m_state->record_fetched(url, Json{{"error", e.what()}, {"not_found", false}});
      throw;
    }
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

  // --- the pipeline: projects in order, their pages and wheels asked for ahead --------------------------------

  void pipeline() {
    std::vector<std::pair<std::string, std::size_t>> projects;  // sorted: the report's order
    for (std::size_t i = 0; i < m_o.projects.size(); ++i) {
      if (std::none_of(projects.begin(), projects.end(), [&](const auto& p) { return p.first == m_o.projects[i]; }))
        projects.emplace_back(m_o.projects[i], i);
    }
    std::stable_sort(projects.begin(), projects.end());
    m_project_total = projects.size();
    // How far ahead: enough to keep every worker busy, never more (what is ahead is held in memory).
    const std::size_t workers = std::max<std::size_t>(1, m_ahead->workers());
    const std::size_t wheels_ahead = workers, projects_ahead = 2 * workers;  // a wheel ahead holds its profile
    std::deque<ProjectWork> window;
    std::size_t next = 0, asked = 0;
    const auto top_up = [&] {
      while (next < projects.size() && window.size() < projects_ahead) {
        window.push_back(start_project(projects[next].first, projects[next].second));
        ++next;
      }
      for (auto& p : window) {
        if (asked >= wheels_ahead) return;
        // A project whose pages are still on their way waits for its turn (the front is expanded below): waiting
        // here, on the page just asked for, would undo the asking ahead.
        if (!p.expanded && !pages_ready(p)) return;
        if (!p.expanded) expand(p);
        while (!p.waiting.empty() && asked < wheels_ahead) {
          p.in_flight.push_back(ask_wheel(*p.waiting.front()));
          p.waiting.pop_front();
          ++asked;
        }
      }
    };
    while (true) {
      top_up();
      if (window.empty()) break;
      ProjectWork& front = window.front();
      if (!front.expanded) expand(front);
      if (!front.said) {
        front.said = true;
        for (auto& w : front.warnings) m_warnings.push_back(std::move(w));
        for (auto& e : front.errors) m_errors.push_back(std::move(e));
      }
      if (!front.in_flight.empty()) {
        auto job = front.in_flight.front();
        front.in_flight.pop_front();
        --asked;
        finish_wheel(*job);
        continue;
      }
      if (!front.waiting.empty()) {
        front.in_flight.push_back(ask_wheel(*front.waiting.front()));
        front.waiting.pop_front();
        ++asked;
        continue;
      }
      finish_project(front);
      window.pop_front();
    }
  }

  static bool pages_ready(const ProjectWork& p) {
    return std::all_of(p.pages_done.begin(), p.pages_done.end(), [](const std::shared_future<void>& f) {
      return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    });
  }

  ProjectWork start_project(const std::string& project, std::size_t position) {
    ProjectWork p;
    p.project = project;
    p.position = position;
    if (m_merge) return p;  // nothing is fetched
    for (const auto& idx : m_o.indexes) {
      auto job = std::make_shared<PageJob>();
      job->url = index::project_url(idx, project);
      if (const auto cached = m_state->page(job->url)) {
        job->validators.etag = cached->entry.value("etag", "");
        job->validators.last_modified = cached->entry.value("last_modified", "");
      }
      p.pages.push_back(job);
      p.pages_done.push_back(m_ahead->submit(job->url, [job](net::Client& client) {
        try {
          job->response = client.get(job->url, index::k_accept, job->validators);
        } catch (const net::NotFound& e) {
          job->not_found = e.what();
        } catch (const Error& e) {
          if (e.kind() == ErrorKind::Internal) throw;
          job->error = e.what();
        }
      }));
    }
    return p;
  }

  // The project's pages read (each index in order), its listings sorted, its new wheels found.
  void expand(ProjectWork& p) {
    p.expanded = true;
    // Its warnings and errors are the project's until its turn (see ProjectWork::warnings).
    std::swap(m_warnings, p.warnings);
    std::swap(m_errors, p.errors);
    expand_pages(p);
    std::swap(m_warnings, p.warnings);
    std::swap(m_errors, p.errors);
  }

  void expand_pages(ProjectWork& p) {
    const std::string& project = p.project;
    std::set<std::string> seen_urls;
    std::size_t found_on = 0;
    bool failed = false;
    ++m_project_n;
    for (std::size_t k = 0; k < m_o.indexes.size(); ++k) {
      const std::string& idx = m_o.indexes[k];
      say(fmt::format("project {}/{}: {} on {}", m_project_n, m_project_total, project, net::redact_url(idx)));
      PageJob* job = nullptr;
      if (!m_merge) {
        p.pages_done[k].get();
        job = p.pages[k].get();
      }
      try {
        auto page = kept(
            index::project_url(idx, project), index::k_accept,
            [&](const std::string& body, const std::string& type, const std::string& final_url) {
              return index::parse_project_page(body, type, final_url, project);
            },
            job);
        ++found_on;
        for (const auto& w : page.warnings) m_warnings.push_back(net::redact_url(page.url) + ": " + w);
        for (auto& f : page.files) {
          if (const auto version = detail::variants_version(f.filename, project)) {
            read_release(project, *version, f);
            continue;
          }
          if (f.filename.size() < 4 || f.filename.compare(f.filename.size() - 4, 4, ".whl") != 0) continue;
          if (!seen_urls.insert(f.url).second) continue;  // an index that lists a file twice
          p.listings.push_back({project, idx, std::move(f)});
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
    p.pages.clear();
    p.pages_done.clear();
    if (found_on == 0 && !failed) {
      m_warnings.push_back(fmt::format("project {} is on none of the indexes (a misspelt name?)", project));
      m_errors.push_back(m_warnings.back());
    }
    std::stable_sort(p.listings.begin(), p.listings.end(),
                     [](const Listing& a, const Listing& b) { return a.file.filename < b.file.filename; });
    m_wheels_seen += p.listings.size();
    for (const auto& l : p.listings) {
      if (m_state->knows(wheel_key(l.file.filename, l.file.sha256())) || !is_new(l)) continue;
      if (!m_merge && !in_shard(l.file.filename, m_o.shard_index, m_o.shard_count)) continue;
      p.waiting.push_back(&l);
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

  // A new wheel asked for: fetched and read on a worker (a merge, and a wheel the killed run checked, need no
  // request).
  std::shared_ptr<WheelJob> ask_wheel(const Listing& l) {
    auto job = std::make_shared<WheelJob>();
    job->listing = &l;
    if (m_merge || m_state->resumed(wheel_key(l.file.filename, l.file.sha256()))) return job;
    remote::Fetch fetch;
    fetch.mode = m_o.mode;
    fetch.sha256 = l.file.sha256();
    if (m_o.progress) {  // a status line (one call at a time per line: stdio locks it), whichever worker says it
      fetch.progress = [say = m_o.progress, name = l.file.filename](const net::DownloadProgress& p) {
        say(fmt::format("download {}: {} / {} at {}/s", name, format_size(p.done),
                        p.total != 0 ? format_size(p.total) : std::string("?"),
                        format_size(static_cast<std::uint64_t>(p.bytes_per_second))));
      };
    }
    const InspectOptions inspect = m_o.inspect;
    const ProfileCache* cache = m_cache;
    // The task holds its job weakly: the job holds the task's future, and a strong hold both ways would keep every
    // job of the run.
    const std::weak_ptr<WheelJob> weak = job;
    job->done = m_ahead->submit(l.file.url, [weak, fetch, inspect, cache](net::Client& client) {
      const auto mine = weak.lock();
      if (!mine) return;  // the scan stopped (an error) before its turn
      try {
        mine->fetched = remote::inspect_url(mine->listing->file.url, fetch, inspect, cache, client);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::Internal) throw;
        mine->error = e.what();
      }
    });
    return job;
  }

  // A new wheel in its turn: its check, its report entry and record committed to the state at once.
  void finish_wheel(WheelJob& job) {
    const Listing& l = *job.listing;
    const std::string key = wheel_key(l.file.filename, l.file.sha256());
    ++m_new;
    say(fmt::format("wheel {} (project {}/{}): {}", m_new, m_project_n, m_project_total, l.file.filename));
    if (m_merge) {
      adopt(l, m_merge->take(shard_of(l.file.filename, m_merge->count()), key));
      return;
    }
    if (auto resumed = m_state->resumed(key)) {
      adopt(l, detail::Shards::Taken{std::move((*resumed)["entry"]), std::move((*resumed)["remembered"]), ""});
      return;
    }
    if (job.done.valid()) job.done.get();
    Wheel w = listing_wheel(l);
    const std::size_t errors_before = m_errors.size(), published_before = m_published_lines.size();
    bool read = false;
    std::vector<run::Cell> cells;
    try {
      if (job.error) throw Error(ErrorKind::BadInput, *job.error);
      const remote::Fetched& fetched = *job.fetched;
      w.integrity = fetched.profile.integrity;
      if (fetched.profile.has_problems()) {
        const auto& pr = !fetched.profile.problems.empty() ? fetched.profile.problems.front()
                                                           : fetched.profile.record_problems.front();
        w.error = fmt::format("{}: {} {}", pr.kind, pr.path, pr.detail);
        m_errors.push_back(l.file.filename + ": " + *w.error);
      }
      read = true;
      w.publisher = publisher(fetched.profile);
      cells = check(fetched.profile);
      w.results = results_of(cells, l.file);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal) throw;
      w.error = e.what();
      m_errors.push_back(l.file.filename + ": " + e.what());
    }
    job.fetched.reset();
    // As the report and the shard's record hold it (the one writer and reader): a merge says the same of it.
    const Json report_entry = to_json(w);
    const bool incompatible = std::any_of(w.results.begin(), w.results.end(), [](const Checked& c) {
      return c.counted && c.cell.report.verdict == verdict::Verdict::Incompatible;
    });
    // The run's record of the wheel: what a merge of the shards needs to say what this run says.
    const Json entry{{"key", key},
                     {"report", report_entry},
                     {"errors", std::vector<std::string>(m_errors.begin() + static_cast<std::ptrdiff_t>(errors_before),
                                                         m_errors.end())},
                     {"published", std::vector<std::string>(
                                       m_published_lines.begin() + static_cast<std::ptrdiff_t>(published_before),
                                       m_published_lines.end())},
                     {"failed", w.failed()},
                     {"incompatible", incompatible},
                     {"remembered", read}};
    // A wheel that could not be fetched (the network, a hash mismatch, a server that stopped answering)
    // is not remembered: the next scan tries it again. One that was read is remembered, problems and
    // all: a broken wheel is reported once, not every night.
    m_state->record_wheel(key, entry, read ? remembered(l, w, cells) : Json());
  }

  // A wheel read, in the state: from the typed cells, in the one shape of a cell (run::to_json: a record, the
  // report's results one size up); images the wheel is not for, with why.
  Json remembered(const Listing& l, const Wheel& w, const std::vector<run::Cell>& cells) const {
    Json record{{"filename", l.file.filename}, {"project", l.project},    {"version", version_of(l)},
                {"sha256", l.file.sha256()},   {"first_seen", now_iso()}, {"error", w.error ? Json(*w.error) : Json()},
                {"results", Json::object()}};
    for (const auto& c : cells) record["results"][c.image] = run::to_json(c, run::Size::Record);
    return record;
  }

  // The project's last wheel checked: its pins (from its listings and the state, this run's wheels included).
  void finish_project(ProjectWork& p) {
    const std::vector<std::string> one{p.project};
    const auto pins = detail::pins({one, p.listings, m_targets, m_releases, *m_state, m_explicit, m_o.since});
    for (std::size_t i = 0; i < pins.size(); ++i) {
      m_state->record_pin(static_cast<std::int64_t>(p.position * (m_targets.size() + 1) + i), pins[i].project,
                          to_json(pins[i]));
    }
    m_releases.erase(p.project);
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

  // The merge's state starts as the one the shards started from: the state folder given, when it is that one,
  // else the base carried in the first shard's folder.
  void start_merge() {
    if (auto diff = detail::options_difference(m_merge->options(), m_options); !diff.empty()) {
      throw bad_input("scan --merge: the shards ran with other options than this merge (" + diff +
                      "): give the merge the shard runs' --index, --project, --image, --assume, --since, --rules, "
                      "--verify and --with");
    }
    if (!m_state->kept()) throw usage_error("scan --merge needs a --state folder to write the merged state to");
    if (!m_state->empty()) {
      if (m_state->keys_digest() != m_merge->base()) {
        throw bad_input("scan --merge: the state " + m_state->dir() +
                        " is not the one the shards started from: merge into that state, or into an empty folder");
      }
      return;
    }
    m_state->copy_base_from(m_merge->folder(1).db_path());
  }

  // A new wheel of the merge (what the shard that owns it found, as that shard recorded it), or of a run resumed
  // (what the killed run found).
  void adopt(const Listing& l, detail::Shards::Taken taken) {
    const std::string key = wheel_key(l.file.filename, l.file.sha256());
    if (taken.entry.is_null() || (taken.entry.value("remembered", false) && taken.remembered.is_null())) {
      // Its shard did not check it (it read the index before the file was uploaded, or it could not read the
      // index): an error, never a smaller report; not remembered, so the next scan checks it.
      Wheel w = listing_wheel(l);
      w.error = fmt::format("not checked: {} did not check it (its record has no entry for it); rerun the shard",
                            taken.where);
      m_errors.push_back(l.file.filename + ": " + *w.error);
      m_state->record_wheel(key,
                            Json{{"key", key},
                                 {"report", to_json(w)},
                                 {"errors", Json::array({m_errors.back()})},
                                 {"published", Json::array()},
                                 {"failed", true},
                                 {"incompatible", false},
                                 {"remembered", false}},
                            Json());
      return;
    }
    Json entry = std::move(taken.entry);
    Wheel w;
    try {
      w = wheel_from_json(entry.at("report"));
    } catch (const std::exception& err) {
      throw bad_input(
          fmt::format("scan --merge: {} records {} in a form this wheelcheck cannot read ({}): rerun the "
                      "shard",
                      taken.where.empty() ? "the state's unfinished run" : taken.where, l.file.filename, err.what()));
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
    m_state->record_wheel(key, entry, entry.value("remembered", false) ? taken.remembered : Json());
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
  std::shared_ptr<State> m_state;
  run::RuleChoice m_rules;
  std::vector<toolkit::Provider> m_providers;  // db/providers.json: the publisher check of each new wheel
  bool m_explicit;                             // images were given: every one is reported, targeted or not
  std::vector<ScanTarget> m_targets;
  std::map<std::string, std::vector<const WheelProfile*>> m_environments;  // by target name (--with)
  std::map<std::string, detail::Releases> m_releases;  // by project as asked (those in flight): variants files
  std::set<std::string> m_used_images;
  detail::Shards* m_merge;                     // `scan --merge`: the shards whose results this run joins (null: a scan)
  Ahead* m_ahead = nullptr;                    // the workers, while the pipeline runs
  net::Stats m_stats;                          // what the workers and the client sent and received
  std::string m_base;                          // the digest of the state this run started from
  Json m_options;                              // what the shards of one scan share (the run's "options")
  std::uint64_t m_wheels_seen = 0, m_new = 0;  // the wheel files the indexes list; the new ones so far
  std::size_t m_project_n = 0, m_project_total = 0;
};

}  // namespace

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
  r.stats = scan.stats();
  auto state = scan.state();
  r.commit = [state] { state->commit(); };
  return r;
}

}  // namespace wheelcheck::scan
