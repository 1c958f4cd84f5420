// Image references as skopeo and the containers tools write them, and OCI platforms.
//   docker://HOST[:PORT]/REPO[:TAG][@sha256:HEX]   a registry (Docker Hub's short names as docker expands
//                                                  them: debian -> registry-1.docker.io/library/debian)
//   oci:DIR[:TAG]                                  an OCI image layout (TAG: the ref.name annotation)
//   oci-archive:FILE[:TAG]                         a tar of one
//   docker-archive:FILE[:REPO:TAG]                 what `docker save` writes
#include <sys/utsname.h>

#include <algorithm>
#include <cctype>

#include "inspector/container/detail.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::container {

namespace {

constexpr std::string_view k_docker = "docker://";
constexpr std::string_view k_oci = "oci:";
constexpr std::string_view k_oci_archive = "oci-archive:";
constexpr std::string_view k_docker_archive = "docker-archive:";

Error bad_reference(std::string_view text, const std::string& why) {
  return Error(ErrorKind::Usage,
               "image reference " + printable(text) + ": " + why +
                   " (docker://HOST/REPO:TAG, docker://HOST/REPO@sha256:..., oci:DIR[:TAG], oci-archive:FILE, "
                   "docker-archive:FILE; docs/images.md)");
}

// The distribution spec's repository name: lower-case components of [a-z0-9] joined by '.', '_', '__' or
// '-' runs, separated by '/'.
bool valid_repository(std::string_view repo) {
  if (repo.empty() || repo.size() > 255) return false;
  for (const auto& part : split(repo, "/", true)) {
    if (part.empty()) return false;
    if (!std::isalnum(static_cast<unsigned char>(part.front())) ||
        !std::isalnum(static_cast<unsigned char>(part.back()))) {
      return false;
    }
    for (char c : part) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
  }
  return true;
}

bool valid_tag(std::string_view tag) {
  if (tag.empty() || tag.size() > 128) return false;
  if (!(std::isalnum(static_cast<unsigned char>(tag[0])) || tag[0] == '_')) return false;
  return std::all_of(tag.begin(), tag.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

// "PATH[:TAG]" of a local transport: the last ':' after the last '/' splits, when what follows is a tag.
void split_local(std::string_view rest, Reference& ref, bool tag_has_colon) {
  std::string path(rest);
  std::string tag;
  const auto slash = path.rfind('/');
  const auto from = slash == std::string::npos ? 0 : slash + 1;
  auto colon = path.find(':', from);
  if (colon != std::string::npos) {
    tag = path.substr(colon + 1);
    path = path.substr(0, colon);
  }
  if (!tag_has_colon && tag.find(':') != std::string::npos) throw bad_reference(ref.text, "a tag with a ':' in it");
  ref.path = path;
  ref.tag = tag;
}

}  // namespace

std::string Reference::what() const {
  return text;
}

bool is_reference(std::string_view text) {
  return text.rfind(k_docker, 0) == 0 || text.rfind(k_oci_archive, 0) == 0 || text.rfind(k_docker_archive, 0) == 0 ||
         text.rfind(k_oci, 0) == 0;
}

Reference parse_reference(std::string_view text) {
  Reference ref;
  ref.text = std::string(text);
  if (text.rfind(k_docker, 0) == 0) {
    ref.transport = Transport::Registry;
    std::string rest(text.substr(k_docker.size()));
    if (rest.find('@') != std::string::npos) {
      const auto at = rest.find('@');
      ref.digest = rest.substr(at + 1);
      rest = rest.substr(0, at);
      if (ref.digest.rfind("sha256:", 0) != 0 || !is_sha256_hex(ref.digest.substr(7))) {
        throw bad_reference(text, "a digest is sha256: and 64 lower-case hex digits");
      }
    }
    const auto slash = rest.find('/');
    std::string first = slash == std::string::npos ? "" : rest.substr(0, slash);
    // Docker's rule: the first component is a registry when it has a '.' or a ':' or is "localhost".
    const bool has_host =
        !first.empty() && (first.find('.') != std::string::npos || first.find(':') != std::string::npos ||
                           first == "localhost" || first.front() == '[');
    std::string path;
    if (has_host) {
      ref.registry = first;
      path = rest.substr(slash + 1);
    } else {
      ref.registry = "registry-1.docker.io";
      path = rest;
      if (path.find('/') == std::string::npos) path = "library/" + path;
    }
    const auto last_slash = path.rfind('/');
    const auto colon = path.find(':', last_slash == std::string::npos ? 0 : last_slash);
    if (colon != std::string::npos) {
      ref.tag = path.substr(colon + 1);
      path = path.substr(0, colon);
      if (!valid_tag(ref.tag)) throw bad_reference(text, "the tag " + printable(ref.tag) + " is not a valid tag");
    }
    if (!valid_repository(path)) {
      throw bad_reference(text, "the repository " + printable(path) +
                                    " is not a valid name (lower-case letters, digits, '.', '_', '-', '/')");
    }
    ref.repository = path;
    if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
    for (char c : ref.registry) {
      if (std::isspace(static_cast<unsigned char>(c)) || c == '@' || c == '/' || c == '?' || c == '#') {
        throw bad_reference(text, "the registry " + printable(ref.registry) + " is not a host[:port]");
      }
    }
    return ref;
  }
  if (text.rfind(k_oci_archive, 0) == 0) {
    ref.transport = Transport::OciArchive;
    split_local(text.substr(k_oci_archive.size()), ref, false);
  } else if (text.rfind(k_docker_archive, 0) == 0) {
    ref.transport = Transport::DockerArchive;
    // docker-archive:FILE[:REPO:TAG]: the first ':' ends the file, as skopeo reads it.
    const std::string rest(text.substr(k_docker_archive.size()));
    const auto colon = rest.find(':');
    ref.path = colon == std::string::npos ? rest : rest.substr(0, colon);
    ref.tag = colon == std::string::npos ? "" : rest.substr(colon + 1);
  } else if (text.rfind(k_oci, 0) == 0) {
    ref.transport = Transport::OciLayout;
    split_local(text.substr(k_oci.size()), ref, false);
  } else {
    throw bad_reference(text, "no transport");
  }
  if (ref.path.empty()) throw bad_reference(text, "no file or folder named");
  return ref;
}

std::string Platform::str() const {
  return os + "/" + architecture + (variant.empty() ? "" : "/" + variant);
}

Platform parse_platform(std::string_view text) {
  const auto parts = split(text, "/", true);
  Platform p;
  if (parts.size() == 1) {
    p.architecture = parts[0];
  } else if (parts.size() == 2 || parts.size() == 3) {
    p.os = parts[0];
    p.architecture = parts[1];
    if (parts.size() == 3) p.variant = parts[2];
  }
  const bool ok = !p.os.empty() && !p.architecture.empty() && (parts.size() != 3 || !p.variant.empty());
  if (!ok || parts.size() > 3) {
    throw Error(ErrorKind::Usage, "--platform " + printable(text) +
                                      ": expected OS/ARCH[/VARIANT], as an image index names it (linux/amd64, "
                                      "linux/arm64, linux/arm64/v8)");
  }
  return p;
}

std::optional<Platform> platform_of_machine(std::string_view machine) {
  Platform p;
  if (machine == "x86_64") {
    p.architecture = "amd64";
  } else if (machine == "aarch64") {
    p.architecture = "arm64";
  } else if (machine == "ppc64le" || machine == "s390x" || machine == "riscv64") {
    p.architecture = std::string(machine);
  } else if (machine == "i686" || machine == "i386") {
    p.architecture = "386";
  } else {
    return std::nullopt;
  }
  return p;
}

Platform host_platform() {
  struct utsname u {};
  if (::uname(&u) == 0) {
    if (auto p = platform_of_machine(u.machine)) return *p;
  }
  Platform p;
  p.architecture = "amd64";
  return p;
}

}  // namespace wheelcheck::container
