// Step lists the schedule fuzzer found wrong, kept as deterministic tests. Kernels are built
// with trapping bounds checks on their local arrays, so a local buffer overrun fails the test
// (SIGILL) even where it happens not to change the results.
#include <gtest/gtest.h>

#include "common/KernelCheck.h"
#include "ops/Examples.h"
#include "schedule/Steps.h"

using namespace tessel;
using namespace tessel::schedule;

namespace {

/// Compiles and runs the schedule; integer outputs must match exactly, float ones within 1e-5.
void expectMatchesReference(const te::ComputeDAG& dag, const std::vector<StepPtr>& steps, uint64_t seed) {
  auto r = kernelcheck::checkAgainstReference(replay(dag, steps), seed, kernelcheck::boundsCheckedOptions());
  bool integer = dag.op(dag.outputNames().front())->dtype.isIntegral();
  if (integer) EXPECT_EQ(r.maxRelativeError, 0.0) << printSteps(steps) << r.source;
  else EXPECT_LT(r.maxRelativeError, 1e-5) << printSteps(steps) << r.source;
}

StepPtr split(const std::string& stage, const std::string& iterator, std::vector<int64_t> factors) {
  return std::make_shared<SplitStep>(stage, iterator, std::move(factors));
}

}  // namespace

// An attached stage holds only its region in a local buffer; a non-divisible split of a region
// axis overran the buffer (it was only kept inside the whole tensor) and wrote past it.
TEST(FuzzRegression, AttachedStageSplitStaysInsideItsRegion) {
  auto dag = ops::maxPool2dNCHW(1, 3, 13, 7, 3, 2, 1);
  expectMatchesReference(dag,
                         {std::make_shared<ComputeAtStep>("pad_temp", "pool_max", "ax2"),
                          split("pad_temp", "i2", {2})},  // 3 rows of region, 2 x 2 iterations
                         1);
}

// The list the fuzzer found (seed 1, case 5): a fused and multi-level split attached stage
// overrunning its region under a parallel loop; it crashed the process.
TEST(FuzzRegression, AttachedStageFusedSplitUnderParallelLoop) {
  auto steps = stepsFromJson(nlohmann::json::parse(R"([
    {"step": "split", "stage": "pad_temp", "iterator": "i0", "factors": [4]},
    {"step": "reorder", "stage": "pad_temp", "order": ["i2", "i0.1", "i0.0", "i1", "i3"]},
    {"step": "fuse", "stage": "pad_temp", "iterators": ["i1", "i3"]},
    {"step": "reorder", "stage": "pool_max", "order": ["ax2", "ax1", "rv1", "rv0", "ax0", "ax3"]},
    {"step": "pragma", "stage": "pad_temp", "iterator": "i2", "key": "auto_unroll_max_step", "value": "0"},
    {"step": "compute_at", "stage": "pad_temp", "target": "pool_max", "target_iterator": "ax0"},
    {"step": "annotate", "stage": "pool_max", "iterator": "rv0", "annotation": "unroll"},
    {"step": "compute_at", "stage": "pad_temp", "target": "pool_max", "target_iterator": "ax1"},
    {"step": "annotate", "stage": "pad_temp", "iterator": "i2", "annotation": "parallel"},
    {"step": "split", "stage": "pad_temp", "iterator": "i1@i3", "factors": [4, 3]}
  ])"));
  expectMatchesReference(ops::maxPool2dNCHW(1, 3, 13, 7, 3, 2, 1), steps, 2);
}

// Splitting a part of a non-divisible split again: k.1 has extent 3 but its split runs 8
// iterations; only k < 9 was checked, so k = 3..7 were accumulated twice.
TEST(FuzzRegression, SplitOfASplitPartDoesNotRepeatIterations) {
  auto dag = ops::matmul(16, 20, 9, DataType::int32());
  expectMatchesReference(dag, {split("C", "k", {3}), split("C", "k.1", {8})}, 3);
}

// Thirteen lanes: GCC vector types need a power-of-two lane count, the source did not compile.
TEST(FuzzRegression, VectorizeOfThirteenLanesCompiles) {
  auto dag = ops::matmul(7, 13, 11);
  expectMatchesReference(dag, {std::make_shared<AnnotateStep>("C", "j", Annotation::Vectorize)}, 4);
}

// Loop partitioning copies a loop body for each piece; both pieces of j.0 run one iteration,
// lose their loops, and their copies of the C.local allocation were declared twice in one
// C++ scope.
TEST(FuzzRegression, PartitionedPiecesDoNotShareAnAllocation) {
  auto dag = ops::matmul(16, 20, 9);
  expectMatchesReference(dag,
                         {std::make_shared<CacheWriteStep>("C", "local"), split("C", "j", {16}),
                          std::make_shared<ComputeAtStep>("C.local", "C", "j.0")},
                         5);
}

// The list the fuzzer found (seed 13738184059766455429, case 203): a cached input declared in
// a serial loop and filled by a parallel loop inside it. GCC gave the array the stack slot of
// the OpenMP region's argument block (the array's address was hoisted out of the loop, so it
// looked dead before the region); the lambda's stores overwrote the block and the process
// crashed with two or more threads. The source marks such an array live where it is declared.
TEST(FuzzRegression, ArrayFilledByAParallelLoopKeepsItsOwnStackSlot) {
  auto steps = stepsFromJson(nlohmann::json::parse(R"([
    {"step": "split", "stage": "conv2d_nhwc", "iterator": "yy", "factors": [1]},
    {"step": "reorder", "stage": "conv2d_nhwc", "order": ["xx", "yy.0", "rx", "yy.1", "nn", "ff"]},
    {"step": "annotate", "stage": "PaddedInput", "iterator": "i0", "annotation": "unroll"},
    {"step": "cache_read", "stage": "data", "scope": "local", "readers": ["PaddedInput"]},
    {"step": "compute_at", "stage": "data.local", "target": "PaddedInput", "target_iterator": "i2"},
    {"step": "split", "stage": "conv2d_nhwc", "iterator": "ry", "factors": [4]},
    {"step": "annotate", "stage": "data.local", "iterator": "ax0", "annotation": "parallel"},
    {"step": "split", "stage": "conv2d_nhwc", "iterator": "yy.0", "factors": [5]},
    {"step": "compute_at", "stage": "PaddedInput", "target": "conv2d_nhwc", "target_iterator": "rc"},
    {"step": "follow_split", "stage": "data.local", "iterator": "ax3", "source_stage": "conv2d_nhwc",
     "source_iterator": "yy", "parts": 2},
    {"step": "compute_at", "stage": "data.local", "target": "conv2d_nhwc", "target_iterator": "rx"}
  ])"));
  auto dag = ops::conv2dNHWC(1, 3, 9, 11, 5, 3, 3, 2, 1);
  auto r = kernelcheck::checkAgainstReference(replay(dag, steps), 3, kernelcheck::boundsCheckedOptions());
  EXPECT_LT(r.maxRelativeError, 1e-5) << r.source;
  EXPECT_NE(r.source.find(R"(__asm__ volatile("" : : "r"(data_local));)"), std::string::npos) << r.source;
}

// Seed 2377888608202535565, case 405: the padded input of a max pool, attached over a local
// copy of the data, computed past its domain when attached stages first could (a ragged GEMM
// tile's accumulator): its reads of the copy lie under the padding's condition, which bounds
// the copy's region, and the points past the domain read outside it (a local array's bounds
// check). Only a reduction with unconditional reads computes past its domain.
TEST(FuzzRegression, APaddedStageOverALocalCopyStaysInsideItsDomain) {
  auto steps = stepsFromJson(nlohmann::json::parse(R"([
    {"factors":[2,2],"iterator":"i3","stage":"pad_temp","step":"split"},
    {"iterator":"i0","key":"auto_unroll_max_step","stage":"pad_temp","step":"pragma","value":"512"},
    {"iterators":["ax0","ax1"],"stage":"pool_max","step":"fuse"},
    {"iterators":["i1","i2","i3.0"],"stage":"pad_temp","step":"fuse"},
    {"annotation":"vectorize","iterator":"i3.2","stage":"pad_temp","step":"annotate"},
    {"stage":"pad_temp","step":"compute_at","target":"pool_max","target_iterator":"rv1"},
    {"factors":[2],"iterator":"ax2","stage":"pool_max","step":"split"},
    {"annotation":"parallel","iterator":"ax3","stage":"pool_max","step":"annotate"},
    {"readers":["pad_temp"],"scope":"local","stage":"data","step":"cache_read"},
    {"stage":"data.local","step":"compute_at","target":"pool_max","target_iterator":"ax2.1"},
    {"annotation":"parallel","iterator":"ax2.1","stage":"pool_max","step":"annotate"},
    {"stage":"data.local","step":"compute_at","target":"pad_temp","target_iterator":"i3.2"},
    {"order":["ax2","ax3","ax1"],"stage":"data.local","step":"reorder"},
    {"stage":"pad_temp","step":"compute_at","target":"pool_max","target_iterator":"ax2.0"}
  ])"));
  expectMatchesReference(ops::maxPool2dNCHW(1, 3, 13, 7, 3, 2, 1), steps, 6);
}

// Seed 9063239301007258039, case 247: a convolution's sum over its rfactor parts, attached at a
// loop of its consumer whose region holds whole output rows, computes past its domain; its own
// non-divisible split of the columns (7 as 2 x 4) then wrote column 7, past the end of its
// buffer (the region is the whole dimension, so the buffer ends where the domain does).
TEST(FuzzRegression, AStageComputedPastItsDomainStaysInsideAWholeDimensionRegion) {
  auto steps = stepsFromJson(nlohmann::json::parse(R"([
    {"iterator":"rc","stage":"conv2d_nchw","step":"rfactor"},
    {"stage":"conv2d_nchw","step":"compute_at","target":"T_add","target_iterator":"ax0"},
    {"stage":"conv2d_nchw.rf","step":"compute_at","target":"conv2d_nchw","target_iterator":"xx"},
    {"factors":[4],"iterator":"xx","stage":"conv2d_nchw","step":"split"}
  ])"));
  expectMatchesReference(ops::conv2dBiasReluNCHW(1, 3, 11, 13, 6, 3, 3, 2, 1), steps, 7);
}
