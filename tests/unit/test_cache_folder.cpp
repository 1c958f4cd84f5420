// The profile cache's trust: entries that prove themselves (frame, key, CRC-64), a folder reached without
// following links and refused when it is not the user's, temporaries of dead processes swept, the size
// cap, locks that take turns. The command line's side (damaged entries, /dev/full, kills) is the fault
// suite, tests/fault/fault.py.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "inspect_support.hpp"
#include "inspector/profile/cache_folder.hpp"
#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/util.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_cache_folder {

using namespace wheelcheck;
using namespace wheelcheck::test;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

void put(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}

}  // namespace

TEST(CacheFrame, ReadsBackOnlyWhatWasWrittenForThatKey) {
  const std::string payload = "{\"a\": 1}\n";
  const auto framed = cache_folder::frame("json", "abc.fast.v1.5", true, payload);
  const auto u = cache_folder::unframe(framed, "json", "abc.fast.v1.5");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->payload, payload);
  EXPECT_TRUE(u->flag);
  EXPECT_FALSE(cache_folder::unframe(framed, "json", "abd.fast.v1.5"));     // another wheel's entry
  EXPECT_FALSE(cache_folder::unframe(framed, "profile", "abc.fast.v1.5"));  // another kind
  // Every single-byte change anywhere (header, flag, size, key, payload) and every truncation is a miss.
  for (std::size_t i = 0; i < framed.size(); ++i) {
    std::string bad = framed;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    EXPECT_FALSE(cache_folder::unframe(bad, "json", "abc.fast.v1.5")) << "byte " << i;
    EXPECT_FALSE(cache_folder::unframe(framed.substr(0, i), "json", "abc.fast.v1.5")) << "length " << i;
  }
  EXPECT_FALSE(cache_folder::unframe(framed + "x", "json", "abc.fast.v1.5"));
}

// map_entry (what the warm `inspect --json` prints: the entry mapped, never copied) accepts and refuses
// exactly what unframe does, for short payloads and for ones over a page.
TEST(CacheFolder, MapEntryAgreesWithUnframe) {
  TempDir dir;
  cache_folder::Folder folder(dir.file("cache"), std::uint64_t{1} << 30);
  for (const std::size_t n : {std::size_t{0}, std::size_t{10}, std::size_t{5000}, std::size_t{70000}}) {
    std::string payload;
    for (std::size_t i = 0; i < n; ++i) payload.push_back(static_cast<char>('a' + i % 26));
    const auto framed = cache_folder::frame("json", "k.fast", n % 2 == 0, payload);
    folder.write("profiles/ab/e", framed);
    const auto e = folder.map_entry("profiles/ab/e", 1 << 20, "json", "k.fast");
    ASSERT_TRUE(e) << n;
    EXPECT_EQ(e->payload, payload);
    EXPECT_EQ(e->flag, n % 2 == 0);
    EXPECT_FALSE(folder.map_entry("profiles/ab/e", 1 << 20, "json", "other.fast"));
    EXPECT_FALSE(folder.map_entry("profiles/ab/e", 1 << 20, "profile", "k.fast"));
    EXPECT_FALSE(folder.map_entry("profiles/ab/e", framed.size() - 1, "json", "k.fast"));  // over max
    // A flip in the header, in the payload and at its last byte, and truncations there: each a miss.
    std::vector<std::size_t> at = {0, 9, 30, framed.size() - 1, framed.size() / 2};
    for (const std::size_t i : at) {
      std::string bad = framed;
      bad[i] = static_cast<char>(bad[i] ^ 0x01);
      put(dir.file("cache") + "/profiles/ab/e", bad);
      EXPECT_FALSE(folder.map_entry("profiles/ab/e", 1 << 20, "json", "k.fast")) << n << " byte " << i;
      put(dir.file("cache") + "/profiles/ab/e", framed.substr(0, i));
      EXPECT_FALSE(folder.map_entry("profiles/ab/e", 1 << 20, "json", "k.fast")) << n << " length " << i;
    }
    put(dir.file("cache") + "/profiles/ab/e", framed + "x");
    EXPECT_FALSE(folder.map_entry("profiles/ab/e", 1 << 20, "json", "k.fast"));
  }
}

TEST(CacheFolder, NeverReadsOrWritesThroughALink) {
  TempDir dir;
  const std::string root = dir.file("cache");
  const std::string outside = dir.file("outside");
  fs::create_directories(outside);
  put(outside + "/secret", "CANARY");
  cache_folder::Folder folder(root, std::uint64_t{1} << 30);
  folder.write("profiles/ab/entry", "bytes");
  EXPECT_EQ(folder.read("profiles/ab/entry", 100), "bytes");
  // A link as the entry, and a link as the shard folder: both read as absent.
  fs::create_directories(root + "/profiles/cd");
  fs::create_symlink(outside + "/secret", root + "/profiles/cd/entry");
  EXPECT_FALSE(folder.read("profiles/cd/entry", 100));
  fs::create_directory_symlink(outside, root + "/profiles/ef");
  EXPECT_FALSE(folder.read("profiles/ef/secret", 100));
  // Writing below a linked shard replaces the link by a real folder; nothing lands outside.
  folder.write("profiles/ef/entry", "new");
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(root + "/profiles/ef")));
  EXPECT_FALSE(fs::exists(outside + "/entry"));
  EXPECT_EQ(slurp(outside + "/secret"), "CANARY");
  // A FIFO and a folder where an entry belongs read as absent (and the FIFO does not block).
  ASSERT_EQ(::mkfifo((root + "/profiles/ab/fifo").c_str(), 0644), 0);
  EXPECT_FALSE(folder.read("profiles/ab/fifo", 100));
  fs::create_directories(root + "/profiles/ab/dir");
  EXPECT_FALSE(folder.read("profiles/ab/dir", 100));
  EXPECT_FALSE(folder.read("profiles/ab/entry", 2));  // over the limit
}

TEST(CacheFolder, RefusesAFolderThatIsNotPrivate) {
  TempDir dir;
  const std::string root = dir.file("cache");
  fs::create_directories(root);
  ::chmod(root.c_str(), 0777);
  EXPECT_THROW(cache_folder::Folder(root, 1 << 20), Error);
  ::chmod(root.c_str(), 01777);
  EXPECT_THROW(cache_folder::Folder(root, 1 << 20), Error);
  ::chmod(root.c_str(), 0755);
  EXPECT_NO_THROW(cache_folder::Folder(root, 1 << 20));
  if (::geteuid() == 0) {  // another owner (root can hand a folder to nobody)
    ASSERT_EQ(::chown(root.c_str(), 65534, 65534), 0);
    try {
      cache_folder::Folder f(root, 1 << 20);
      ADD_FAILURE() << "a folder owned by user 65534 was used";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("owned by user 65534"), std::string::npos) << e.what();
    }
  }
}

TEST(CacheFolder, TheCapRemovesTheLeastRecentlyUsed) {
  TempDir dir;
  const std::string root = dir.file("cache");
  {
    cache_folder::Folder folder(root, 100000);
    for (int i = 0; i < 5; ++i) {
      folder.write("profiles/0" + std::to_string(i) + "/e", std::string(30000, 'x'));
      // Older mtimes for the earlier entries, as days of use would leave them.
      const struct timespec t[2] = {{1000 + i, 0}, {1000 + i, 0}};
      ::utimensat(AT_FDCWD, (root + "/profiles/0" + std::to_string(i) + "/e").c_str(), t, 0);
    }
  }
  std::uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  EXPECT_LE(total, 100000U);
  EXPECT_FALSE(fs::exists(root + "/profiles/00/e"));
  EXPECT_TRUE(fs::exists(root + "/profiles/04/e"));  // the newest stays
}

TEST(Files, SweepsTemporariesOfDeadProcessesOnly) {
  TempDir dir;
  // A child writes a temporary and dies without renaming it (as kill -9 leaves one).
  const pid_t child = ::fork();
  if (child == 0) {
    const int fd =
        ::open((dir.path() + "/state.json.tmp." + std::to_string(::getpid()) + "-0").c_str(), O_WRONLY | O_CREAT, 0644);
    ::_exit(fd >= 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const std::string dead = dir.path() + "/state.json.tmp." + std::to_string(child) + "-0";
  ASSERT_TRUE(fs::exists(dead));
  // One of a live process (this one's parent: init, or the test runner) stays; so do other names.
  const std::string live = dir.write("report.json.tmp." + std::to_string(::getppid()) + "-0", "x");
  const std::string other = dir.write("notes.tmp.txt", "x");
  write_file_atomic(dir.file("state.json"), "{}\n");
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_EQ(slurp(dir.file("state.json")), "{}\n");
}

TEST(Files, AWriteThatCannotHappenLeavesNothing) {
  TempDir dir;
  // A folder that cannot hold the file: the error names it and no temporary is left behind.
  const std::string missing = dir.file("no/such/folder/x");
  EXPECT_THROW(write_file_atomic(missing, "x"), Error);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(Files, ALockTakesTurnsAndATransientOneGoes) {
  TempDir dir;
  const std::string path = dir.file("lock");
  {
    const auto held = FileLock::acquire(path, {}, true);
    const pid_t child = ::fork();
    if (child == 0) {
      // Held by the parent: flock on a new descriptor does not get it.
      const int fd = ::open(path.c_str(), O_RDWR);
      ::_exit(fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_FALSE(fs::exists(path));  // transient: removed on release
  bool waited = false;
  const auto again = FileLock::acquire(path, [&] { waited = true; });
  EXPECT_FALSE(waited);
  EXPECT_TRUE(fs::exists(path));
}

TEST(ProfileCacheTrust, ADamagedEntryIsAMissAndIsRewritten) {
  TempDir dir;
  const auto b = build_members(dir);
  const auto w = make_wheel(dir, k_name, layout(b));
  const ProfileCache cache(dir.file("cache"));
  InspectOptions options;
  const auto cold = inspect_cached(w, options, &cache);
  ASSERT_FALSE(cold.from_cache);
  ASSERT_TRUE(inspect_cached(w, options, &cache).from_cache);
  std::string bin;
  for (const auto& e : fs::recursive_directory_iterator(dir.file("cache/profiles"))) {
    if (e.path().extension() == ".bin") bin = e.path().string();
  }
  ASSERT_FALSE(bin.empty());
  const std::string good = slurp(bin);
  auto damaged = good;
  damaged[damaged.size() / 2] = static_cast<char>(damaged[damaged.size() / 2] ^ 0x20);
  put(bin, damaged);
  EXPECT_FALSE(cache.load(cold.profile.sha256, "fast"));
  const auto again = inspect_cached(w, options, &cache);
  EXPECT_FALSE(again.from_cache);
  EXPECT_EQ(again.profile.sha256, cold.profile.sha256);
  EXPECT_EQ(slurp(bin), good);  // rewritten
  const auto json = cache.load_json(cold.profile.sha256, "fast");
  ASSERT_TRUE(json);
  EXPECT_TRUE(json->clean);
  EXPECT_EQ(json->json, profile_to_json(cold.profile));
}

// A cache that cannot be written costs speed, never the answer: the profile comes back as read, and
// cache_error says why it was not kept. (Run as root, a folder's mode stops nothing: here each entry's name
// is taken by a folder that is not empty, so that the write's rename fails.)
TEST(ProfileCacheTrust, ACacheThatCannotBeWrittenStillAnswers) {
  TempDir dir;
  const auto b = build_members(dir);
  const auto w = make_wheel(dir, k_name, layout(b));
  const ProfileCache cache(dir.file("cache"));
  InspectOptions options;
  const auto first = inspect_cached(w, options, &cache);
  ASSERT_FALSE(first.from_cache);
  EXPECT_TRUE(first.cache_error.empty());
  std::vector<fs::path> entries;
  for (const auto& e : fs::recursive_directory_iterator(dir.file("cache/profiles"))) {
    if (e.is_regular_file()) entries.push_back(e.path());
  }
  ASSERT_FALSE(entries.empty());
  for (const auto& e : entries) {
    fs::remove(e);
    fs::create_directories(e / "taken");
  }
  const auto r = inspect_cached(w, options, &cache);
  EXPECT_FALSE(r.from_cache);
  EXPECT_NE(r.cache_error.find("cannot write"), std::string::npos) << r.cache_error;
  EXPECT_EQ(profile_to_json(r.profile), profile_to_json(first.profile));
}

}  // namespace unity_test_cache_folder
