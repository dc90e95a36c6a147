// Schedules whose correctness depends on subtle lowering (overrunning splits inside an
// rfactor, a region of varying size, padded local buffers, attached cache stages), compiled
// with the real compiler, run, and compared with the reference evaluator.
#include <gtest/gtest.h>

#include "common/KernelCheck.h"
#include "ops/Examples.h"
#include "schedule/BoundInference.h"
#include "schedule/ExampleSchedules.h"
#include "schedule/State.h"

using namespace tessel;
using namespace tessel::schedule;
using namespace tessel::schedule::examples;

namespace {

double errorOf(const te::ComputeDAG& dag, const std::vector<StepPtr>& steps, uint64_t seed) {
  auto r = kernelcheck::checkAgainstReference(replay(dag, steps), seed);
  EXPECT_LT(r.maxRelativeError, 1e-5) << r.source;
  return r.maxRelativeError;
}

TEST(ScheduleKernels, RfactorOfASplitByNpartsThatOverruns) {
  // k = 12 in 5 parts of 3: the parts cover 15 values, the last 3 must not be read.
  errorOf(ops::matmul(3, 5, 12), {step<SplitStep>("C", "k", Factors{}, 5), step<RfactorStep>("C", "k.1")}, 31);
  errorOf(ops::matmul(3, 5, 12), {step<SplitStep>("C", "k", Factors{}, 5), step<RfactorStep>("C", "k.0")}, 32);
}

TEST(ScheduleKernels, RegionOfVaryingSize) {
  auto X = te::placeholder({16}, DataType::float32(), "X");
  auto A = te::compute({16}, [&](const std::vector<te::Var>& i) { return X(i[0]) * ir::Expr(2.0f); }, "A");
  auto C = te::compute({16}, [&](const std::vector<te::Var>& i) { return A(ir::min(i[0], ir::Expr(12))); }, "C");
  errorOf(te::ComputeDAG({C}), {step<SplitStep>("C", "i0", Factors{4}), step<ComputeAtStep>("A", "C", "i0.0")}, 33);
}

TEST(ScheduleKernels, TiledDenseWithEveryLoopStep) { errorOf(denseRelu(), tiledSteps(), 34); }

TEST(ScheduleKernels, StridedRegionKeepsOnlyTheIndicesItHolds) {
  // D's rows split (8 per group, i.2 the row in the group) with the group loop i.1 inside the
  // attach point: C.local's region at D.i.2 is every 8th row, 4 of them, not a window of 25.
  std::vector<StepPtr> steps = {
      step<CacheWriteStep>("C", "local"),
      step<ComputeInlineStep>("C"),
      step<SplitStep>("D", "i", Factors{4, 8}),
      step<SplitStep>("D", "j", Factors{3, 4}),
      step<ReorderStep>("D", Names{"i.0", "j.0", "i.2", "j.2", "i.1", "j.1"}),
      step<ComputeAtStep>("C.local", "D", "j.2"),
  };
  State state = replay(denseRelu(), steps);
  BoundsResult bounds = inferBounds(state);
  const StageBounds& local = bounds.stages.at("C.local");
  EXPECT_EQ(local.regionStride[0], 8);
  EXPECT_EQ(local.regionExtent[0], 4);
  EXPECT_EQ(local.regionStride[1], 4);
  EXPECT_EQ(local.regionExtent[1], 3);
  errorOf(denseRelu(), steps, 36);
}

TEST(ScheduleKernels, ConvolutionWithInlineRfactorAndAlignedPadding) {
  errorOf(ops::conv2dBiasReluNCHW(1, 4, 9, 9, 6, 3, 3, 2, 1), reductionSteps(), 35);
}

}  // namespace
