// The layer target (fuzz/entries.hpp): any bytes applied as an image layer (inspector/container: the
// decompressor its first bytes name, the tar reader, the root writer) into a fresh root, twice over a second
// layer of the same bytes (whiteouts and links of the first meet the second's entries). Whatever the bytes,
// nothing may appear outside the root: a sibling folder that a climbing path or link would reach stays empty.
// A refusal is an Error(BadInput); any other exception, or a file outside, is a finding.
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz/entries.hpp"
#include "inspector/container/detail.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::fuzz {

namespace {

namespace fs = std::filesystem;

class LayerBytes : public container::detail::Stream {
 public:
  LayerBytes(const std::uint8_t* data, std::size_t size) : m_data(data), m_size(size) {}
  std::size_t read(char* buf, std::size_t n) override {
    const std::size_t k = std::min(n, m_size - m_pos);
    if (k != 0) std::copy(m_data + m_pos, m_data + m_pos + k, buf);
    m_pos += k;
    return k;
  }

 private:
  const std::uint8_t* m_data;
  std::size_t m_size;
  std::size_t m_pos = 0;
};

// One folder per process: <tmp>/wheelcheck-fuzz-layer-<pid>/{deep/er/root, outside}. The root sits three
// levels down, so a ".." that escaped would land in deep/, deep/er/ or the top, all watched.
struct Place {
  fs::path top, root;
  Place() {
    top = fs::temp_directory_path() / ("wheelcheck-fuzz-layer-" + std::to_string(::getpid()));
    root = top / "deep" / "er" / "root";
  }
  ~Place() {
    std::error_code ec;
    fs::remove_all(top, ec);
  }
};

void layer_fail(const std::string& what) {
  throw std::logic_error("fuzz: layer: " + what);
}

}  // namespace

int fuzz_layer(const std::uint8_t* data, std::size_t size) {
  static Place place;
  std::error_code ec;
  fs::remove_all(place.top, ec);
  fs::create_directories(place.root);
  container::Limits limits;
  limits.max_member = 1 << 20;
  limits.max_layer = 8 << 20;
  limits.max_entries = 2000;
  std::vector<std::string> notes;
  try {
    container::detail::RootWriter writer(place.root.string());
    for (int round = 0; round < 2; ++round) {
      LayerBytes in(data, size);
      auto bytes = container::detail::decompressing(in, limits, "layer");
      container::detail::TarReader tar(*bytes, limits, "layer");
      writer.apply(tar, limits, notes);
    }
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput && e.kind() != ErrorKind::Io)
      layer_fail(std::string("an error of kind ") + e.what());
  }
  // Only the folders on the way to the root, and the root, may exist.
  for (const auto& entry : fs::recursive_directory_iterator(place.top, fs::directory_options::none, ec)) {
    const fs::path p = entry.path();
    const auto rel = p.lexically_relative(place.top).string();
    if (rel == "deep" || rel == "deep/er" || rel == "deep/er/root" || rel.rfind("deep/er/root/", 0) == 0) continue;
    layer_fail("a file outside the root: " + rel);
  }
  return 0;
}

}  // namespace wheelcheck::fuzz
