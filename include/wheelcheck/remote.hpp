// Remote wheels: a wheel given by URL is read in byte ranges (headers-only, the default where the
// server answers ranges) or downloaded whole, verified against its sha256, and inspected like a file.
// Either way the profile lands in the profile cache under the wheel's sha256, so a wheel seen before is
// never fetched again.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "wheelcheck/bytes.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/profile.hpp"

namespace wheelcheck::remote {

// A remote file read through byte ranges, with a block cache in front (64 KB blocks): reads that go forward
// grow the read-ahead (as long as the run so far, up to 2 MB), so a member streamed from its start costs
// a few requests.
// Thread safe. A transfer that fails after the client's retries throws Error(Io). What it moved is
// counted in the client's stats().
class HttpFile final : public RandomAccess {
 public:
  // `tail`: the file's last tail.size() bytes when already at hand (Client::stat_with_tail), served
  // without a request.
  HttpFile(net::Client& client, net::RemoteFile file, std::string tail = {});
  ~HttpFile() override;
  std::uint64_t size() const override;
  std::string name() const override;  // the URL, credentials removed
  void read_at(std::uint64_t offset, std::span<std::byte> out) const override;
  // The blocks of these ranges that are not cached yet, in as few requests as their layout allows: runs of
  // blocks, two runs merged where fewer than three blocks lie between them (cheaper than one more request).
  void prefetch(std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// How much of a remote wheel to read: Auto reads headers-only where the server answers ranges, else
// downloads the whole wheel (and then verifies it fully).
enum class Mode { Auto, Full, Headers };

struct WheelUrl {
  std::string url;       // without the fragment
  std::string filename;  // the last path segment, percent-decoded
  std::string sha256;    // from a #sha256= fragment, lower-case hex; "" when absent
};
WheelUrl parse_wheel_url(const std::string& url);  // throws Error(BadInput)

struct Fetch {
  Mode mode = Mode::Auto;
  std::string sha256;         // the index's sha256 when known (wins over the URL's fragment)
  std::string downloads_dir;  // where whole downloads go while they are checked ("" = cache/downloads)
  std::function<void(const net::DownloadProgress&)> progress;
};

struct Fetched {
  WheelProfile profile;
  bool from_cache = false;
  std::uint64_t bytes_fetched = 0;  // wheel bytes moved over the network for this wheel
  bool whole = false;               // downloaded whole (no ranges, or Mode::Full)
  std::string cache_error = {};     // why the profile could not be cached (the answer stands; empty if it was)
};

// The profile of the wheel at `url`. `options.verify` is set from the mode. Throws Error(BadInput) for a
// wheel that cannot be fetched after the retries or does not match its sha256.
Fetched inspect_url(const std::string& url, const Fetch& fetch, InspectOptions options, const ProfileCache* cache,
                    net::Client& client);

}  // namespace wheelcheck::remote
