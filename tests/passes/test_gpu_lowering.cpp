// GPU lowering: bound loops make the launch, shared memory gets barriers, and the verification
// rejects kernels beyond a device's limits with the limit and the value named.
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "ir/Mutator.h"
#include "ops/Examples.h"
#include "ops/GpuDenseTiles.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "passes/TensorizeMma.h"
#include "schedule/LoopNest.h"
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

/// sm_90's limits on a GPU without asynchronous copies: double buffers staged through registers.
passes::GpuLimits withoutAsyncCopies() {
  auto limits = passes::GpuLimits::cudaSm90();
  limits.asyncCopies = false;
  return limits;
}

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
  EXPECT_FALSE(launch.toJson().contains("dynamic_shared"));  // modules of declared shared memory read as before
  launch.sharedBytes = 100000;
  launch.dynamicShared = true;
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

TEST(GpuLowering, SharedMemoryBeyondWhatABlockMayDeclareIsTakenDynamicallyOrRejected) {
  auto steps = matmulWithSharedA();
  // 8 rows of 2048 floats: 64 KiB, over the 48 KiB a block may declare; sm_90 allows 227 KiB
  // dynamically.
  auto state = replay(ops::matmul(64, 64, 2048), steps);
  auto k = passes::lowerForGpu(state, "mm", kSm90);
  EXPECT_EQ(k.launch.sharedBytes, 65536);
  EXPECT_TRUE(k.launch.dynamicShared);
  auto declared = passes::lowerForGpu(replay(ops::matmul(64, 64, 1024), steps), "mm", kSm90);
  EXPECT_FALSE(declared.launch.dynamicShared);
  auto noDynamic = kSm90;
  noDynamic.maxDynamicSharedMemoryPerBlock = 0;
  EXPECT_EQ(errorOf([&] { passes::lowerForGpu(state, "mm", noDynamic); }),
            "GPU kernel 'mm': 65536 bytes of shared memory per block exceed the limit of 49152 (cuda sm_90)");
  // 8 rows of 8192 floats: 256 KiB, beyond the 227 KiB.
  EXPECT_EQ(errorOf([&] { passes::lowerForGpu(replay(ops::matmul(64, 64, 8192), steps), "mm", kSm90); }),
            "GPU kernel 'mm': 262144 bytes of shared memory per block exceed the limit of 232448 (dynamic shared memory included) "
            "(cuda sm_90)");
}

TEST(GpuLowering, UnknownTargetsHaveNoLimits) {
  EXPECT_EQ(errorOf([] { passes::GpuLimits::forTarget(target::Target::parse("cpu")); }),
            "target 'cpu' is not a GPU target (expected 'cuda' or 'opencl')");
  EXPECT_EQ(errorOf([] { passes::GpuLimits::forTarget(target::Target::parse("cuda -arch=sm_80")); }),
            "target 'cuda -arch=sm_80': -arch=sm_80 is not supported yet (only sm_90)");
}

namespace {

/// matmul 64 x 32 x 64 on tensor cores: 2 x 2 warps of 8 x 4 threads, each 2 x 2 outputs, chunks of 32.
ops::GpuTileSchedule tensorCoreMatmul(std::optional<ir::WarpMmaKind> kind = ir::WarpMmaKind::Tf32x3) {
  ops::GpuGemmTile tile;
  tile.x = {2, 16, 2};
  tile.y = {2, 8, 2};
  tile.k = 32;
  tile.tensorCores = kind;
  return ops::gpuGemmTiles(ops::matmul(64, 32, 64), tile);
}

std::vector<const ir::WarpMmaNode*> warpMmas(const ir::Stmt& s) {
  struct Finder : ir::IRVisitor {
    std::vector<const ir::WarpMmaNode*> found;
    void visit(const ir::Stmt& s) override {
      if (auto m = s.as<ir::WarpMmaNode>()) found.push_back(m);
      ir::IRVisitor::visit(s);
    }
  } finder;
  finder.visit(s);
  return finder.found;
}

}  // namespace

TEST(GpuLowering, ATensorizedProductBecomesOneWarpInstructionWithTheOperandsStrides) {
  auto schedule = tensorCoreMatmul();
  auto k = passes::lowerForGpu(schedule.state, "mm", kSm90);
  EXPECT_EQ(k.launch.block, (std::array<int64_t, 3>{32, 2, 2})) << "lanes along x, column warps along y, row warps along z";
  auto mmas = warpMmas(k.function.body);
  ASSERT_EQ(mmas.size(), 1u) << ir::toString(k.function.body);
  const ir::WarpMmaNode& m = *mmas[0];
  EXPECT_EQ(m.intrinsic, ir::WarpMmaKind::Tf32x3);
  EXPECT_EQ(std::make_tuple(m.rows, m.columns, m.reduction), std::make_tuple(2, 2, 32));
  EXPECT_EQ(std::make_pair(m.accumulatorRowStride, m.accumulatorColumnStride), std::make_pair(int64_t(2), int64_t(1)));
  // The block's 32 rows of A by a chunk of 32 steps, and the chunk's 32 rows of B by 16 columns,
  // their rows padded so that a fragment's loads hit 32 banks: lane 4g + t reads A's row 2g at
  // steps 4t to 4t + 3 as one float4 (a stride of 40: eight lanes' 80g + 4t fill the 32 banks
  // once), B at step 4t + c and column g (a stride of 18: 72t + g spreads over the banks).
  EXPECT_EQ(m.a.as<ir::LoadNode>()->buffer->scope, ir::BufferNode::Scope::Shared);
  EXPECT_EQ(std::make_pair(m.aRowStride, m.aReductionStride), std::make_pair(int64_t(40), int64_t(1)));
  EXPECT_EQ(std::make_pair(m.bReductionStride, m.bColumnStride), std::make_pair(int64_t(18), int64_t(1)));
  EXPECT_GE(countBarriers(k.function.body), 2) << "the copies wait for the instruction's reads of the chunk before";
}

TEST(GpuLowering, InterleavedLanesKeepOnlyTheirOwnAccumulatorsAndReadNeighbouringRows) {
  // 2 x 2 warps, each lane 4 rows (g, g + 8, g + 16, g + 24) by 2 columns (t, t + 4) of its warp's
  // 32 x 8: its accumulators are those 8 values, not the window of 25 x 5 around them.
  ops::GpuGemmTile tile;
  tile.x = {1, 16, 4};
  tile.y = {2, 8, 2};
  tile.k = 32;
  tile.tensorCores = ir::WarpMmaKind::Tf32;
  tile.interleaveLanes = true;
  auto k = passes::lowerForGpu(ops::gpuGemmTiles(ops::denseBias(64, 64, 32), tile).state, "mm", kSm90);
  auto mmas = warpMmas(k.function.body);
  ASSERT_EQ(mmas.size(), 1u) << ir::toString(k.function.body);
  const ir::WarpMmaNode& m = *mmas[0];
  EXPECT_TRUE(m.interleavedLanes);
  EXPECT_EQ(std::make_tuple(m.rows, m.columns, m.reduction), std::make_tuple(4, 2, 32));
  EXPECT_EQ(m.accumulator.as<ir::LoadNode>()->buffer->elementCount(), 8);
  EXPECT_EQ(std::make_pair(m.accumulatorRowStride, m.accumulatorColumnStride), std::make_pair(int64_t(2), int64_t(1)));
  // A's rows and B's columns (the rows of a dense layer's weight) padded to 36 elements, 4 past a multiple
  // of 32: ldmatrix's 8 rows of 16 bytes a phase cover the 32 banks once. A lane steps 8 rows, 4 columns.
  EXPECT_EQ(std::make_pair(m.aRowStride, m.aReductionStride), std::make_pair(int64_t(8 * 36), int64_t(1)));
  EXPECT_EQ(std::make_pair(m.bReductionStride, m.bColumnStride), std::make_pair(int64_t(1), int64_t(4 * 36)));
}

TEST(GpuLowering, TheTensorizeStepPrintsAndRoundTripsAsData) {
  auto schedule = tensorCoreMatmul(ir::WarpMmaKind::Tf32);
  const TensorizeStep* step = nullptr;
  for (const auto& s : schedule.steps)
    if (auto t = dynamic_cast<const TensorizeStep*>(s.get())) step = t;
  ASSERT_NE(step, nullptr);
  expectContains(step->print(), ".tensorize(k.1, \"mma_m16n8k8_tf32\")");
  EXPECT_EQ(stepFromJson(step->toJson())->print(), step->print());
  EXPECT_EQ(printSteps(stepsFromJson(stepsToJson(schedule.steps))), printSteps(schedule.steps));
}

TEST(GpuLowering, TensorizeStepsThatCannotHoldAreRefusedWhenApplied) {
  auto dag = ops::matmul(64, 32, 64);
  auto with = [&](std::vector<StepPtr> steps) { return errorOf([&] { replay(dag, steps); }); };
  auto splitK = std::make_shared<SplitStep>("C", "k", std::vector<int64_t>{8});
  expectContains(with({std::make_shared<TensorizeStep>("C", "i", "mma_m16n8k8_tf32")}), "tensorize C.i: 'i' is not a reduction loop");
  expectContains(with({std::make_shared<SplitStep>("C", "k", std::vector<int64_t>{12}),
                       std::make_shared<TensorizeStep>("C", "k.1", "mma_m16n8k8_tf32")}),
                 "tensorize C.k.1: 12 reduction steps are not whole steps of 8");
  expectContains(with({splitK, std::make_shared<TensorizeStep>("C", "k.1", "mma_fp64")}),
                 "unknown tensor intrinsic 'mma_fp64': the intrinsics are mma_m16n8k8_tf32 and mma_m16n8k8_3xtf32");
  expectContains(with({splitK, std::make_shared<ReorderStep>("C", std::vector<std::string>{"i", "k.0", "k.1", "j"}),
                       std::make_shared<AnnotateStep>("C", "j", Annotation::Vectorize),
                       std::make_shared<TensorizeStep>("C", "k.1", "mma_m16n8k8_tf32")}),
                 "tensorize C.k.1: the loop 'j' inside it is vectorize");
}

TEST(GpuLowering, ATensorizedNestThatIsNotTheWarpsProductIsRefusedNamingWhy) {
  // The fp32 units' tile of 16 x 32 threads: threadIdx.x is a row of 32 column threads, not a
  // warp of 8 x 4: lane 4 is a fifth column thread where the instruction wants the second row.
  ops::GpuGemmTile tile;
  tile.x = {2, 16, 2};
  tile.y = {1, 32, 2};
  tile.k = 32;
  auto dag = ops::matmul(64, 64, 64);
  auto steps = ops::gpuGemmTiles(dag, tile).steps;
  steps.push_back(std::make_shared<TensorizeStep>("C.local", "k.1", "mma_m16n8k8_3xtf32"));
  auto state = replay(dag, steps);
  EXPECT_EQ(errorOf([&] { passes::lowerForGpu(state, "mm", kSm90); }),
            "tensorize mma_m16n8k8_3xtf32 of 'C_local': lane 4 holds neither the contiguous sub-tile of 2 x 2 outputs a warp of 8 x 4 "
            "threads gives it nor the interleaved one (rows g + 8r, columns t + 4c)");
  // 16 column threads: not a warp.
  tile.x = {1, 32, 2};
  tile.y = {2, 16, 2};
  steps = ops::gpuGemmTiles(dag, tile).steps;
  steps.push_back(std::make_shared<TensorizeStep>("C.local", "k.1", "mma_m16n8k8_3xtf32"));
  state = replay(dag, steps);
  EXPECT_EQ(errorOf([&] { passes::lowerForGpu(state, "mm", kSm90); }),
            "tensorize mma_m16n8k8_3xtf32 of 'C_local': threadIdx.x runs 16 lanes, not a warp of 32");
  // A ragged last tile (48 rows in tiles of 32) computes past the product: the warps' product
  // stays one instruction, unguarded; the copies and the stores are guarded.
  ops::GpuGemmTile partial;
  partial.x = {2, 16, 2};
  partial.y = {1, 8, 2};
  partial.k = 32;
  partial.tensorCores = ir::WarpMmaKind::Tf32x3;
  auto ragged = passes::lowerForGpu(ops::gpuGemmTiles(ops::matmul(48, 16, 64), partial).state, "mm", kSm90);
  EXPECT_EQ(warpMmas(ragged.function.body).size(), 1u);
  expectContains(ir::toString(ragged.function.body), "< 48):");
}

TEST(GpuLowering, TheTensorizePassRefusesANestWhoseLoopsAreNotPlainLoops) {
  // A schedule cannot annotate them (the step refuses), but the pass checks its own input: the
  // sub-tile's loops vectorized under the pragma.
  struct VectorizeUnderThePragma : ir::IRMutator {
    bool under = false;
    ir::Stmt visitPragma(const ir::Stmt& s, const ir::PragmaNode* n) override {
      under = n->key == kTensorizePragma;
      return ir::IRMutator::visitPragma(s, n);
    }
    ir::Stmt visitFor(const ir::Stmt&, const ir::ForNode* n) override {
      ir::Stmt body = mutate(n->body);
      bool inner = under && n->var.name() == "j";
      return inner ? ir::makeFor(n->var, n->min, n->extent, ir::ForKind::Vectorized, body)
                   : ir::makeFor(n->var, n->min, n->extent, n->forKind, body);
    }
  };
  auto f = schedule::buildLoopNest(tensorCoreMatmul().state, "mm");
  ir::Stmt broken = VectorizeUnderThePragma().mutate(ir::simplify(f.body));
  EXPECT_EQ(errorOf([&] { passes::tensorizeWarpMma(broken); }), "tensorize mma_m16n8k8_3xtf32: the loop 'j' under it is vectorized");
}

namespace {

/// matmul 64 x 64 x 64 in 16 x 16 blocks of 64 threads and chunks of 16 (four chunks).
ops::GpuTileSchedule chunkedMatmul(bool doubleBuffer, int64_t stages = 2) {
  ops::GpuGemmTile tile;
  tile.x = {4, 8, 2};
  tile.y = {4, 8, 2};
  tile.k = 16;
  tile.doubleBuffer = doubleBuffer;
  tile.stages = stages;
  return ops::gpuGemmTiles(ops::matmul(64, 64, 64), tile);
}

}  // namespace

TEST(GpuLowering, ADoubleBufferedCopyLoadsTheNextChunkIntoRegistersBeforeTheArithmetic) {
  auto schedule = chunkedMatmul(true);
  std::vector<std::string> printed;
  for (const auto& step : schedule.steps)
    if (step->kind() == "double_buffer") printed.push_back(step->print());
  EXPECT_EQ(printed, (std::vector<std::string>{"A.shared.double_buffer()", "B.shared.double_buffer()"}));
  std::string body = ir::toString(passes::lowerForGpu(schedule.state, "mm", withoutAsyncCopies()).function.body);
  // Each thread's share of a chunk (256 elements over 64 threads) waits in 4 registers; the
  // first chunk is loaded before the loop, chunk k + 1 inside iteration k before the barrier
  // after which the block multiplies chunk k.
  expectContains(body, "allocate A.shared_next[float32 * 4]");
  size_t loop = body.find("for k.0 in range(4)"), ahead = body.find("if (k.0 < 3):"), barrier = body.find("gpu_barrier", loop);
  ASSERT_NE(loop, std::string::npos) << body;
  EXPECT_LT(body.find("A.shared_next[ramp(0, 1, 4)] = A["), loop) << body;
  EXPECT_LT(loop, ahead) << body;
  EXPECT_LT(ahead, barrier) << body;
  EXPECT_EQ(ir::toString(passes::lowerForGpu(chunkedMatmul(false).state, "mm", withoutAsyncCopies()).function.body).find("_next"),
            std::string::npos);
  // Registers hold one chunk ahead: deeper pipelines need asynchronous copies.
  EXPECT_EQ(errorOf([&] { passes::lowerForGpu(chunkedMatmul(true, 3).state, "mm", withoutAsyncCopies()); }),
            "double_buffer A.shared: 3 stages need asynchronous copies into shared memory (CUDA sm_80 and later); registers stage two");
}

TEST(GpuLowering, OnAGpuThatCopiesAsynchronouslyDoubleBuffersArePipelinedThroughStagesOfSharedMemory) {
  auto schedule = chunkedMatmul(true, 3);
  std::vector<std::string> printed;
  for (const auto& step : schedule.steps)
    if (step->kind() == "double_buffer") printed.push_back(step->print());
  EXPECT_EQ(printed, (std::vector<std::string>{"A.shared.double_buffer(stages=3)", "B.shared.double_buffer(stages=3)"}));
  ir::Stmt lowered = passes::lowerForGpu(schedule.state, "mm", kSm90).function.body;
  std::string body = ir::toString(lowered);
  // Three slots of each block's 16 x 16 chunk (256 elements), no registers; the first two chunks issued
  // before the loop, each its own group; in iteration k: wait for chunk k (at most one group in
  // flight), one barrier, issue chunk k + 2 into slot (k + 2) % 3, commit, multiply slot k % 3.
  expectContains(body, "allocate A_shared[float32 * 768]");
  expectContains(body, "allocate B_shared[float32 * 768]");
  EXPECT_EQ(body.find("_next"), std::string::npos) << body;
  size_t loop = body.find("for k.0 in range(4)");
  ASSERT_NE(loop, std::string::npos) << body;
  size_t firstCommit = body.find("pragma async_commit"), secondCommit = body.find("pragma async_commit", firstCommit + 1);
  EXPECT_LT(secondCommit, loop) << body;
  size_t wait = body.find("pragma async_wait = 1", loop), barrier = body.find("gpu_barrier", loop), ahead = body.find("if (k.0 < 2):", loop),
         copy = body.find("pragma async_copy", loop), commit = body.find("pragma async_commit", loop);
  EXPECT_LT(wait, barrier) << body;
  EXPECT_LT(barrier, ahead) << body;
  EXPECT_LT(ahead, copy) << body;
  EXPECT_LT(copy, commit) << body;
  // One barrier per iteration (the register-staged loop has two) and one after the loop.
  EXPECT_EQ(countBarriers(lowered), 2) << body;
  EXPECT_EQ(countBarriers(passes::lowerForGpu(chunkedMatmul(true).state, "mm", withoutAsyncCopies()).function.body), 2);
  // Where a second slot of each copy would not fit the shared memory (2 KiB of copies, 3 KiB
  // allowed), two stages are staged through registers as before; three are refused by the limit.
  auto small = kSm90;
  small.maxSharedMemoryPerBlock = 3 * 1024;
  small.maxDynamicSharedMemoryPerBlock = 0;
  std::string staged = ir::toString(passes::lowerForGpu(chunkedMatmul(true).state, "mm", small).function.body);
  expectContains(staged, "allocate A.shared_next[float32 * 4]");
  EXPECT_EQ(staged.find("async_copy"), std::string::npos) << staged;
  expectContains(errorOf([&] { passes::lowerForGpu(chunkedMatmul(true, 3).state, "mm", small); }), "6144 bytes of shared memory");
  // The step's stages round-trip as data; two (what records before them hold) are not written.
  EXPECT_EQ(stepFromJson(DoubleBufferStep("A.shared", 4).toJson())->print(), "A.shared.double_buffer(stages=4)");
  EXPECT_FALSE(DoubleBufferStep("A.shared").toJson().contains("stages"));
  EXPECT_EQ(errorOf([&] {
              replay(ops::matmul(64, 64, 64), {std::make_shared<CacheReadStep>("A", "shared", std::vector<std::string>{"C"}),
                                               std::make_shared<DoubleBufferStep>("A.shared", 9)});
            }),
            "step 2 (double_buffer): double_buffer on 'A.shared': 9 stages (2 to 8)");
  EXPECT_EQ(errorOf([&] { chunkedMatmul(true, 1); }), "GPU GEMM tiles: 1 stages of copies");
}

TEST(GpuLowering, DoubleBufferingNeedsASharedCopyWhoseSourceTheKernelDoesNotWrite) {
  auto dag = ops::matmul(64, 64, 64);
  EXPECT_EQ(errorOf([&] { replay(dag, {std::make_shared<DoubleBufferStep>("C")}); }),
            "step 1 (double_buffer): double_buffer on 'C': only a shared-memory copy (cache_read \"shared\") is double-buffered");
  EXPECT_EQ(stepFromJson(DoubleBufferStep("A.shared").toJson())->print(), "A.shared.double_buffer()");
  // A copy from a buffer the loop also writes: loading it an iteration early would read the old value.
  auto g = ir::makeBuffer("G", DataType::float32(), {4}, ir::BufferNode::Scope::Global);
  auto sh = ir::makeBuffer("S", DataType::float32(), {1}, ir::BufferNode::Scope::Shared);
  ir::Var k("k");
  ir::Stmt loop = ir::makeFor(k, ir::Expr(int64_t(0)), ir::Expr(int64_t(4)), ir::ForKind::Serial,
                              ir::makeBlock({ir::makePragma(kDoubleBufferPragma, "S", ir::makeStore(sh, ir::Expr(int64_t(0)), ir::load(g, k))),
                                             ir::makeStore(g, k, ir::load(sh, ir::Expr(int64_t(0))))}));
  EXPECT_EQ(errorOf([&] { passes::prefetchDoubleBuffers(loop); }),
            "double_buffer S: the copy reads 'G', which the kernel also writes (a value loaded an iteration early could be stale)");
}

TEST(GpuLowering, AsyncCopiesFillZerosWhereAGuardedCopyFailsAndRefuseLoopsWhoseCopiesDifferInStages) {
  // S[k % 2 slot] = select(k < 3, G[k], 0): a guarded element is an asynchronous copy whose
  // source size the guard picks (zeros where it fails); O[k] = S[0] reads it.
  auto g = ir::makeBuffer("G", DataType::float32(), {4}, ir::BufferNode::Scope::Global);
  auto o = ir::makeBuffer("O", DataType::float32(), {4}, ir::BufferNode::Scope::Global);
  auto s1 = ir::makeBuffer("S", DataType::float32(), {1}, ir::BufferNode::Scope::Shared);
  auto s2 = ir::makeBuffer("T", DataType::float32(), {1}, ir::BufferNode::Scope::Shared);
  ir::Var k("k");
  const ir::Expr zero(int64_t(0));
  auto copyInto = [&](const ir::Buffer& shared, int stages) {
    ir::Stmt store = ir::makeStore(shared, zero, ir::select(k < ir::Expr(int64_t(3)), ir::load(g, k), ir::Expr(0.0f)));
    if (stages != 2) store = ir::makePragma(kBufferStagesPragma, std::to_string(stages), store);
    return ir::makePragma(kDoubleBufferPragma, shared->name, store);
  };
  auto loopOf = [&](std::vector<ir::Stmt> copies, ir::Stmt use) {
    copies.push_back(use);
    ir::Stmt body = ir::makeBlock(copies);
    for (const auto& b : {s2, s1}) body = ir::makeAllocate(b, body);
    return ir::makeFor(k, zero, ir::Expr(int64_t(4)), ir::ForKind::Serial, body);
  };
  std::string lowered = ir::toString(passes::pipelineAsyncCopies(
      loopOf({copyInto(s1, 2)}, ir::makeStore(o, k, ir::load(s1, zero))), 48 * 1024));
  expectContains(lowered, "// pragma async_copy = S");
  expectContains(lowered, "allocate S[float32 * 2]");
  expectContains(lowered, "select(");
  EXPECT_EQ(lowered.find("S_next"), std::string::npos) << lowered;
  // Two copies of one loop must keep the same stages: one wait serves both.
  EXPECT_EQ(errorOf([&] {
              passes::pipelineAsyncCopies(loopOf({copyInto(s1, 2), copyInto(s2, 3)}, ir::makeStore(o, k, ir::load(s1, zero))), 48 * 1024);
            }),
            "double_buffer: the copies 'S' (2 stages) and 'T' (3) at loop 'k' differ in stages");
}
