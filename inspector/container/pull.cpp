// A reference to a root folder the probe reads, cached by digest (docs/images.md):
//   <cache>/images/roots/HEX/root       the layers applied (kept files only), HEX the manifest's digest
//   <cache>/images/roots/HEX/image.json what the config says (env, user, platform) and where it came from
//   <cache>/images/blobs/sha256/HEX     a registry's manifests, configs and layers, each checked first
//   <cache>/images/partial/HEX          a layer being downloaded (resumed by the next run)
//   <cache>/images/refs/KEY.json        a tag's last digest and ETag: the next run asks "has it moved?"
// A root is built under roots/.build-* and renamed into place once every layer passed its check: a root in
// roots/ is complete and verified. One lock file (images/.lock) keeps two processes from building at once.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "inspector/container/detail.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::container {

using detail::Descriptor;
using nlohmann::json;

namespace {

Error pull_error(const std::string& what) {
  return Error(ErrorKind::BadInput, what);
}

struct Manifest {
  Descriptor config;
  std::vector<Descriptor> layers;
};

bool layer_type_ok(const std::string& t) {
  return t.empty() || t == "application/vnd.oci.image.layer.v1.tar" ||
         t == "application/vnd.oci.image.layer.v1.tar+gzip" || t == "application/vnd.oci.image.layer.v1.tar+zstd" ||
         t == "application/vnd.docker.image.rootfs.diff.tar.gzip" ||
         t == "application/vnd.docker.image.rootfs.diff.tar";
}

Manifest parse_manifest(const std::string& body, const std::string& media_type, const std::string& what,
                        const Limits& limits) {
  const json doc = detail::parse_json_blob(body, what);
  if (!doc.is_object()) throw pull_error(what + ": a manifest that is not a JSON object");
  if (!detail::is_manifest_type(media_type)) {
    throw pull_error(what + ": a " + printable(media_type) + ", not an image manifest (" + detail::k_oci_manifest +
                     " or " + detail::k_docker_manifest + ")");
  }
  if (!doc.contains("config") || !doc.contains("layers") || !doc["layers"].is_array()) {
    throw pull_error(what + ": a manifest without config and layers");
  }
  Manifest m;
  m.config = detail::descriptor_of(doc["config"], what + ": config");
  if (doc["layers"].size() > static_cast<std::size_t>(limits.max_layers)) {
    throw pull_error(what + ": " + std::to_string(doc["layers"].size()) + " layers, more than " +
                     std::to_string(limits.max_layers));
  }
  for (const auto& l : doc["layers"]) {
    Descriptor d = detail::descriptor_of(l, what + ": layers");
    if (d.media_type.find("nondistributable") != std::string::npos ||
        d.media_type.find("foreign") != std::string::npos) {
      throw pull_error(what + ": a layer of type " + d.media_type +
                       " (a foreign layer, kept off registries: not read)");
    }
    if (!layer_type_ok(d.media_type))
      throw pull_error(what + ": a layer of type " + printable(d.media_type) + ", not a tar");
    m.layers.push_back(d);
  }
  return m;
}

struct Config {
  Platform platform;
  std::map<std::string, std::string> env;
  std::string user;
  std::vector<std::string> diff_ids;
};

Config parse_config(const std::string& body, const std::string& what) {
  const json doc = detail::parse_json_blob(body, what);
  if (!doc.is_object()) throw pull_error(what + ": a config that is not a JSON object");
  Config c;
  auto text = [&](const json& j, const char* k) {
    return j.is_object() && j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
  };
  c.platform.os = text(doc, "os");
  c.platform.architecture = text(doc, "architecture");
  c.platform.variant = text(doc, "variant");
  if (doc.contains("config") && doc["config"].is_object()) {
    const auto& cfg = doc["config"];
    c.user = text(cfg, "User");
    if (cfg.contains("Env") && cfg["Env"].is_array()) {
      for (const auto& e : cfg["Env"]) {
        if (!e.is_string()) continue;
        const std::string kv = e.get<std::string>();
        const auto eq = kv.find('=');
        if (eq != std::string::npos && eq != 0) c.env[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
    }
  }
  if (doc.contains("rootfs") && doc["rootfs"].is_object() && doc["rootfs"].contains("diff_ids") &&
      doc["rootfs"]["diff_ids"].is_array()) {
    for (const auto& d : doc["rootfs"]["diff_ids"]) {
      if (d.is_string()) c.diff_ids.push_back(d.get<std::string>());
    }
  }
  return c;
}

bool same_platform(const Platform& want, const Platform& have) {
  if (want.os != have.os || want.architecture != have.architecture) return false;
  if (want.variant.empty() || have.variant.empty()) return true;
  return want.variant == have.variant;
}

// The index entry for the platform wanted, and how it was chosen.
Descriptor choose_platform(const std::string& body, const std::string& what, const PullOptions& o, std::string& note) {
  const json doc = detail::parse_json_blob(body, what);
  if (!doc.is_object() || !doc.contains("manifests") || !doc["manifests"].is_array()) {
    throw pull_error(what + ": an index without manifests");
  }
  std::vector<Descriptor> images;
  for (const auto& m : doc["manifests"]) {
    Descriptor d = detail::descriptor_of(m, what + ": manifests");
    const auto kind = d.annotations.find("vnd.docker.reference.type");
    if (kind != d.annotations.end() && kind->second == "attestation-manifest") continue;  // not an image
    if (d.platform.architecture == "unknown") continue;
    images.push_back(d);
  }
  Platform want;
  if (o.platform) {
    want = *o.platform;
    note = "--platform " + want.str();
  } else if (o.wheel_platform) {
    want = *o.wheel_platform;
    note = "the wheel's architecture";
  } else {
    want = host_platform();
    note = "this machine's platform (--platform picks another)";
  }
  std::vector<std::string> offered;
  for (const auto& d : images) {
    if (!d.platform.architecture.empty()) offered.push_back(d.platform.str());
    if (same_platform(want, d.platform)) {
      if (!detail::is_manifest_type(d.media_type) && !d.media_type.empty()) {
        throw pull_error(what + ": the entry for " + d.platform.str() + " is a " + printable(d.media_type) +
                         ", not an image manifest");
      }
      return d;
    }
  }
  throw pull_error(what + ": the index has no image for " + want.str() + ", chosen by " + note + " (it has " +
                   (offered.empty() ? std::string("none with a platform") : join(offered, ", ")) +
                   "; --platform picks one)");
}

json meta_of(const PulledImage& p) {
  json env = json::object();
  for (const auto& [k, v] : p.env) env[k] = v;
  return json{{"reference", p.reference},
              {"digest", p.digest},
              {"config", p.config_digest},
              {"platform", p.platform.str()},
              {"env", env},
              {"user", p.user},
              {"notes", p.notes}};
}

void read_meta(const std::string& file, PulledImage& p) {
  const json j = detail::parse_json_blob(read_text_file(file, std::uint64_t{16} << 20), file);
  if (!j.is_object()) throw pull_error(file + ": not an object");
  p.config_digest = detail::json_text(j, "config");
  const std::string platform = detail::json_text(j, "platform");
  p.platform = parse_platform(platform.empty() ? "linux/unknown" : platform);
  p.user = detail::json_text(j, "user");
  if (j.contains("env") && j["env"].is_object()) {
    for (const auto& [k, v] : j["env"].items()) {
      if (v.is_string()) p.env[k] = v.get<std::string>();
    }
  }
  if (j.contains("notes") && j["notes"].is_array()) {
    for (const auto& n : j["notes"]) {
      if (n.is_string()) p.notes.push_back(n.get<std::string>());
    }
  }
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

}  // namespace

std::string images_dir(const std::string& cache_dir) {
  return cache_dir + "/images";
}

PulledImage pull(const Reference& ref, const PullOptions& o) {
  if (o.cache_dir.empty()) {
    throw Error(ErrorKind::Usage, ref.what() +
                                      ": no cache folder to put the image's files in (--cache-dir, "
                                      "WHEELCHECK_CACHE_DIR, XDG_CACHE_HOME or HOME)");
  }
  const std::string images = images_dir(o.cache_dir);
  make_dirs(images + "/roots");
  ::chmod(images.c_str(), 0700);
  auto say = [&](const std::string& s) {
    if (o.progress) o.progress(s);
  };
  std::unique_ptr<detail::Source> source;
  switch (ref.transport) {
    case Transport::Registry: source = detail::open_registry(ref, o, images); break;
    case Transport::OciLayout: source = detail::open_layout(ref, o.limits); break;
    case Transport::OciArchive: source = detail::open_oci_archive(ref, o.limits); break;
    case Transport::DockerArchive: source = detail::open_docker_archive(ref, o.limits); break;
  }
  const std::string where = ref.what();
  PulledImage out;
  out.reference = ref.text;
  auto top = source->top();
  Manifest manifest;
  std::optional<Platform> index_platform;
  if (top.media_type == detail::k_docker_archive_entry) {
    const auto* layers = detail::docker_archive_layers(*source);
    if (layers == nullptr) throw Error(ErrorKind::Internal, where + ": a docker-archive entry from another source");
    manifest.layers = *layers;
    manifest.config.digest = top.digest;
    manifest.config.size = detail::docker_archive_config_size(*source);
    out.digest = top.digest;
  } else {
    std::string body = top.body;
    std::string type = detail::media_type_of(detail::parse_json_blob(body, where + ": its manifest"), top.media_type);
    out.digest = top.digest;
    if (detail::is_index_type(type)) {
      const Descriptor d = choose_platform(body, where + ": its index", o, out.platform_note);
      index_platform = d.platform;
      body = source->small_blob(d, where + ": the manifest for " + d.platform.str());
      type = detail::media_type_of(detail::parse_json_blob(body, where), d.media_type);
      out.digest = d.digest;
      say(fmt::format("{} is an index: {} ({}) for {}", where, d.platform.str(), d.digest.substr(0, 19),
                      out.platform_note));
    }
    manifest = parse_manifest(body, type, where + ": manifest " + out.digest.substr(0, 19), o.limits);
  }
  const std::string key = out.digest.substr(7);
  const std::string dest = images + "/roots/" + key;
  if (is_file(dest + "/image.json")) {
    read_meta(dest + "/image.json", out);
    if (o.platform && !same_platform(*o.platform, out.platform)) {
      throw pull_error(where + " is an image for " + out.platform.str() + ", not the " + o.platform->str() +
                       " --platform asks for");
    }
    out.root = dest + "/root";
    out.cached = true;
    if (out.platform_note.empty()) out.platform_note = "the image's only platform";
    say(fmt::format("{}: cached ({}), no layer read", where, out.digest.substr(0, 19)));
    return out;
  }

  const std::string config_text = source->small_blob(manifest.config, where + ": its config");
  const Config config = parse_config(config_text, where + ": its config");
  out.config_digest = manifest.config.digest;
  out.env = config.env;
  out.user = config.user;
  out.platform = config.platform;
  if (index_platform &&
      (index_platform->os != config.platform.os || index_platform->architecture != config.platform.architecture)) {
    throw pull_error(where + ": the index lists the manifest as " + index_platform->str() + ", and its config says " +
                     config.platform.str() + " (an index that lies)");
  }
  if (!index_platform) {
    out.platform_note = "the image's only platform";
    if (o.platform && !same_platform(*o.platform, config.platform)) {
      throw pull_error(where + " is an image for " + config.platform.str() + ", not the " + o.platform->str() +
                       " --platform asks for");
    }
  } else {
    out.platform.variant = index_platform->variant.empty() ? out.platform.variant : index_platform->variant;
  }

  const FileLock lock =
      FileLock::acquire(images + "/.lock", [&] { say(where + ": waiting for another wheelcheck building an image"); });
  if (is_file(dest + "/image.json")) {  // another process built it meanwhile
    out.root = dest + "/root";
    out.cached = true;
    return out;
  }
  // Roots are built only under the lock: a .build-* folder there now is a killed run's, and goes.
  {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(images + "/roots", ec)) {
      if (e.path().filename().string().rfind(".build-", 0) == 0) remove_tree(e.path().string());
    }
  }
  const std::string build = images + "/roots/.build-" + key + "-" + std::to_string(::getpid());
  make_dirs(build + "/root");
  try {
    detail::RootWriter writer(build + "/root");
    const auto started = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < manifest.layers.size(); ++i) {
      const Descriptor& d = manifest.layers[i];
      const std::string what = fmt::format("{}: layer {} of {} ({})", where, i + 1, manifest.layers.size(),
                                           d.digest.empty() ? printable(d.path) : d.digest.substr(0, 19));
      auto file = source->layer(d, what);
      say(fmt::format("applying {} ({})", what, format_size(d.size)));
      auto decompressed = detail::decompressing(*file, o.limits, what);
      // docker-archive's layers are named by what they decompress to (the config's diff_ids): hashed as they
      // pass. A manifest's layers are named by their stored bytes, which VerifiedFile hashes.
      std::optional<detail::HashingStream> hashed;
      if (!d.diff_id.empty()) hashed.emplace(*decompressed);
      detail::Stream& layer_bytes = hashed ? static_cast<detail::Stream&>(*hashed) : *decompressed;
      detail::TarReader tar(layer_bytes, o.limits, what);
      writer.apply(tar, o.limits, out.notes);
      // What follows the archive's end (padding; a gzip trailer, checked by the decompressor) is read too.
      std::vector<char> rest(std::size_t{1} << 16);
      while (layer_bytes.read(rest.data(), rest.size()) != 0) {
      }
      file->finish();
      if (hashed) {
        const std::string diff = hashed->finish();
        if (diff != d.diff_id) {
          throw pull_error(what + ": decompresses to bytes that hash to " + diff + ", not the " + d.diff_id +
                           " the config lists (a corrupt or substituted layer)");
        }
      }
    }
    if (!config.diff_ids.empty() && config.diff_ids.size() != manifest.layers.size()) {
      throw pull_error(where + ": the config lists " + std::to_string(config.diff_ids.size()) +
                       " layers, the manifest " + std::to_string(manifest.layers.size()));
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    say(fmt::format("{}: {} layers applied in {:.1f} s, {} files kept ({})", where, manifest.layers.size(), seconds,
                    writer.files_written(), format_size(writer.bytes_written())));
    write_file_atomic(build + "/image.json", meta_of(out).dump(2) + "\n");
    if (std::rename(build.c_str(), dest.c_str()) != 0) {
      throw Error(ErrorKind::Io, "cannot move " + build + " to " + dest + ": " + std::strerror(errno));
    }
  } catch (...) {
    remove_tree(build);
    throw;
  }
  out.root = dest + "/root";
  return out;
}

}  // namespace wheelcheck::container
