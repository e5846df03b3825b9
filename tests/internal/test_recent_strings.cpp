// The per-thread cache of recent names and labels (RecentStrings in
// recorder/thread_state.hpp): what it finds is always the id stored for
// that string, a loop of no more strings than it holds finds every one
// after its first round, and more strings than it holds only cost misses.

#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

#include "recorder/thread_state.hpp"

namespace {

using cunumpy::Impl::RecentStrings;

std::vector<std::string> names(int count, const std::string& stem) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i)
    out.push_back(stem + std::to_string(i));
  return out;
}

/// Looks `text` up as the recorder does (const char* for labels, views for
/// names), stores it with `id` when missing; whether it was found.
template <unsigned Size>
bool use(RecentStrings<Size>& cache, const std::string& text, std::uint32_t id,
         bool as_label) {
  std::uint32_t found = 0;
  const bool hit = as_label ? cache.find(text.c_str(), found)
                            : cache.find(std::string_view(text), found);
  if (hit)
    EXPECT_EQ(found, id) << text;
  else
    cache.store(text, id);
  return hit;
}

template <unsigned Size> void loops_find_everything_once_warm() {
  for (const bool as_label : {false, true}) {
    for (int count : {1, 2, 3, int(Size) - 1, int(Size)}) {
      if (count < 1)
        continue;
      RecentStrings<Size> cache;
      const auto strings = names(count, "step_" + std::to_string(count) + "_");
      // Strings of an earlier loop are there first.
      for (std::uint32_t i = 0; i < Size; ++i)
        use(cache, "earlier_" + std::to_string(i), 1000 + i, as_label);
      int misses_after_warm_up = 0;
      for (int round = 0; round < 10; ++round)
        for (int i = 0; i < count; ++i)
          if (!use(cache, strings[i], std::uint32_t(i + 1), as_label) &&
              round > 0)
            ++misses_after_warm_up;
      EXPECT_EQ(misses_after_warm_up, 0)
          << count << " strings in a cache of " << Size;
    }
  }
}

TEST(RecentStrings, ALoopOfNoMoreStringsThanItHoldsFindsAllAfterOneRound) {
  loops_find_everything_once_warm<4>();
  loops_find_everything_once_warm<32>();
}

TEST(RecentStrings, AStringFoundAgainAndAgainStaysWhileOthersComeAndGo) {
  RecentStrings<4> cache;
  use(cache, "state", 1, true);
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(use(cache, "state", 1, true)) << i;
    use(cache, "other_" + std::to_string(i), std::uint32_t(10 + i), true);
  }
}

template <unsigned Size> void random_uses_find_only_their_own_ids() {
  // More strings than the cache holds, in random order, and in loops of
  // other lengths: a hit is always the string's own id.
  const auto strings = names(3 * int(Size), "name_");
  RecentStrings<Size> cache;
  std::mt19937 random(42);
  std::uniform_int_distribution<int> pick(0, int(strings.size()) - 1);
  int hits = 0;
  for (int i = 0; i < 20000; ++i) {
    const int k = i % 3 == 0 ? pick(random) : (i / 3) % int(Size + 3);
    hits += use(cache, strings[k], std::uint32_t(k + 1), i % 2 == 0);
  }
  EXPECT_GT(hits, 0);
}

TEST(RecentStrings, RandomUsesOfMoreStringsThanItHoldsFindOnlyTheirOwnIds) {
  random_uses_find_only_their_own_ids<4>();
  random_uses_find_only_their_own_ids<32>();
}

TEST(RecentStrings, TheEmptyStringIsKeptLikeAnyOther) {
  RecentStrings<4> cache;
  use(cache, "", 0, true);
  EXPECT_TRUE(use(cache, "", 0, true));
  EXPECT_TRUE(use(cache, "", 0, false));
  std::uint32_t id = 7;
  EXPECT_FALSE(cache.find("x", id));
  EXPECT_EQ(id, 7u);
}

} // namespace
