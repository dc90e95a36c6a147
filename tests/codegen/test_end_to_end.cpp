// Hand-written schedules compiled to real shared libraries and checked against the reference.
#include <gtest/gtest.h>

#include "common/KernelCheck.h"
#include "ops/Examples.h"
#include "schedule/Steps.h"

using namespace tessel;
using namespace tessel::schedule;

namespace {

std::vector<StepPtr> sgemmSteps() {
  return {
      std::make_shared<CacheWriteStep>("C", "local"),
      std::make_shared<SplitStep>("C", "i", std::vector<int64_t>{8}),
      std::make_shared<SplitStep>("C", "j", std::vector<int64_t>{2, 16}),
      std::make_shared<ReorderStep>("C", std::vector<std::string>{"j.0", "i.0", "i.1", "j.1", "j.2"}),
      std::make_shared<AnnotateStep>("C", "j.0", Annotation::Parallel),
      std::make_shared<AnnotateStep>("C", "i.1", Annotation::Unroll),
      std::make_shared<AnnotateStep>("C", "j.1", Annotation::Unroll),
      std::make_shared<AnnotateStep>("C", "j.2", Annotation::Vectorize),
      std::make_shared<ComputeAtStep>("C.local", "C", "i.0"),
      std::make_shared<SplitStep>("C.local", "j", std::vector<int64_t>{16}),
      std::make_shared<ReorderStep>("C.local", std::vector<std::string>{"k", "i", "j.0", "j.1"}),
      std::make_shared<AnnotateStep>("C.local", "i", Annotation::Unroll),
      std::make_shared<AnnotateStep>("C.local", "j.0", Annotation::Unroll),
      std::make_shared<AnnotateStep>("C.local", "j.1", Annotation::Vectorize),
      std::make_shared<CacheReadStep>("B", "panel", std::vector<std::string>{"C.local"}),
      std::make_shared<ComputeAtStep>("B.panel", "C", "j.0"),
  };
}

}  // namespace

TEST(EndToEnd, NaiveMatmulMatchesReference) {
  auto dag = ops::matmul(17, 23, 19);
  auto r = kernelcheck::checkAgainstReference(replay(dag, {}), 1);
  EXPECT_LT(r.maxRelativeError, 1e-5);
}

TEST(EndToEnd, RegisterTiledMatmulMatchesReference) {
  auto dag = ops::matmul(64, 96, 48);
  auto r = kernelcheck::checkAgainstReference(replay(dag, sgemmSteps()), 2);
  EXPECT_LT(r.maxRelativeError, 1e-5) << r.source;
  // The register tile became variables and the micro-kernel vector code.
  EXPECT_NE(r.source.find("C_local_r0"), std::string::npos) << r.source;
  EXPECT_NE(r.source.find("tessel_floatx16"), std::string::npos);
}

TEST(EndToEnd, NonDivisibleSplitsMatchReference) {
  auto dag = ops::matmul(30, 37, 11);
  std::vector<StepPtr> steps = {
      std::make_shared<SplitStep>("C", "i", std::vector<int64_t>{4}),
      std::make_shared<SplitStep>("C", "j", std::vector<int64_t>{3, 8}),
      std::make_shared<SplitStep>("C", "k", std::vector<int64_t>{5}),
      std::make_shared<ReorderStep>("C", std::vector<std::string>{"i.0", "j.0", "k.0", "i.1", "k.1", "j.1", "j.2"}),
      std::make_shared<AnnotateStep>("C", "j.2", Annotation::Vectorize),
      std::make_shared<AnnotateStep>("C", "i.0", Annotation::Parallel),
  };
  auto r = kernelcheck::checkAgainstReference(replay(dag, steps), 3);
  EXPECT_LT(r.maxRelativeError, 1e-5) << r.source;
}

TEST(EndToEnd, ConvWithPaddingStrideInlinedAndAttached) {
  auto dag = ops::conv2dBiasReluNCHW(1, 5, 13, 11, 6, 3, 3, 2, 1);
  std::vector<StepPtr> steps = {
      std::make_shared<ComputeInlineStep>("T_add"),
      std::make_shared<ComputeAtStep>("pad_temp", "conv2d_nchw", "yy"),
      std::make_shared<ComputeAtStep>("conv2d_nchw", "T_relu", "ax1"),
      std::make_shared<SplitStep>("T_relu", "ax3", std::vector<int64_t>{4}),
  };
  auto r = kernelcheck::checkAgainstReference(replay(dag, steps), 4);
  EXPECT_LT(r.maxRelativeError, 1e-5) << r.source;
}

TEST(EndToEnd, SoftmaxWithRfactorMatchesReference) {
  auto dag = ops::softmax(7, 45);
  std::vector<StepPtr> steps = {
      std::make_shared<SplitStep>("T_softmax_expsum", "k", std::vector<int64_t>{8}),
      std::make_shared<RfactorStep>("T_softmax_expsum", "k.1"),
      std::make_shared<ComputeInlineStep>("T_softmax_exp"),
  };
  auto r = kernelcheck::checkAgainstReference(replay(dag, steps), 5);
  EXPECT_LT(r.maxRelativeError, 1e-5) << r.source;
}
