// The small helpers every stage shares (include/wheelcheck/util.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <vector>

#include "wheelcheck/util.hpp"

namespace wheelcheck {
namespace {

TEST(Util, TrimAndJoin) {
  EXPECT_EQ(trim("  a b \t\r\n"), "a b");
  EXPECT_EQ(trim(" \t "), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(join({}, ", "), "");
  EXPECT_TRUE(starts_with_ci("Content-Type: x", "content-type"));
  EXPECT_FALSE(starts_with_ci("Cont", "content"));
}

TEST(Util, SplitAndPaths) {
  EXPECT_EQ(split("a::b", ":", true), (std::vector<std::string>{"a", "", "b"}));  // an empty RUNPATH entry
  EXPECT_EQ(split("a::b;c", ":;", false), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(split("", ":", true), (std::vector<std::string>{""}));
  EXPECT_TRUE(split("", ":", false).empty());
  EXPECT_EQ(base_name("pkg/lib/libfoo.so"), "libfoo.so");
  EXPECT_EQ(base_name("libfoo.so"), "libfoo.so");
  EXPECT_EQ(dir_name("pkg/lib/libfoo.so"), "pkg/lib");
  EXPECT_EQ(dir_name("/libfoo.so"), "/");
  EXPECT_EQ(dir_name("libfoo.so"), ".");
  EXPECT_EQ(join_path("/", "usr"), "/usr");
  EXPECT_EQ(join_path("/usr", "lib"), "/usr/lib");
}

TEST(Util, CompareDotted) {
  EXPECT_EQ(compare_dotted("2.38", "2.4"), 1);
  EXPECT_EQ(compare_dotted("2.4", "2.38"), -1);
  EXPECT_EQ(compare_dotted("13", "13.0"), 0);
  EXPECT_EQ(compare_dotted("580.65.06", "580.65.6"), 0);  // numbers, not text
  EXPECT_EQ(compare_dotted("535.54.03", "580.65.06"), -1);
  EXPECT_EQ(compare_dotted("18446744073709551616", "2"), 1);  // longer than 64 bits
  EXPECT_EQ(compare_dotted("2.x", "2.1"), std::nullopt);
  EXPECT_EQ(compare_dotted("2..1", "2.1"), std::nullopt);
  EXPECT_EQ(compare_dotted("", "2.1"), std::nullopt);
  EXPECT_TRUE(dotted_less("2.17", "2.28"));
  EXPECT_TRUE(dotted_less("unknown", "2.17"));  // what does not parse sorts first
  EXPECT_FALSE(dotted_less("2.17", "unknown"));
}

TEST(Util, ParallelForVisitsEveryIndexOnce) {
  std::vector<std::atomic<int>> seen(1000);
  std::set<unsigned> workers;
  std::mutex m;
  parallel_for(seen.size(), 4, [&](std::size_t i, unsigned w) {
    seen[i].fetch_add(1);
    std::lock_guard<std::mutex> lock(m);
    workers.insert(w);
  });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  for (unsigned w : workers) EXPECT_LT(w, 4U);
}

TEST(Util, ParallelForRethrowsTheFirstError) {
  // On one thread the hand-out stops at the error: indices 0 to 3 ran, nothing after.
  std::size_t ran = 0;
  EXPECT_THROW(parallel_for(10000, 1,
                            [&](std::size_t i, unsigned) {
                              ++ran;
                              if (i == 3) throw std::runtime_error("boom");
                            }),
               std::runtime_error);
  EXPECT_EQ(ran, 4U);
  // On several, whichever worker meets it, the error reaches the caller once every thread is done.
  EXPECT_THROW(parallel_for(10000, 4,
                            [&](std::size_t i, unsigned) {
                              if (i == 9999) throw std::runtime_error("boom");
                            }),
               std::runtime_error);
  parallel_for(0, 4, [](std::size_t, unsigned) { FAIL() << "no index to visit"; });
}

TEST(Util, PaintIsPlainWhenOff) {
  EXPECT_EQ(Paint{false}.red("x"), "x");
  EXPECT_EQ(Paint{true}.red("x"), "\033[31;1mx\033[0m");
  EXPECT_EQ(Paint{true}.bold("x"), "\033[1mx\033[0m");
}

}  // namespace
}  // namespace wheelcheck
