// HandleSet, the core's registry of handles (the streams it owns): every
// sequence of adds and removals leaves it holding exactly what a std::set
// given the same sequence holds, across its growth and with handles that
// share home slots.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "handle_set.hpp"

namespace {

using Handle = int*;
using cubind::detail::HandleSet;

Handle handle_at(std::uintptr_t address) { return reinterpret_cast<Handle>(address); }

void expect_same(HandleSet<Handle>& set, const std::set<Handle>& expected, const std::vector<Handle>& universe) {
  ASSERT_EQ(set.size(), expected.size());
  for (Handle h : universe) EXPECT_EQ(set.contains(h), expected.count(h) != 0) << "handle " << h;
}

TEST(HandleSetTest, StartsEmptyAndIgnoresRemovingWhatIsNotThere) {
  HandleSet<Handle> set;
  EXPECT_EQ(set.size(), 0u);
  EXPECT_FALSE(set.contains(handle_at(0x1000)));
  set.erase(handle_at(0x1000));
  set.insert(handle_at(0x1000));
  set.insert(handle_at(0x1000));
  EXPECT_EQ(set.size(), 1u);
  set.erase(handle_at(0x2000));
  EXPECT_TRUE(set.contains(handle_at(0x1000)));
  set.erase(handle_at(0x1000));
  EXPECT_FALSE(set.contains(handle_at(0x1000)));
  EXPECT_EQ(set.size(), 0u);
}

// Addresses as a driver hands them out (a few strides apart) and random ones,
// added and removed at random: thousands of removals that shift entries back,
// in tables of 64 to 4096 slots.
TEST(HandleSetTest, MatchesAStdSetThroughRandomAddsAndRemovals) {
  std::mt19937_64 random(20261130);
  std::vector<Handle> universe;
  for (std::uintptr_t i = 1; i <= 1500; ++i) universe.push_back(handle_at(0x7f0000000000 + 0x40 * i));
  for (int i = 0; i < 500; ++i) universe.push_back(handle_at((random() | 1) & 0x7fffffffffff));
  HandleSet<Handle> set;
  std::set<Handle> expected;
  for (int step = 0; step < 40000; ++step) {
    const Handle h = universe[random() % universe.size()];
    // Mostly adds at first, mostly removals later: the set grows, then empties.
    const bool add = random() % 100 < (step < 20000 ? 70u : 30u);
    if (add) {
      set.insert(h);
      expected.insert(h);
    } else {
      set.erase(h);
      expected.erase(h);
    }
    if (step % 4000 == 3999) expect_same(set, expected, universe);
  }
  expect_same(set, expected, universe);
  for (Handle h : std::vector<Handle>(expected.begin(), expected.end())) set.erase(h);
  EXPECT_EQ(set.size(), 0u);
  for (Handle h : universe) EXPECT_FALSE(set.contains(h));
}

// Handles whose home slots collide in a 64-slot table: removing any one of a
// cluster keeps every other one findable.
TEST(HandleSetTest, RemovingFromAClusterKeepsTheRestFindable) {
  std::vector<Handle> cluster;
  for (std::uintptr_t address = 0x10; cluster.size() < 20; address += 0x10) {
    const std::uint64_t key = address;
    if ((((key * 0x9E3779B97F4A7C15ull) >> 32) & 63) < 4) cluster.push_back(handle_at(address));
  }
  for (std::size_t removed = 0; removed < cluster.size(); ++removed) {
    HandleSet<Handle> set;
    for (Handle h : cluster) set.insert(h);
    set.erase(cluster[removed]);
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      EXPECT_EQ(set.contains(cluster[i]), i != removed) << "removed " << removed << ", looked for " << i;
    }
  }
}

TEST(HandleSetTest, ThreadsAddingAndRemovingTheirOwnHandlesLoseNone) {
  HandleSet<Handle> set;
  std::vector<std::thread> threads;
  for (std::uintptr_t t = 0; t < 4; ++t) {
    threads.emplace_back([&set, t] {
      for (std::uintptr_t i = 0; i < 2000; ++i) set.insert(handle_at(0x100000 * (t + 1) + 0x10 * i));
      for (std::uintptr_t i = 0; i < 2000; i += 2) set.erase(handle_at(0x100000 * (t + 1) + 0x10 * i));
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(set.size(), 4u * 1000u);
  for (std::uintptr_t t = 0; t < 4; ++t) {
    for (std::uintptr_t i = 0; i < 2000; ++i) {
      EXPECT_EQ(set.contains(handle_at(0x100000 * (t + 1) + 0x10 * i)), i % 2 == 1);
    }
  }
}

}  // namespace
