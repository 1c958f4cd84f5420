// Small helpers shared by the pipeline stages: hashing, encodings, files, a streaming JSON writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wheelcheck {

// A digest over a stream of chunks (OpenSSL's EVP: SHA-NI where the CPU has it). Algorithms: the ones
// RECORD may name, sha256 (the default), sha384, sha512; throws Error(BadInput) for any other.
class Hasher {
 public:
  explicit Hasher(std::string_view algorithm = "sha256");
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  static bool supported(std::string_view algorithm);
  void update(const void* data, std::size_t size);
  std::vector<std::uint8_t> finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

std::string to_hex(std::span<const std::uint8_t> bytes);
// URL percent escapes decoded ("2.10.0%2Bcu130" -> "2.10.0+cu130"); a '%' not followed by two hex
// digits stays as it is.
std::string percent_decode(std::string_view s);
std::string ascii_lower(std::string_view s);  // A-Z -> a-z, nothing else (HTTP names, hex, tags)
bool is_sha256_hex(std::string_view s);       // 64 lower-case hex digits
std::string base64url_nopad(std::span<const std::uint8_t> bytes);
std::string sha256_file_hex(const std::string& path);

// Files.
std::string read_text_file(const std::string& path, std::uint64_t max_size = std::uint64_t{256} << 20);
void write_file_atomic(const std::string& path, std::string_view content);  // temp file + rename
void make_dirs(const std::string& path);
std::string getenv_or(const char* name, const std::string& fallback);

// Human sizes: "8G", "512M", "100k", "123" -> bytes. Throws Error(Usage).
std::uint64_t parse_size(std::string_view text);
std::string format_size(std::uint64_t bytes);

// A streaming JSON writer: constant memory however large the document.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : m_out(out) {}
  // With a sink, the buffer is handed to it (and emptied) whenever it passes about 1 MB.
  JsonWriter(std::string& out, std::function<void(std::string&)> sink) : m_out(out), m_sink(std::move(sink)) {}
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(const std::string& v) { return value(std::string_view(v)); }
  JsonWriter& value(bool v);
  JsonWriter& value(std::int64_t v);
  JsonWriter& value(std::uint64_t v);
  JsonWriter& value(int v) { return value(static_cast<std::int64_t>(v)); }
  JsonWriter& value(unsigned v) { return value(static_cast<std::uint64_t>(v)); }
  JsonWriter& null();
  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

 private:
  void separate();
  std::string& m_out;
  std::function<void(std::string&)> m_sink;
  std::vector<bool> m_first;  // one per open container: no element written yet
  bool m_after_key = false;
};
void append_json_string(std::string& out, std::string_view s);

}  // namespace wheelcheck
