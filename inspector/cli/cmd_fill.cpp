// `wheelcheck image fill NAME [-o FOLDER]`: the export tables of an image's distributions, read from the wheels
// the description says they are published as (published::read), written as a db layer and its tables, so
// that a db can ship the real tables for offline use:
//   FOLDER/layers/LAYER.json          the layer that declared the distribution, its libraries now those of
//                                     the wheel, with their export references (images/ for an image file)
//   FOLDER/exports/LAYER/...          the tables (docs/exports.md), one per shared library of the wheel
// Copying FOLDER's layers/ and exports/ into a db (`cp -r FOLDER/. db/`) makes every image of that layer
// bind against them offline.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/published.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::cli {

namespace {

// The file that declares the distribution (its layer's name), as it is in the db or the user's file.
std::string declaring_file(const image::Db& db, const image::Image& im, const image::Distribution& d) {
  namespace fs = std::filesystem;
  if (d.layer.empty() || d.layer == im.name) {
    if (!im.file.empty()) return im.file;
  }
  for (const char* folder : {"layers", "images"}) {
    const std::string p = db.dir() + "/" + folder + "/" + d.layer + ".json";
    if (fs::is_regular_file(p)) return p;
  }
  throw bad_input(fmt::format("{} {} is declared by {}, whose file is not in the db", d.name, d.version, d.layer));
}

bool safe_key(const std::string& key) {
  if (key.empty() || key[0] == '/') return false;
  for (const auto& part : split(key, "/", false)) {
    if (part == "..") return false;
  }
  return true;
}

}  // namespace

void add_fill_options(CLI::App& fill, FillArgs& a) {
  fill.add_option("name", a.name, "A db image name, or a description file")->required();
  fill.add_option("-o,--output", a.output, "The folder to write layers/ and exports/ into (default: ./NAME-tables)");
  fill.add_option("--verify", a.verify,
                  "auto: headers-only where the server answers byte ranges; full: download each wheel and check "
                  "its sha256")
      ->check(CLI::IsMember({"auto", "full"}));
  fill.add_option("--db", a.db, "The db folder (default: $WHEELCHECK_DB, else the one installed with wheelcheck)");
  fill.add_flag("--json", a.json, "What was read and written, as JSON");
  fill.add_flag("-q,--quiet", a.quiet, "No progress on stderr");
  add_cache_options(fill, a.no_cache, a.cache_dir, a.cache_max_size);
  add_limit_options(fill, a.limits, true);
  fill.footer(R"(Examples:
  wheelcheck image fill cuda13.0 -o fill/          # torch 2.10.0+cpu's tables from download.pytorch.org/whl/cpu
  cp -r fill/. db/                                 # the db now ships them: checks bind offline
  wheelcheck image fill ./my-image.json --json

Every distribution of the image whose description names where its wheel is published ("published": an
index and a requirement, or a URL) is read: the wheel an installer would pick for the image's Python and
platform, headers-only (a few MB of a 900 MB torch wheel; kept in the profile cache by its sha256), each
shared library's dynamic symbols and versions as `wheelcheck probe` reads them. Exit 0 when every one was
written, 2 when one could not be read (the others are still written).)");
}

int run_fill(const FillArgs& a) {
  image::Db db(image::Db::locate(a.db));
  const image::Image im = db.resolve(a.name);
  const std::string out = a.output.empty() ? "./" + im.name + "-tables" : a.output;
  const std::optional<ProfileCache> cache = open_cache(a.no_cache, a.cache_dir, a.cache_max_size);
  const bool progress = show_progress(a.quiet);
  net::Client client(client_options(!progress, a.limits));
  published::Options o;
  o.mode = a.verify == "full" ? remote::Mode::Full : remote::Mode::Auto;
  apply_limits(a.limits, o.inspect);
  o.cache = cache ? &*cache : nullptr;
  if (progress) o.log = [](const std::string& line) { std::fprintf(stderr, "wheelcheck: %s\n", line.c_str()); };

  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  std::string text;
  bool failed = false;
  std::size_t named = 0;
  for (const auto& d : im.distributions) {
    if (!d.published) continue;
    ++named;
    nlohmann::ordered_json r;
    r["distribution"] = d.name + " " + d.version;
    r["layer"] = d.layer;
    r["published"] = d.published->where();
    try {
      const std::string file = declaring_file(db, im, d);
      image::Image raw = image::load_file(file);
      const std::string kind = file.find("/images/") != std::string::npos ? "images" : "layers";
      const std::string stem = std::filesystem::path(file).stem().string();
      std::string prefix;
      if (raw.exports_dir.empty()) {
        raw.exports_dir = "../exports/" + stem;
      } else {
        prefix = wheel::normalize_project_name(d.name) + "-" + d.version + "/";
      }
      published::Read read = published::read(d, im, client, o, prefix);
      image::Distribution* target = nullptr;
      for (auto& rd : raw.distributions) {
        if (wheel::normalize_project_name(rd.name) == wheel::normalize_project_name(d.name)) target = &rd;
      }
      if (target == nullptr) throw bad_input(file + " does not declare " + d.name);
      target->libraries = read.distribution.libraries;
      target->exports_unknown.clear();
      const auto& oc = read.outcome;
      raw.sources.push_back(fmt::format("export tables of {} read from {} (sha256 {}) by `wheelcheck image fill {}`",
                                        oc.wheel, oc.url, oc.sha256.empty() ? "unknown" : oc.sha256, im.name));
      const std::string layer_dir = out + "/" + kind;
      const std::string tables_dir = layer_dir + "/" + raw.exports_dir;
      for (const auto& [key, table] : read.tables) {
        if (!safe_key(key)) throw bad_input(oc.wheel + ": a library path leaves its folder: " + key);
        const std::string path = tables_dir + "/" + key;
        make_dirs(std::filesystem::path(path).parent_path().string());
        exports::write_table(table, path);
      }
      make_dirs(layer_dir);
      const std::string json_path = layer_dir + "/" + stem + ".json";
      image::save_file(raw, json_path);
      r["wheel"] = oc.wheel;
      r["url"] = oc.url;
      r["sha256"] = oc.sha256;
      r["size"] = oc.wheel_size;
      r["bytes_fetched"] = oc.bytes_fetched;
      r["from_cache"] = oc.from_cache;
      r["headers_only"] = oc.headers_only;
      r["tables"] = read.tables.size();
      r["description"] = json_path;
      r["exports"] = std::filesystem::path(tables_dir).lexically_normal().string();
      r["error"] = nullptr;
      text += fmt::format("{} {}: {} tables from {} ({}) -> {}, {}\n", d.name, d.version, read.tables.size(), oc.wheel,
                          oc.from_cache     ? "from the profile cache"
                          : oc.headers_only ? fmt::format("headers-only, {} of {}", format_size(oc.bytes_fetched),
                                                          format_size(oc.wheel_size))
                                            : "downloaded whole, sha256 verified",
                          json_path, std::filesystem::path(tables_dir).lexically_normal().string());
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal) throw;
      failed = true;
      r["error"] = e.what();
      std::fprintf(stderr, "wheelcheck: error: %s %s: %s\n", d.name.c_str(), d.version.c_str(), e.what());
    }
    results.push_back(std::move(r));
  }
  if (named == 0) {
    throw usage_error(im.name +
                      ": no distribution of it says where its wheel is published (\"published\" in the description; "
                      "README: Adding an image)");
  }
  if (a.json) {
    print_json(nlohmann::ordered_json{{"image", im.name}, {"output", out}, {"distributions", results}});
  } else {
    print_out(text);
    if (!failed)
      print_out(
          fmt::format("Ship them with the db: cp -r {}/. DB/   (DB: the db folder, `wheelcheck images` reads)\n", out));
  }
  return failed ? k_exit_bad_input : k_exit_ok;
}

}  // namespace wheelcheck::cli
