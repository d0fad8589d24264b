#include "agent/context_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace det::agent {
namespace {

std::map<std::string, std::string> TrialEnv(const std::string& exp) {
  return {{"DET_TASK_TYPE", "TRIAL"}, {"DET_EXPERIMENT_ID", exp}};
}

TEST(ContextCacheTest, KeyOnlyForTrialsOfAKnownCluster) {
  EXPECT_EQ(ContextCache::KeyFor("c1", TrialEnv("7")), "c1/experiment/7");
  EXPECT_NE(ContextCache::KeyFor("c1", TrialEnv("7")), ContextCache::KeyFor("c2", TrialEnv("7")));
  EXPECT_FALSE(ContextCache::KeyFor("", TrialEnv("7")));
  EXPECT_FALSE(ContextCache::KeyFor("c1", TrialEnv("")));
  EXPECT_FALSE(ContextCache::KeyFor("c1", TrialEnv("7/../8")));
  EXPECT_FALSE(ContextCache::KeyFor("c1", {{"DET_TASK_TYPE", "COMMAND"}}));
  EXPECT_FALSE(ContextCache::KeyFor("c1", {{"DET_EXPERIMENT_ID", "7"}}));
}

TEST(ContextCacheTest, SecondGetIsAnsweredFromTheCache) {
  ContextCache cache(1 << 20);
  int fetches = 0;
  auto fetch = [&]() -> Result<std::string> {
    ++fetches;
    return std::string("tgz-bytes");
  };
  auto first = cache.GetOrFetch("k", fetch);
  auto second = cache.GetOrFetch("k", fetch);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(**second, "tgz-bytes");
  EXPECT_EQ(fetches, 1);
  EXPECT_EQ(cache.hits(), 1u);
}

TEST(ContextCacheTest, FailedFetchIsNotCached) {
  ContextCache cache(1 << 20);
  int fetches = 0;
  auto failing = [&]() -> Result<std::string> {
    ++fetches;
    return Unavailable("master away");
  };
  EXPECT_FALSE(cache.GetOrFetch("k", failing).ok());
  EXPECT_FALSE(cache.GetOrFetch("k", failing).ok());
  EXPECT_EQ(fetches, 2);
  EXPECT_EQ(cache.entries(), 0u);
}

TEST(ContextCacheTest, EvictsLeastRecentlyUsedBeyondTheByteLimit) {
  ContextCache cache(10);
  auto of = [](std::string s) { return [s]() -> Result<std::string> { return s; }; };
  ASSERT_TRUE(cache.GetOrFetch("a", of("aaaa")).ok());
  ASSERT_TRUE(cache.GetOrFetch("b", of("bbbb")).ok());
  ASSERT_TRUE(cache.GetOrFetch("a", of("xxxx")).ok());  // a is now the most recent
  ASSERT_TRUE(cache.GetOrFetch("c", of("cccc")).ok());  // evicts b
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_EQ(cache.bytes(), 8u);
  auto b = cache.GetOrFetch("b", of("new-b"));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(**b, "new-b");  // fetched again
  auto big = cache.GetOrFetch("big", of(std::string(11, 'z')));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ((*big)->size(), 11u);  // answered, but too large to keep
  EXPECT_LE(cache.bytes(), 10u);
}

TEST(ContextCacheTest, ConcurrentFirstRequestsShareOneFetch) {
  ContextCache cache(1 << 20);
  std::atomic<int> fetches{0};
  std::atomic<bool> release{false};
  auto slow = [&]() -> Result<std::string> {
    ++fetches;
    while (!release.load()) std::this_thread::yield();
    return std::string("ctx");
  };
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      auto r = cache.GetOrFetch("k", slow);
      if (r.ok() && **r == "ctx") ++ok;
    });
  }
  // Let every thread reach GetOrFetch before the one fetch completes.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (fetches.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  release.store(true);
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(fetches.load(), 1);
}

}  // namespace
}  // namespace det::agent
