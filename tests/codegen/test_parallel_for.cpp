// tessel_parallel_for, the loop every generated parallel loop calls: every iteration runs
// exactly once whatever the thread count, each thread starts on the block schedule(static)
// would give it, and a slow thread's iterations are taken over by the others.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "support/TempDir.h"

namespace tessel {
namespace {

/// `run(n, threads, owner, count, slowThread, sleepMicros)`: owner[i] is the thread that ran
/// iteration i, count[i] how often it ran; thread `slowThread` sleeps in each of its iterations.
class ParallelForLibrary {
 public:
  using Run = void (*)(int64_t, int, int32_t*, int32_t*, int, int);

  ParallelForLibrary() {
    std::string source = std::string("#include <cstdint>\n#include <unistd.h>\n") + codegen::parallelForSource() + R"(
extern "C" void omp_set_num_threads(int);
extern "C" void run(int64_t n, int threads, int32_t* owner, int32_t* count, int slowThread, int sleepMicros) {
  omp_set_num_threads(threads);
  tessel_parallel_for(n, [&](int64_t i) {
    const int t = omp_get_thread_num();
    __atomic_fetch_add(&count[i], 1, __ATOMIC_RELAXED);
    owner[i] = t;
    if (t == slowThread) usleep(sleepMicros);
  });
}
)";
    codegen::compileSharedLibrary(source, dir_.path() + "/parallel_for.so");
    handle_ = dlopen((dir_.path() + "/parallel_for.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error(dlerror());
    run_ = reinterpret_cast<Run>(dlsym(handle_, "run"));
  }
  ~ParallelForLibrary() {
    if (handle_) dlclose(handle_);
  }

  struct Result {
    std::vector<int32_t> owner, count;
  };
  Result operator()(int64_t n, int threads, int slowThread = -1, int sleepMicros = 0) const {
    Result r{std::vector<int32_t>(size_t(n) + 1, -1), std::vector<int32_t>(size_t(n) + 1, 0)};
    run_(n, threads, r.owner.data(), r.count.data(), slowThread, sleepMicros);
    return r;
  }

 private:
  TempDir dir_{"tessel-test"};
  void* handle_ = nullptr;
  Run run_ = nullptr;
};

const ParallelForLibrary& library() {
  static ParallelForLibrary l;
  return l;
}

TEST(ParallelFor, EveryIterationRunsExactlyOnce) {
  // 100: a team larger than any fixed table of blocks (the blocks live on the stack, one per thread).
  for (int threads : {1, 2, 3, 5, 100})
    for (int64_t n : {0, 1, 2, 3, 7, 64, 1000, 4099}) {
      auto r = library()(n, threads);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(r.count[size_t(i)], 1) << "iteration " << i << " of " << n << " on " << threads << " threads";
        ASSERT_GE(r.owner[size_t(i)], 0);
        ASSERT_LT(r.owner[size_t(i)], threads);
      }
      EXPECT_EQ(r.count[size_t(n)], 0) << "past the end, " << n << " iterations";
    }
}

TEST(ParallelFor, TheOtherThreadsTakeOverASlowThreadsIterations) {
  // Thread 1 needs 5 ms per iteration, thread 0 nothing: under schedule(static) thread 1 would
  // run its 32 iterations (160 ms) while thread 0 waits. Here thread 0 runs its own block, then
  // takes thread 1's from the back (in grains of 2, a sixteenth of a block); thread 1 keeps only
  // the first few of its block (fewer than 16 unless thread 0 is kept off its core for 80 ms).
  auto r = library()(64, 2, /*slowThread=*/1, /*sleepMicros=*/5000);
  int slow = 0;
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_EQ(r.count[size_t(i)], 1);
    slow += r.owner[size_t(i)] == 1;
  }
  EXPECT_EQ(r.owner[0], 0) << "thread 0 starts on its own block";
  EXPECT_EQ(r.owner[63], 0) << "the back of thread 1's block was taken over";
  EXPECT_LT(slow, 16) << "the slow thread ran " << slow << " of its 32 iterations";
  // What it ran is the front of its own block: its share of the rows stays in its cache.
  for (int64_t i = 0; i < 32; ++i) EXPECT_EQ(r.owner[size_t(i)], 0) << "iteration " << i << " of thread 0's block";
}

}  // namespace
}  // namespace tessel
