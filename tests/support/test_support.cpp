#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "common/ScopedEnv.h"
#include "support/BinaryCache.h"
#include "support/DataType.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/Hash.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "support/ThreadPool.h"

using namespace tessel;

TEST(DataType, PrintsAndParses) {
  for (auto t : {DataType::float32(), DataType::float16(), DataType::int8(), DataType::uint8(), DataType::int32(),
                 DataType::int64(), DataType::boolean(), DataType::float32(16)}) {
    EXPECT_EQ(DataType::parse(t.str()), t) << t.str();
  }
  EXPECT_EQ(DataType::float32(16).str(), "float32x16");
  EXPECT_THROW(DataType::parse("float8"), Error);
  EXPECT_THROW(DataType::parse("complex64"), Error);
}

TEST(Subprocess, CapturesOutputAndExitCode) {
  auto r = runSubprocess({"sh", "-c", "echo hello; echo oops >&2; exit 3"});
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_NE(r.output.find("hello"), std::string::npos);
  EXPECT_NE(r.output.find("oops"), std::string::npos);
  EXPECT_FALSE(r.ok());
}

TEST(Subprocess, KillsOnTimeoutIncludingChildren) {
  auto start = std::chrono::steady_clock::now();
  SubprocessOptions options;
  options.timeout = std::chrono::milliseconds(300);
  auto r = runSubprocess({"sh", "-c", "sleep 30 & sleep 30"}, options);
  EXPECT_TRUE(r.timedOut);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(r.describe().find("timed out"), std::string::npos);
}

TEST(Subprocess, ReportsSignals) {
  auto r = runSubprocess({"sh", "-c", "kill -SEGV $$"});
  EXPECT_EQ(r.signal, 11);
}

TEST(Subprocess, MissingProgramIsAnError) {
  EXPECT_THROW(runSubprocess({"/nonexistent/program"}), Error);
}

TEST(Hash, StableAndSensitive) {
  EXPECT_EQ(StableHasher().add("abc").add(int64_t(3)).hex(), StableHasher().add("abc").add(int64_t(3)).hex());
  EXPECT_NE(StableHasher().add("ab").add("c").hex(), StableHasher().add("a").add("bc").hex());
  EXPECT_EQ(StableHasher().add("x").hex().size(), 32u);
}

TEST(TempDir, RemovedUnlessKept) {
  std::string path;
  {
    TempDir dir;
    path = dir.path();
    writeFile(path + "/f.txt", "data");
    EXPECT_EQ(readFile(path + "/f.txt"), "data");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_THROW(readFile(path + "/f.txt"), Error);
}

TEST(ThreadPool, RunsEveryIndexOnceAndRethrows) {
  ThreadPool pool(2);
  std::vector<int> hits(100, 0);
  pool.parallelFor(100, [&](int i) { hits[i]++; });
  for (int h : hits) EXPECT_EQ(h, 1);
  EXPECT_THROW(pool.parallelFor(10, [](int i) { if (i == 5) fail("boom"); }), Error);
}

// The cache directory's rules: the user's own directory, "off", else the XDG or home location
// unless the caller skips it (a driver that caches its own builds).
TEST(BinaryCache, DirectoryRules) {
  using testsupport::ScopedEnv;
  ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
  {
    ScopedEnv own("TESSEL_TEST_CACHE", std::nullopt);
    EXPECT_EQ(binaryCacheDirectory("TESSEL_TEST_CACHE", "kind"), "/xdg/tessel/kind");
    EXPECT_EQ(binaryCacheDirectory("TESSEL_TEST_CACHE", "kind", DefaultCacheLocation::kSkip), "");
  }
  {
    ScopedEnv own("TESSEL_TEST_CACHE", "/mine");
    EXPECT_EQ(binaryCacheDirectory("TESSEL_TEST_CACHE", "kind"), "/mine");
    EXPECT_EQ(binaryCacheDirectory("TESSEL_TEST_CACHE", "kind", DefaultCacheLocation::kSkip), "/mine");
  }
  ScopedEnv off("TESSEL_TEST_CACHE", "off");
  EXPECT_EQ(binaryCacheDirectory("TESSEL_TEST_CACHE", "kind"), "");
}
