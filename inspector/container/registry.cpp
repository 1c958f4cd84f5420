// A registry's HTTP API v2 (the OCI distribution spec): manifests by tag or digest, blobs by digest, with
// the authentication the spec and Docker's token protocol describe: anonymous; a 401 answering
// `WWW-Authenticate: Basic` gets the user's credentials; `Bearer realm=...,service=...,scope=...` gets a
// token from the realm (with those credentials when there are some). Credentials come from the file the
// user's tools already wrote: $REGISTRY_AUTH_FILE, else $DOCKER_CONFIG/config.json, else
// ~/.docker/config.json ("auths": {"HOST": {"auth": base64(user:password)}}).
//
// Plain HTTP is used for loopback registries (127.0.0.0/8, localhost, [::1]), as Docker treats them, and for
// the hosts $WHEELCHECK_INSECURE_REGISTRIES lists; HTTPS for every other. Manifests are checked against the
// digest that names them (the reference's, else the one they hash to, which must be the registry's
// Docker-Content-Digest when it sends one); blobs are downloaded into the cache only through a check of
// their digest (net::Client::download), so the cache never holds one that failed it.
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "inspector/container/detail.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/net.hpp"

namespace wheelcheck::container::detail {

using nlohmann::json;

namespace {

Error registry_error(const std::string& what) {
  return Error(ErrorKind::BadInput, what);
}

std::string base64(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(std::max(n, 0)));
  return out;
}

std::optional<std::string> unbase64(std::string_view in) {
  std::string text(trim(in));
  if (text.empty() || text.size() % 4 != 0 || text.size() > 65536) return std::nullopt;
  std::string out(3 * text.size() / 4 + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  std::size_t len = static_cast<std::size_t>(n);
  if (text.size() >= 1 && text[text.size() - 1] == '=') --len;
  if (text.size() >= 2 && text[text.size() - 2] == '=') --len;
  out.resize(len);
  return out;
}

bool loopback_host(const std::string& registry) {
  std::string host = registry;
  if (!host.empty() && host.front() == '[') {
    host = host.substr(1, host.find(']') == std::string::npos ? std::string::npos : host.find(']') - 1);
    return host == "::1";
  }
  host = host.substr(0, host.find(':'));
  return host == "localhost" || host.rfind("127.", 0) == 0;
}

bool insecure(const std::string& registry) {
  if (loopback_host(registry)) return true;
  for (const auto& h : split(getenv_or("WHEELCHECK_INSECURE_REGISTRIES", ""), ", ", false)) {
    if (h == registry) return true;
  }
  return false;
}

struct Credentials {
  std::string user;
  std::string password;
  std::string file;  // where they came from
  bool empty() const { return user.empty() && password.empty(); }
};

std::string credentials_file() {
  if (auto f = getenv_or("REGISTRY_AUTH_FILE", ""); !f.empty()) return f;
  if (auto d = getenv_or("DOCKER_CONFIG", ""); !d.empty()) return d + "/config.json";
  if (auto h = getenv_or("HOME", ""); !h.empty()) return h + "/.docker/config.json";
  return "";
}

// The user's credentials for the registry, from the first file that exists; none when it has none for it.
Credentials credentials_for(const std::string& registry) {
  Credentials c;
  const std::string file = credentials_file();
  if (file.empty() || !is_file(file)) return c;
  json doc;
  try {
    doc = json::parse(read_text_file(file, std::uint64_t{4} << 20));
  } catch (const json::exception&) {
    throw Error(ErrorKind::BadInput, file + ": not JSON (the registry credentials file)");
  }
  if (!doc.is_object() || !doc.contains("auths") || !doc["auths"].is_object()) return c;
  std::vector<std::string> keys = {registry, "https://" + registry, "http://" + registry};
  if (registry == "registry-1.docker.io") {
    keys.insert(keys.begin(), {"https://index.docker.io/v1/", "docker.io", "index.docker.io"});
  }
  for (const auto& key : keys) {
    auto it = doc["auths"].find(key);
    if (it == doc["auths"].end() || !it->is_object()) continue;
    const auto& entry = *it;
    if (entry.contains("auth") && entry["auth"].is_string()) {
      const auto decoded = unbase64(entry["auth"].get<std::string>());
      const auto colon = decoded ? decoded->find(':') : std::string::npos;
      if (colon == std::string::npos) {
        throw Error(ErrorKind::BadInput, file + ": the \"auth\" of " + key + " is not base64 of user:password");
      }
      c.user = decoded->substr(0, colon);
      c.password = decoded->substr(colon + 1);
    } else if (entry.contains("username") && entry["username"].is_string()) {
      c.user = entry["username"].get<std::string>();
      if (entry.contains("password") && entry["password"].is_string())
        c.password = entry["password"].get<std::string>();
    }
    if (!c.empty()) {
      c.file = file;
      return c;
    }
  }
  return c;
}

// WWW-Authenticate: SCHEME k="v", k=v, ...
struct Challenge {
  std::string scheme;  // lower-case
  std::map<std::string, std::string> params;
};

Challenge parse_challenge(const std::string& header) {
  Challenge ch;
  std::size_t i = 0;
  while (i < header.size() && header[i] == ' ') ++i;
  const auto sp = header.find(' ', i);
  ch.scheme = ascii_lower(header.substr(i, sp == std::string::npos ? std::string::npos : sp - i));
  i = sp == std::string::npos ? header.size() : sp + 1;
  while (i < header.size()) {
    while (i < header.size() && (header[i] == ' ' || header[i] == ',')) ++i;
    const auto eq = header.find('=', i);
    if (eq == std::string::npos) break;
    const std::string key = ascii_lower(std::string(trim(header.substr(i, eq - i))));
    i = eq + 1;
    std::string value;
    if (i < header.size() && header[i] == '"') {
      ++i;
      while (i < header.size() && header[i] != '"') {
        if (header[i] == '\\' && i + 1 < header.size()) ++i;
        value += header[i++];
      }
      ++i;
    } else {
      while (i < header.size() && header[i] != ',') value += header[i++];
      value = std::string(trim(value));
    }
    ch.params[key] = value;
  }
  return ch;
}

std::string url_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == ':' || c == '/') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

const char* const k_manifest_accept =
    "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.docker.distribution.manifest.v2+json";

class RegistrySource : public Source {
 public:
  RegistrySource(const Reference& ref, const PullOptions& options, const std::string& images)
      : m_ref(ref), m_options(options), m_images(images), m_client(client_options(options)) {
    m_base = std::string(insecure(ref.registry) ? "http://" : "https://") + ref.registry + "/v2/" + ref.repository;
  }

  Top top() override {
    const std::string name = m_ref.digest.empty() ? m_ref.tag : m_ref.digest;
    const std::string where = m_ref.what();
    // The tag's last answer: a conditional request, and its manifest from the cache when the tag has not moved.
    const std::string ref_file =
        m_images + "/refs/" + sha256_digest(m_ref.registry + "/" + m_ref.repository + ":" + name).substr(7) + ".json";
    json last;
    if (is_file(ref_file)) {
      try {
        last = json::parse(read_text_file(ref_file, 65536));
      } catch (const json::exception&) {
        last = json();
      }
    }
    std::string last_digest;
    std::string last_type;
    net::Validators validators;
    if (json_text(last, "digest").rfind("sha256:", 0) == 0) {
      last_digest = json_text(last, "digest");
      last_type = json_text(last, "media_type");
      validators.etag = json_text(last, "etag");
      if (!is_sha256_hex(last_digest.substr(7)) || !is_file(blob_file(last_digest))) {
        last_digest.clear();
        validators = {};
      }
    }
    if (!m_ref.digest.empty() && is_file(blob_file(m_ref.digest))) {
      // A digest names one manifest forever: the cached one is it (checked again when read).
      return Top{cached_blob(m_ref.digest, 0, where), last_type.empty() ? sniffed_type(m_ref.digest) : last_type,
                 m_ref.digest};
    }
    if (m_options.offline) {
      if (!last_digest.empty()) return Top{cached_blob(last_digest, 0, where), last_type, last_digest};
      throw Error(ErrorKind::BadInput, where + ": offline (WHEELCHECK_OFFLINE), and the cache has no answer for it");
    }
    if (validators.etag.empty() && !last_digest.empty()) validators.etag = "\"" + last_digest + "\"";
    net::Response r =
        request(m_base + "/manifests/" + url_escape(name), k_manifest_accept,
                last_digest.empty() ? net::Validators{} : validators, m_options.limits.max_manifest, where);
    if (r.not_modified()) {
      say(where + " has not moved (" + last_digest + ")");
      return Top{cached_blob(last_digest, 0, where), last_type, last_digest};
    }
    const std::string digest = sha256_digest(r.body);
    if (!m_ref.digest.empty() && digest != m_ref.digest) {
      throw registry_error(where + ": the registry answered a manifest that hashes to " + digest + ", not the " +
                           m_ref.digest + " asked for");
    }
    const auto header = r.headers.find("docker-content-digest");
    if (header != r.headers.end() && std::string(trim(header->second)) != digest &&
        header->second.rfind("sha256:", 0) == 0) {
      throw registry_error(where + ": the registry says the manifest is " + std::string(trim(header->second)) +
                           ", and its bytes hash to " + digest);
    }
    std::string type = std::string(trim(r.content_type.substr(0, r.content_type.find(';'))));
    const json doc = parse_json_blob(r.body, where + ": its manifest");
    type = media_type_of(doc, is_index_type(type) || is_manifest_type(type) ? type : "");
    store_blob(digest, r.body);
    json entry = {{"digest", digest}, {"media_type", type}, {"etag", r.validators.etag}};
    try {
      make_dirs(m_images + "/refs");
      write_file_atomic(ref_file, entry.dump());
    } catch (const Error& e) {
      say(std::string("the tag's digest is not kept: ") + e.what());
    }
    return Top{r.body, type, digest};
  }

  std::string small_blob(const Descriptor& d, const std::string& what) override {
    if (d.size > m_options.limits.max_manifest) {
      throw registry_error(what + ": declares " + format_size(d.size) + ", more than the " +
                           format_size(m_options.limits.max_manifest) + " a manifest or config may have");
    }
    if (is_file(blob_file(d.digest))) return cached_blob(d.digest, d.size, what);
    if (m_options.offline)
      throw registry_error(what + ": offline (WHEELCHECK_OFFLINE), and the cache does not hold " + d.digest);
    const bool manifest = is_index_type(d.media_type) || is_manifest_type(d.media_type);
    net::Response r = request(m_base + (manifest ? "/manifests/" : "/blobs/") + d.digest,
                              manifest ? k_manifest_accept : "*/*", {}, d.size == 0 ? 1 : d.size, what);
    if (r.body.size() != d.size) {
      throw registry_error(what + ": the registry sent " + std::to_string(r.body.size()) + " bytes, not the " +
                           std::to_string(d.size) + " declared");
    }
    const std::string got = sha256_digest(r.body);
    if (got != d.digest)
      throw registry_error(what + ": the registry sent bytes that hash to " + got + ", not " + d.digest);
    store_blob(d.digest, r.body);
    return r.body;
  }

  std::unique_ptr<VerifiedFile> layer(const Descriptor& d, const std::string& what) override {
    const std::string file = blob_file(d.digest);
    // A cached layer is checked before it is used again: one damaged on disk is fetched anew, not refused.
    if (is_file(file) && ("sha256:" + sha256_file_hex(file)) != d.digest) {
      say(what + ": the cached copy no longer hashes to its digest; fetching it again");
      std::remove(file.c_str());
    }
    if (!is_file(file)) {
      if (m_options.offline)
        throw registry_error(what + ": offline (WHEELCHECK_OFFLINE), and the cache does not hold it");
      const std::string partial = m_images + "/partial/" + d.digest.substr(7);
      make_dirs(m_images + "/partial");
      net::RequestOptions ro;
      ro.headers = auth_headers();
      ro.max_bytes = d.size;
      ro.limit_hint = "the size the manifest declares for the layer";
      say("fetching " + what + " (" + format_size(d.size) + ")");
      try {
        m_client.download(m_base + "/blobs/" + d.digest, partial, d.digest.substr(7), {}, ro);
      } catch (const Error& e) {
        throw registry_error(what + ": " + e.what());
      }
      make_dirs(dir_name(file));
      if (std::rename(partial.c_str(), file.c_str()) != 0) throw Error(ErrorKind::Io, "cannot rename " + partial);
    }
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(ErrorKind::Io, "cannot open " + file);
    m_fds.push_back(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw Error(ErrorKind::Io, "cannot stat " + file);
    // Its digest was checked once already, by the download (before the rename into blobs/) or by the check of a
    // cached copy above: the stream checks its size, and hashes nothing again.
    return std::make_unique<VerifiedFile>(fd, 0, static_cast<std::uint64_t>(st.st_size), d.size, "", what);
  }

  ~RegistrySource() override {
    for (int fd : m_fds) ::close(fd);
  }
  RegistrySource(const RegistrySource&) = delete;
  RegistrySource& operator=(const RegistrySource&) = delete;

 private:
  static net::ClientOptions client_options(const PullOptions& o) {
    net::ClientOptions c;
    c.connect_timeout_s = o.connect_timeout_s;
    c.low_speed_time_s = o.low_speed_time_s;
    c.max_attempts = 1 + std::max(0, o.retries);
    c.max_redirects = o.max_redirects;
    c.backoff_initial_ms = 200;
    c.ca_file = o.ca_file;
    c.netrc_file = "/dev/null";
    if (o.progress) c.log = o.progress;
    return c;
  }

  void say(const std::string& s) const {
    if (m_options.progress) m_options.progress(s);
  }

  std::string blob_file(const std::string& digest) const { return m_images + "/blobs/sha256/" + digest.substr(7); }

  // A cached manifest or config, checked again (the cache is the user's, and a check is cheap).
  std::string cached_blob(const std::string& digest, std::uint64_t size, const std::string& what) const {
    const std::string text = read_text_file(blob_file(digest), m_options.limits.max_manifest);
    if (sha256_digest(text) != digest || (size != 0 && text.size() != size)) {
      std::remove(blob_file(digest).c_str());
      throw registry_error(what + ": the cached " + digest + " no longer hashes to its name (removed; run again)");
    }
    return text;
  }

  std::string sniffed_type(const std::string& digest) const {
    const std::string text = read_text_file(blob_file(digest), m_options.limits.max_manifest);
    return media_type_of(parse_json_blob(text, m_ref.what()), "");
  }

  // Kept for the next run; a cache that cannot be written (read-only) only costs that run a request.
  void store_blob(const std::string& digest, const std::string& body) const {
    if (is_file(blob_file(digest))) return;
    try {
      make_dirs(m_images + "/blobs/sha256");
      write_file_atomic(blob_file(digest), body);
    } catch (const Error& e) {
      say(std::string("not kept in the cache: ") + e.what());
    }
  }

  std::vector<std::string> auth_headers() const {
    if (m_authorization.empty()) return {};
    return {"Authorization: " + m_authorization};
  }

  // A GET with the registry's authentication, learnt from its first 401.
  net::Response request(const std::string& url, const std::string& accept, const net::Validators& validators,
                        std::uint64_t max_bytes, const std::string& what) {
    for (int round = 0;; ++round) {
      net::RequestOptions ro;
      ro.headers = auth_headers();
      ro.pass_statuses = {401};
      ro.max_bytes = max_bytes;
      ro.limit_hint = "a manifest or config has at most 4 MiB, the distribution registry's own limit";
      net::Response r;
      try {
        r = m_client.get(url, accept, validators, ro);
      } catch (const net::NotFound&) {
        throw Error(ErrorKind::Usage, what + ": the registry has no such image (" + net::redact_url(url) + ": 404)");
      } catch (const Error& e) {
        throw registry_error(what + ": " + e.what());
      }
      if (r.status != 401) return r;
      if (round > 0) {
        throw registry_error(what + ": the registry refuses the " + (m_credentials.empty() ? "anonymous" : "given") +
                             " access (401)" +
                             (m_credentials.empty() ? "; give credentials in " + credentials_hint()
                                                    : " with the credentials from " + m_credentials.file));
      }
      authenticate(r, what);
    }
  }

  std::string credentials_hint() const {
    const std::string f = credentials_file();
    return (f.empty() ? std::string("~/.docker/config.json") : f) + " (docker login " + m_ref.registry +
           ", or REGISTRY_AUTH_FILE)";
  }

  void authenticate(const net::Response& r, const std::string& what) {
    const auto header = r.headers.find("www-authenticate");
    if (header == r.headers.end())
      throw registry_error(what + ": a 401 without WWW-Authenticate (the registry says no way in)");
    const Challenge ch = parse_challenge(header->second);
    m_credentials = credentials_for(m_ref.registry);
    if (ch.scheme == "basic") {
      if (m_credentials.empty()) {
        throw registry_error(what + ": the registry asks for a user and password; give them in " + credentials_hint());
      }
      m_authorization = "Basic " + base64(m_credentials.user + ":" + m_credentials.password);
      return;
    }
    if (ch.scheme != "bearer")
      throw registry_error(what + ": the registry asks for " + printable(ch.scheme) +
                           " authentication, which is not read");
    const auto realm = ch.params.find("realm");
    if (realm == ch.params.end() || !net::is_url(realm->second)) {
      throw registry_error(what + ": a Bearer challenge without an http(s) realm");
    }
    std::string url = realm->second + (realm->second.find('?') == std::string::npos ? "?" : "&");
    std::vector<std::string> query;
    if (auto s = ch.params.find("service"); s != ch.params.end()) query.push_back("service=" + url_escape(s->second));
    const auto scope = ch.params.find("scope");
    query.push_back("scope=" +
                    url_escape(scope != ch.params.end() ? scope->second : "repository:" + m_ref.repository + ":pull"));
    url += join(query, "&");
    net::RequestOptions ro;
    ro.max_bytes = 1 << 20;
    if (!m_credentials.empty()) {
      ro.headers.push_back("Authorization: Basic " + base64(m_credentials.user + ":" + m_credentials.password));
    }
    net::Response t;
    try {
      t = m_client.get(url, "application/json", {}, ro);
    } catch (const Error& e) {
      throw registry_error(what + ": the token server " + net::redact_url(realm->second) + " failed: " + e.what());
    }
    std::string token;
    try {
      const json j = json::parse(t.body);
      if (j.is_object() && j.contains("token") && j["token"].is_string()) token = j["token"].get<std::string>();
      if (token.empty() && j.is_object() && j.contains("access_token") && j["access_token"].is_string()) {
        token = j["access_token"].get<std::string>();
      }
    } catch (const json::exception&) {
      token.clear();
    }
    const bool printable_token = !token.empty() && token.size() < 65536 &&
                                 std::all_of(token.begin(), token.end(), [](char c) { return c > ' ' && c < 127; });
    if (!printable_token) {
      throw registry_error(what + ": the token server " + net::redact_url(realm->second) +
                           " answered no token (a JSON object with \"token\" or \"access_token\")");
    }
    m_authorization = "Bearer " + token;
  }

  Reference m_ref;
  PullOptions m_options;
  std::string m_images;
  net::Client m_client;
  std::string m_base;
  std::string m_authorization;
  Credentials m_credentials;
  std::vector<int> m_fds;
};

}  // namespace

std::unique_ptr<Source> open_registry(const Reference& ref, const PullOptions& options, const std::string& images) {
  return std::make_unique<RegistrySource>(ref, options, images);
}

}  // namespace wheelcheck::container::detail
