// Step lists of hundreds of steps, as the auto-scheduler generates them, lower in time linear
// or quadratic in their length: nested splits used to make the simplifier compare every index
// term with every other (100 chained splits took 1.8 s, 300 did not finish in two minutes).
// The timing itself is in bench/core (lower_split_chain_300_ms); here the long lists must
// lower at all within the test's timeout, and shorter ones compute the right result.
#include <gtest/gtest.h>

#include "common/KernelCheck.h"
#include "ops/Examples.h"
#include "passes/Lower.h"
#include "schedule/Steps.h"

using namespace tessel;

namespace {

/// `count` splits of i, each of the inner part of the previous one (factor 1: i.1, i.1.1, ...).
std::vector<schedule::StepPtr> innerChain(int count) {
  std::vector<schedule::StepPtr> steps;
  std::string iterator = "i";
  for (int k = 0; k < count; ++k) {
    steps.push_back(std::make_shared<schedule::SplitStep>("C", iterator, std::vector<int64_t>{1}));
    iterator += ".1";
  }
  return steps;
}

/// `count` splits of j, each of the outer part of the previous one, with factors 1, 2, 3: most
/// do not divide, so every level keeps a guard until the outer extent is 1.
std::vector<schedule::StepPtr> outerChain(int count) {
  std::vector<schedule::StepPtr> steps;
  std::string iterator = "j";
  for (int k = 0; k < count; ++k) {
    steps.push_back(std::make_shared<schedule::SplitStep>("C", iterator, std::vector<int64_t>{1 + k % 3}));
    iterator += ".0";
  }
  return steps;
}

TEST(LongStepLists, ThreeHundredChainedSplitsLower) {
  auto dag = ops::matmul(64, 64, 64);
  auto mixed = innerChain(260);
  for (auto& step : outerChain(40)) mixed.push_back(step);
  for (auto steps : {innerChain(300), mixed}) {
    auto state = schedule::replay(dag, steps);
    auto function = passes::lower(state, "chain");
    EXPECT_TRUE(function.body.defined());
  }
}

TEST(LongStepLists, SplitsPastTheOuterExtentOfOneAddNoIterations) {
  // Once the outer extent is 1, a split by 2 or 3 has nothing to split: both of its loops run
  // once (bound inference clamps the inner extent to its parent's), so 300 splits keep the
  // iterations of the matmul — they used to triple them at every split, overflowing int64
  // index arithmetic long before 300.
  auto dag = ops::matmul(64, 64, 64);
  auto state = schedule::replay(dag, outerChain(300));
  const auto& c = state.stage("C");
  double iterations = 1;
  for (int leaf : c.leaves) iterations *= double(c.iterator(leaf).extent);
  EXPECT_LT(iterations, 2.0 * 64 * 64 * 64);
  EXPECT_TRUE(passes::lower(state, "chain").body.defined());
}

TEST(LongStepLists, SplitChainsComputeTheReference) {
  auto dag = ops::matmul(24, 36, 8);
  for (auto steps : {innerChain(40), outerChain(12)}) {
    auto result = kernelcheck::checkAgainstReference(schedule::replay(dag, steps), 7);
    EXPECT_LT(result.maxRelativeError, 1e-5);
  }
}

}  // namespace
