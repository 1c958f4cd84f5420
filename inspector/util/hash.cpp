#include <openssl/evp.h>

#include <array>
#include <cstdio>

#include "wheelcheck/bytes.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck {

struct Hasher::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

namespace {
const EVP_MD* digest_for(std::string_view algorithm) {
  if (algorithm == "sha256") return EVP_sha256();
  if (algorithm == "sha384") return EVP_sha384();
  if (algorithm == "sha512") return EVP_sha512();
  return nullptr;
}
}  // namespace

bool Hasher::supported(std::string_view algorithm) {
  return digest_for(algorithm) != nullptr;
}

Hasher::Hasher(std::string_view algorithm) : m_impl(std::make_unique<Impl>()) {
  const EVP_MD* md = digest_for(algorithm);
  if (md == nullptr) throw bad_input("unsupported hash algorithm '" + std::string(algorithm) + "'");
  m_impl->ctx = EVP_MD_CTX_new();
  if (m_impl->ctx == nullptr || EVP_DigestInit_ex(m_impl->ctx, md, nullptr) != 1) {
    throw Error(ErrorKind::Internal, "OpenSSL could not start a digest");
  }
}

Hasher::~Hasher() {
  EVP_MD_CTX_free(m_impl->ctx);
}

void Hasher::update(const void* data, std::size_t size) {
  if (size != 0 && EVP_DigestUpdate(m_impl->ctx, data, size) != 1) {
    throw Error(ErrorKind::Internal, "OpenSSL SHA-256 update failed");
  }
}

std::vector<std::uint8_t> Hasher::finish() {
  std::vector<std::uint8_t> out(EVP_MAX_MD_SIZE);
  unsigned len = 0;
  if (EVP_DigestFinal_ex(m_impl->ctx, out.data(), &len) != 1) {
    throw Error(ErrorKind::Internal, "OpenSSL SHA-256 final failed");
  }
  out.resize(len);
  return out;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (auto b : bytes) {
    out.push_back(k_digits[b >> 4]);
    out.push_back(k_digits[b & 15]);
  }
  return out;
}

std::string base64url_nopad(std::span<const std::uint8_t> bytes) {
  static constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{bytes[i]} << 16) | (std::uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    out += {k_alphabet[(v >> 18) & 63], k_alphabet[(v >> 12) & 63], k_alphabet[(v >> 6) & 63], k_alphabet[v & 63]};
  }
  if (bytes.size() - i == 1) {
    const std::uint32_t v = std::uint32_t{bytes[i]} << 16;
    out += {k_alphabet[(v >> 18) & 63], k_alphabet[(v >> 12) & 63]};
  } else if (bytes.size() - i == 2) {
    const std::uint32_t v = (std::uint32_t{bytes[i]} << 16) | (std::uint32_t{bytes[i + 1]} << 8);
    out += {k_alphabet[(v >> 18) & 63], k_alphabet[(v >> 12) & 63], k_alphabet[(v >> 6) & 63]};
  }
  return out;
}

std::string sha256_file_hex(const std::string& path) {
  FileSource source(path);
  auto stream = source.open();
  Hasher sha;
  std::vector<std::byte> buf(std::size_t{1} << 20);
  while (auto n = stream->read(buf)) sha.update(buf.data(), n);
  auto digest = sha.finish();
  return to_hex(digest);
}

}  // namespace wheelcheck
