// Where an image's blobs come from when they are on disk: an OCI image layout (a folder), the same packed in
// a tar (oci-archive), and `docker save`'s archive (docker-archive). Every blob is checked against the digest
// and size that name it before it is used; docker-archive's layers, which no manifest names, against the
// config's diff_ids (pull.cpp hashes what they decompress to).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "inspector/container/detail.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::container::detail {

using nlohmann::json;

namespace {

Error layout_error(const std::string& what) {
  return Error(ErrorKind::BadInput, what);
}

constexpr const char* k_ref_name = "org.opencontainers.image.ref.name";

// The files of a layout: a folder's, or an archive's members.
class Files {
 public:
  virtual ~Files() = default;
  // A descriptor and the file's slice [offset, offset + size); nullopt when it is not there.
  struct Slice {
    int fd = -1;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
  };
  virtual std::optional<Slice> slice(const std::string& path) = 0;
  // How a message names one of its files ("DIR/index.json", "FILE: index.json").
  virtual std::string where(const std::string& path) const = 0;
  // The file's bytes, at most `max` (more is Error(BadInput)); nullopt when it is not there.
  std::optional<std::string> read(const std::string& path, std::uint64_t max);
};

std::string read_slice(const Files::Slice& s, const std::string& what) {
  std::string out(static_cast<std::size_t>(s.size), '\0');
  std::size_t done = 0;
  while (done < out.size()) {
    const auto n = ::pread(s.fd, out.data() + done, out.size() - done, static_cast<off_t>(s.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ErrorKind::Io, what + ": cannot read: " + std::strerror(errno));
    if (n == 0) throw layout_error(what + ": ends early");
    done += static_cast<std::size_t>(n);
  }
  return out;
}

std::optional<std::string> Files::read(const std::string& path, std::uint64_t max) {
  auto s = slice(path);
  if (!s) return std::nullopt;
  if (s->size > max) throw layout_error(where(path) + ": " + format_size(s->size) + ", more than " + format_size(max));
  return read_slice(*s, where(path));
}

class FolderFiles : public Files {
 public:
  explicit FolderFiles(std::string dir) : m_dir(std::move(dir)) {}
  ~FolderFiles() override {
    for (int fd : m_fds) ::close(fd);
  }
  FolderFiles(const FolderFiles&) = delete;
  FolderFiles& operator=(const FolderFiles&) = delete;
  std::string where(const std::string& path) const override { return m_dir + "/" + path; }
  std::optional<Slice> slice(const std::string& path) override {
    const std::string full = m_dir + "/" + path;
    const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return std::nullopt;
      throw Error(ErrorKind::Io, "cannot open " + full + ": " + std::strerror(errno));
    }
    m_fds.push_back(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw layout_error(full + ": not a regular file");
    return Slice{fd, 0, static_cast<std::uint64_t>(st.st_size)};
  }

 private:
  std::string m_dir;
  std::vector<int> m_fds;
};

class ArchiveFiles : public Files {
 public:
  // `label` names it in messages: the reference as given ("oci-archive:image.tar").
  ArchiveFiles(const std::string& file, const std::string& label, const Limits& limits) : m_file(label) {
    m_fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (m_fd < 0) {
      throw Error(errno == ENOENT ? ErrorKind::Usage : ErrorKind::Io,
                  label + ": cannot open it: " + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(m_fd, &st) != 0 || !S_ISREG(st.st_mode))
      throw layout_error(label + ": not a regular file (an archive)");
    char magic[2] = {};
    if (::pread(m_fd, magic, 2, 0) == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
        static_cast<unsigned char>(magic[1]) == 0x8b) {
      throw layout_error(label +
                         ": a gzip-compressed archive (decompress it first: gunzip -k; skopeo and docker save write "
                         "plain tar)");
    }
    m_members = index_tar_file(m_fd, limits, label);
  }
  ~ArchiveFiles() override { ::close(m_fd); }
  ArchiveFiles(const ArchiveFiles&) = delete;
  ArchiveFiles& operator=(const ArchiveFiles&) = delete;
  std::string where(const std::string& path) const override { return m_file + ": " + path; }
  std::optional<Slice> slice(const std::string& path) override {
    const Member* m = find(path, 0);
    if (m == nullptr) return std::nullopt;
    return Slice{m_fd, m->offset, m->size};
  }

 private:
  const Member* find(const std::string& path, int depth) {
    const auto it = m_members.find(path);
    if (it == m_members.end()) return nullptr;
    if (it->second.type == '1' && depth < 8) {
      const auto target = clean_image_path(it->second.link);
      return target ? find(*target, depth + 1) : nullptr;
    }
    if (it->second.type != '0') throw layout_error(m_file + ": " + path + " is not a regular file in the archive");
    return &it->second;
  }
  std::string m_file;
  int m_fd = -1;
  std::map<std::string, Member> m_members;
};

std::string blob_path(const std::string& digest) {
  return "blobs/sha256/" + digest.substr(7);
}

// An OCI image layout, in a folder or an archive.
class LayoutSource : public Source {
 public:
  LayoutSource(const Reference& ref, std::unique_ptr<Files> files, const Limits& limits)
      : m_ref(ref), m_files(std::move(files)), m_limits(limits) {}

  Top top() override {
    const std::string where = m_ref.what();
    const auto layout = m_files->read("oci-layout", 4096);
    if (!layout) throw layout_error(where + ": no oci-layout file (not an OCI image layout)");
    const json lj = parse_json_blob(*layout, where + ": oci-layout");
    if (!lj.is_object() || !lj.contains("imageLayoutVersion") || !lj["imageLayoutVersion"].is_string()) {
      throw layout_error(where + ": oci-layout has no imageLayoutVersion");
    }
    const auto index_text = m_files->read("index.json", m_limits.max_manifest);
    if (!index_text) throw layout_error(where + ": no index.json (not an OCI image layout)");
    const json index = parse_json_blob(*index_text, where + ": index.json");
    if (!index.is_object() || !index.contains("manifests") || !index["manifests"].is_array()) {
      throw layout_error(where + ": index.json has no manifests");
    }
    std::vector<Descriptor> all;
    for (const auto& m : index["manifests"]) all.push_back(descriptor_of(m, where + ": index.json"));
    const Descriptor* chosen = nullptr;
    std::vector<std::string> tags;
    for (const auto& d : all) {
      const auto it = d.annotations.find(k_ref_name);
      if (it != d.annotations.end()) tags.push_back(it->second);
      if (!m_ref.tag.empty() && it != d.annotations.end() && it->second == m_ref.tag) chosen = &d;
    }
    if (m_ref.tag.empty() && all.size() == 1) chosen = &all.front();
    if (chosen == nullptr) {
      throw Error(ErrorKind::Usage, where + ": " +
                                        (m_ref.tag.empty() ? std::string("the layout holds ") +
                                                                 std::to_string(all.size()) + " images; name one"
                                                           : "no image is tagged " + printable(m_ref.tag)) +
                                        (tags.empty() ? "" : " (tags: " + join(tags, ", ") + ")"));
    }
    return Top{small_blob(*chosen, where + ": " + (m_ref.tag.empty() ? "its manifest" : m_ref.tag)), chosen->media_type,
               chosen->digest};
  }

  std::string small_blob(const Descriptor& d, const std::string& what) override {
    if (d.size > m_limits.max_manifest) {
      throw layout_error(what + ": declares " + format_size(d.size) + ", more than the " +
                         format_size(m_limits.max_manifest) + " a manifest or config may have");
    }
    const auto text = m_files->read(blob_path(d.digest), m_limits.max_manifest);
    if (!text) throw layout_error(what + ": the blob " + d.digest + " is not in the layout");
    if (text->size() != d.size) {
      throw layout_error(what + ": the blob " + d.digest + " holds " + std::to_string(text->size()) +
                         " bytes, not the " + std::to_string(d.size) + " declared");
    }
    if (sha256_digest(*text) != d.digest) {
      throw layout_error(what + ": the blob named " + d.digest + " hashes to " + sha256_digest(*text) +
                         " (corrupt or substituted)");
    }
    return *text;
  }

  std::unique_ptr<VerifiedFile> layer(const Descriptor& d, const std::string& what) override {
    const auto s = m_files->slice(blob_path(d.digest));
    if (!s) throw layout_error(what + ": the blob " + d.digest + " is not in the layout");
    return std::make_unique<VerifiedFile>(s->fd, s->offset, s->size, d.size, d.digest, what);
  }

 private:
  Reference m_ref;
  std::unique_ptr<Files> m_files;
  Limits m_limits;
};

// "docker.io/deb12/root:bookworm" names "deb12/root:bookworm": what `docker save` and skopeo write is the
// name with its registry host (a first component with a '.' or ':', or localhost), as docker expands it.
bool names_after_host(const std::string& full, const std::string& name) {
  if (name.empty() || full.size() <= name.size() + 1) return false;
  const std::size_t cut = full.size() - name.size() - 1;
  if (full.compare(cut + 1, name.size(), name) != 0 || full[cut] != '/') return false;
  const std::string host = full.substr(0, cut);
  return host.find('/') == std::string::npos &&
         (host.find('.') != std::string::npos || host.find(':') != std::string::npos || host == "localhost");
}

// `docker save`: manifest.json names each image's config and layer files (the layers' digests are the
// config's diff_ids, of their uncompressed bytes).
class DockerArchiveSource : public Source {
 public:
  DockerArchiveSource(const Reference& ref, const Limits& limits)
      : m_ref(ref), m_files(ref.path, ref.what(), limits), m_limits(limits) {}

  Top top() override {
    const std::string where = m_ref.what();
    const auto text = m_files.read("manifest.json", m_limits.max_manifest);
    if (!text) throw layout_error(where + ": no manifest.json (not an archive docker save writes)");
    const json list = parse_json_blob(*text, where + ": manifest.json");
    if (!list.is_array() || list.empty()) throw layout_error(where + ": manifest.json lists no image");
    const json* chosen = nullptr;
    std::vector<std::string> tags;
    for (const auto& entry : list) {
      if (!entry.is_object() || !entry.contains("Config") || !entry["Config"].is_string() ||
          !entry.contains("Layers") || !entry["Layers"].is_array()) {
        throw layout_error(where + ": manifest.json: an entry without Config and Layers");
      }
      if (entry.contains("RepoTags") && entry["RepoTags"].is_array()) {
        for (const auto& t : entry["RepoTags"]) {
          if (!t.is_string()) continue;
          const std::string tag = t.get<std::string>();
          tags.push_back(tag);
          const bool same = tag == m_ref.tag || names_after_host(tag, m_ref.tag);
          if (!m_ref.tag.empty() && same) chosen = &entry;
        }
      }
    }
    if (m_ref.tag.empty() && list.size() == 1) chosen = &list.front();
    if (chosen == nullptr) {
      throw Error(ErrorKind::Usage, where + ": " +
                                        (m_ref.tag.empty() ? "the archive holds " + std::to_string(list.size()) +
                                                                 " images; name one (docker-archive:FILE:REPO:TAG)"
                                                           : "no image is tagged " + printable(m_ref.tag)) +
                                        (tags.empty() ? "" : " (tags: " + join(tags, ", ") + ")"));
    }
    const std::string config_path = (*chosen)["Config"].get<std::string>();
    const auto config = m_files.read(config_path, m_limits.max_manifest);
    if (!config) throw layout_error(where + ": its config " + printable(config_path) + " is not in the archive");
    m_config = *config;
    m_config_digest = sha256_digest(m_config);
    // The config's file is named by its digest (blobs/sha256/HEX or HEX.json): the name is checked too.
    std::string named = base_name(config_path);
    if (named.size() > 5 && named.substr(named.size() - 5) == ".json") named = named.substr(0, named.size() - 5);
    if (is_sha256_hex(named) && "sha256:" + named != m_config_digest) {
      throw layout_error(where + ": the config " + printable(config_path) + " hashes to " + m_config_digest +
                         ", not to the digest its name says");
    }
    const json cfg = parse_json_blob(m_config, where + ": config");
    const json* diff_ids = cfg.is_object() && cfg.contains("rootfs") && cfg["rootfs"].is_object() &&
                                   cfg["rootfs"].contains("diff_ids") && cfg["rootfs"]["diff_ids"].is_array()
                               ? &cfg["rootfs"]["diff_ids"]
                               : nullptr;
    const auto& layers = (*chosen)["Layers"];
    if (diff_ids == nullptr || diff_ids->size() != layers.size()) {
      throw layout_error(where + ": the config's rootfs.diff_ids do not list one digest per layer of manifest.json");
    }
    m_layers.clear();
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (!layers[i].is_string() || !(*diff_ids)[i].is_string())
        throw layout_error(where + ": manifest.json: a malformed layer");
      Descriptor d;
      d.path = layers[i].get<std::string>();
      d.diff_id = checked_digest((*diff_ids)[i].get<std::string>(), where + ": config rootfs.diff_ids");
      const auto s = m_files.slice(d.path);
      if (!s) throw layout_error(where + ": the layer " + printable(d.path) + " is not in the archive");
      d.size = s->size;
      d.media_type = "application/vnd.oci.image.layer.v1.tar";
      m_layers.push_back(d);
    }
    return Top{*text, k_docker_archive_entry, m_config_digest};
  }

  std::string small_blob(const Descriptor& d, const std::string& what) override {
    if (d.digest != m_config_digest) throw layout_error(what + ": " + d.digest + " is not this archive's config");
    return m_config;
  }

  std::unique_ptr<VerifiedFile> layer(const Descriptor& d, const std::string& what) override {
    const auto s = m_files.slice(d.path);
    if (!s) throw layout_error(what + ": " + printable(d.path) + " is not in the archive");
    return std::make_unique<VerifiedFile>(s->fd, s->offset, s->size, d.size, "", what);
  }

  bool is_archive() const override { return true; }
  // The manifest this archive implies: its config and its layers with their diff_ids.
  const std::vector<Descriptor>& layers() const { return m_layers; }
  std::uint64_t config_size() const { return m_config.size(); }

 private:
  Reference m_ref;
  ArchiveFiles m_files;
  Limits m_limits;
  std::string m_config;
  std::string m_config_digest;
  std::vector<Descriptor> m_layers;
};

}  // namespace

std::string checked_digest(const std::string& digest, const std::string& where) {
  if (digest.rfind("sha256:", 0) != 0 || !is_sha256_hex(digest.substr(7))) {
    throw layout_error(where + ": the digest " + printable(digest) +
                       " is not sha256: and 64 lower-case hex digits (the one algorithm every reader must check)");
  }
  return digest;
}

std::string sha256_digest(std::string_view bytes) {
  Hasher h;
  h.update(bytes.data(), bytes.size());
  return "sha256:" + to_hex(h.finish());
}

Descriptor descriptor_of(const json& j, const std::string& where) {
  if (!j.is_object()) throw layout_error(where + ": a descriptor that is not an object");
  Descriptor d;
  if (j.contains("mediaType") && j["mediaType"].is_string()) d.media_type = j["mediaType"].get<std::string>();
  if (!j.contains("digest") || !j["digest"].is_string()) throw layout_error(where + ": a descriptor without a digest");
  d.digest = checked_digest(j["digest"].get<std::string>(), where);
  if (!j.contains("size") || !j["size"].is_number_unsigned())
    throw layout_error(where + ": a descriptor without a size");
  d.size = j["size"].get<std::uint64_t>();
  if (j.contains("platform") && j["platform"].is_object()) {
    const auto& p = j["platform"];
    auto text = [&](const char* k) {
      return p.contains(k) && p[k].is_string() ? p[k].get<std::string>() : std::string();
    };
    d.platform.os = text("os");
    d.platform.architecture = text("architecture");
    d.platform.variant = text("variant");
  } else {
    d.platform.os.clear();
  }
  if (j.contains("annotations") && j["annotations"].is_object()) {
    for (const auto& [k, v] : j["annotations"].items()) {
      if (v.is_string()) d.annotations[k] = v.get<std::string>();
    }
  }
  return d;
}

bool is_index_type(std::string_view media_type) {
  return media_type == k_oci_index || media_type == k_docker_list;
}

bool is_manifest_type(std::string_view media_type) {
  return media_type == k_oci_manifest || media_type == k_docker_manifest;
}

json parse_json_blob(const std::string& body, const std::string& what) {
  if (json_deeper_than(body, 64)) throw layout_error(what + ": JSON nested deeper than 64 levels");
  try {
    return json::parse(body);
  } catch (const json::exception&) {
    throw layout_error(what + ": not JSON");
  }
}

std::string json_text(const json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string() ? object[key].get<std::string>()
                                                                               : std::string();
}

std::string media_type_of(const json& doc, const std::string& declared) {
  if (doc.is_object() && doc.contains("mediaType") && doc["mediaType"].is_string()) {
    return doc["mediaType"].get<std::string>();
  }
  if (!declared.empty()) return declared;
  if (doc.is_object() && doc.contains("manifests")) return k_oci_index;
  return k_oci_manifest;
}

std::unique_ptr<Source> open_layout(const Reference& ref, const Limits& limits) {
  if (!is_dir(ref.path)) throw Error(ErrorKind::Usage, ref.what() + ": " + ref.path + " is not a folder");
  return std::make_unique<LayoutSource>(ref, std::make_unique<FolderFiles>(ref.path), limits);
}

std::unique_ptr<Source> open_oci_archive(const Reference& ref, const Limits& limits) {
  return std::make_unique<LayoutSource>(ref, std::make_unique<ArchiveFiles>(ref.path, ref.what(), limits), limits);
}

std::unique_ptr<Source> open_docker_archive(const Reference& ref, const Limits& limits) {
  return std::make_unique<DockerArchiveSource>(ref, limits);
}

// The layers docker-archive's manifest.json implies (pull.cpp asks after top()).
const std::vector<Descriptor>* docker_archive_layers(const Source& source) {
  const auto* d = dynamic_cast<const DockerArchiveSource*>(&source);
  return d == nullptr ? nullptr : &d->layers();
}

std::uint64_t docker_archive_config_size(const Source& source) {
  const auto* d = dynamic_cast<const DockerArchiveSource*>(&source);
  return d == nullptr ? 0 : d->config_size();
}

}  // namespace wheelcheck::container::detail
