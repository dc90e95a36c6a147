// GPU lowering: bound loops make the launch, shared memory gets barriers, and the verification
// rejects kernels beyond a device's limits with the limit and the value named.
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "ir/Mutator.h"
#include "ops/Examples.h"
#include "passes/Lower.h"
#include "passes/Passes.h"
#include "schedule/Steps.h"

using namespace tessel;
using namespace tessel::schedule;
using tessel::testsupport::errorOf;
using tessel::testsupport::expectContains;

namespace {

/// matmul with i split into blockIdx.y x threadIdx.y and j into blockIdx.x x threadIdx.x.
std::vector<StepPtr> boundMatmul(int64_t rowThreads, int64_t columnThreads) {
  return {
      std::make_shared<SplitStep>("C", "i", std::vector<int64_t>{rowThreads}),
      std::make_shared<SplitStep>("C", "j", std::vector<int64_t>{columnThreads}),
      std::make_shared<ReorderStep>("C", std::vector<std::string>{"i.0", "j.0", "i.1", "j.1", "k"}),
      std::make_shared<AnnotateStep>("C", "i.0", Annotation::BlockY),
      std::make_shared<AnnotateStep>("C", "j.0", Annotation::BlockX),
      std::make_shared<AnnotateStep>("C", "i.1", Annotation::ThreadY),
      std::make_shared<AnnotateStep>("C", "j.1", Annotation::ThreadX),
  };
}

/// boundMatmul(8, 16) with the block's rows of A fetched into shared memory by 128 threads.
std::vector<StepPtr> matmulWithSharedA() {
  auto steps = boundMatmul(8, 16);
  steps.push_back(std::make_shared<CacheReadStep>("A", "shared", std::vector<std::string>{"C"}));
  steps.push_back(std::make_shared<ComputeAtStep>("A.shared", "C", "j.0"));
  steps.push_back(std::make_shared<FuseStep>("A.shared", std::vector<std::string>{"ax0", "ax1"}));
  steps.push_back(std::make_shared<SplitStep>("A.shared", "ax0@ax1", std::vector<int64_t>{128}));
  steps.push_back(std::make_shared<AnnotateStep>("A.shared", "ax0@ax1.1", Annotation::ThreadX));
  return steps;
}

int countBarriers(const ir::Stmt& s) {
  struct Counter : ir::IRVisitor {
    int count = 0;
    void visit(const ir::Stmt& s) override {
      if (passes::isGpuBarrier(s)) ++count;
      ir::IRVisitor::visit(s);
    }
  } counter;
  counter.visit(s);
  return counter.count;
}

const auto kSm90 = passes::GpuLimits::cudaSm90();

}  // namespace

TEST(GpuLowering, BoundLoopsMakeTheLaunchGrid) {
  auto state = replay(ops::matmul(64, 96, 32), boundMatmul(8, 32));
  auto k = passes::lowerForGpu(state, "matmul", kSm90);
  EXPECT_EQ(k.launch.grid, (std::array<int64_t, 3>{3, 8, 1}));
  EXPECT_EQ(k.launch.block, (std::array<int64_t, 3>{32, 8, 1}));
  EXPECT_EQ(k.launch.sharedBytes, 0);
  EXPECT_EQ(countBarriers(k.function.body), 0);
}

TEST(GpuLowering, LaunchRoundTripsThroughJson) {
  passes::GpuLaunch launch;
  launch.grid = {7, 2, 1};
  launch.block = {64, 4, 2};
  launch.sharedBytes = 4096;
  EXPECT_EQ(passes::GpuLaunch::fromJson(launch.toJson()), launch);
  expectContains(errorOf([] { passes::GpuLaunch::fromJson({{"grid", {1, 0, 1}}, {"block", {1, 1, 1}}}); }),
                 "'grid'[1] must be a positive integer");
}

TEST(GpuLowering, TooManyThreadsPerBlockIsRejectedWithTheLimit) {
  auto state = replay(ops::matmul(64, 128, 8), boundMatmul(16, 128));
  EXPECT_EQ(errorOf([&] { passes::lowerForGpu(state, "matmul", kSm90); }),
            "GPU kernel 'matmul': 2048 threads per block (128x16x1) exceed the limit of 1024 (cuda sm_90)");
  // The Mali profile allows 256.
  auto small = replay(ops::matmul(64, 128, 8), boundMatmul(4, 128));
  expectContains(errorOf([&] { passes::lowerForGpu(small, "matmul", passes::GpuLimits::forTarget(target::Target::parse("opencl -device=mali"))); }),
                 "512 threads per block (128x4x1) exceed the limit of 256 (opencl mali)");
  EXPECT_NO_THROW(passes::lowerForGpu(small, "matmul", kSm90));
}

TEST(GpuLowering, TooLargeAVirtualThreadIsRejected) {
  auto state = replay(ops::matmul(64, 64, 8), {
                                                  std::make_shared<SplitStep>("C", "j", std::vector<int64_t>{4}),
                                                  std::make_shared<AnnotateStep>("C", "i", Annotation::BlockX),
                                                  std::make_shared<AnnotateStep>("C", "j.0", Annotation::VThread),
                                                  std::make_shared<AnnotateStep>("C", "j.1", Annotation::ThreadX),
                                              });
  EXPECT_EQ(errorOf([&] { passes::lowerForGpu(state, "mm", kSm90); }),
            "GPU kernel 'mm': a virtual thread extent of 16 exceeds the limit of 8 (cuda sm_90)");
}

TEST(GpuLowering, UnboundStoresAreRejected) {
  auto state = replay(ops::matmul(16, 16, 8), {});
  EXPECT_EQ(errorOf([&] { passes::lowerForGpu(state, "mm", kSm90); }),
            "GPU kernel 'mm': the store to 'C' is outside every blockIdx/threadIdx loop, so every thread would run it; "
            "bind the loops of its stage");
}

TEST(GpuLowering, ParallelLoopsAreRejected) {
  auto state = replay(ops::matmul(16, 16, 8), {std::make_shared<AnnotateStep>("C", "i", Annotation::Parallel)});
  expectContains(errorOf([&] { passes::lowerForGpu(state, "mm", kSm90); }),
                 "loop 'i' is annotated parallel; bind it to blockIdx or threadIdx instead");
}

TEST(GpuLowering, SharedMemoryGetsABarrierBeforeItIsRead) {
  auto steps = matmulWithSharedA();
  auto k = passes::lowerForGpu(replay(ops::matmul(64, 64, 32), steps), "mm", kSm90);
  // 8 rows of A by 32 columns, float32.
  EXPECT_EQ(k.launch.sharedBytes, 8 * 32 * 4);
  // The fetch binds 128 threads along x: the launch takes the largest extent.
  EXPECT_EQ(k.launch.block, (std::array<int64_t, 3>{128, 8, 1}));
  EXPECT_EQ(countBarriers(k.function.body), 1);
  // Without the pass there is no barrier: the count above is the pass's doing.
  EXPECT_EQ(countBarriers(schedule::buildLoopNest(replay(ops::matmul(64, 64, 32), steps), "mm").body), 0);
}

TEST(GpuLowering, BarrierPassHandlesReadsAfterWritesAndLoopCarriedReuse) {
  using namespace ir;
  auto shared = makeBuffer("tile", DataType::float32(), {4}, BufferNode::Scope::Shared);
  auto out = makeBuffer("out", DataType::float32(), {4}, BufferNode::Scope::Global);
  Var t("t"), r("r");
  Stmt write = makeFor(t, Expr(0), Expr(4), ForKind::ThreadIdxX, makeStore(shared, t, Expr(1.0)));
  Stmt read = makeFor(t, Expr(0), Expr(4), ForKind::ThreadIdxX, makeStore(out, t, load(shared, Expr(3) - t)));
  // Written then read in a loop: a barrier between, and one at the end of each iteration.
  Stmt loop = makeFor(r, Expr(0), Expr(3), ForKind::Serial, makeBlock({write, read}));
  EXPECT_EQ(countBarriers(passes::insertSharedMemoryBarriers(loop)), 2);
  // Two writes in a row need no barrier.
  EXPECT_EQ(countBarriers(passes::insertSharedMemoryBarriers(makeBlock({write, write}))), 0);
}

TEST(GpuLowering, SharedMemoryBeyondTheLimitIsRejected) {
  auto steps = matmulWithSharedA();
  // 8 rows of 2048 floats: 64 KiB, over the 48 KiB of static shared memory.
  auto state = replay(ops::matmul(64, 64, 2048), steps);
  EXPECT_EQ(errorOf([&] { passes::lowerForGpu(state, "mm", kSm90); }),
            "GPU kernel 'mm': 65536 bytes of shared memory per block exceed the limit of 49152 (cuda sm_90)");
}

TEST(GpuLowering, UnknownTargetsHaveNoLimits) {
  EXPECT_EQ(errorOf([] { passes::GpuLimits::forTarget(target::Target::parse("cpu")); }),
            "target 'cpu' is not a GPU target (expected 'cuda' or 'opencl')");
  EXPECT_EQ(errorOf([] { passes::GpuLimits::forTarget(target::Target::parse("cuda -arch=sm_80")); }),
            "target 'cuda -arch=sm_80': -arch=sm_80 is not supported yet (only sm_90)");
}
