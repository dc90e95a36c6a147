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
#include "support/Error.h"

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
/// do not divide, so every level keeps a guard. Once the outer extent is 1, a factor is
/// clamped to it: the chain stops growing.
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

TEST(LongStepLists, SplitsThatMultiplyTheIterationsPastReasonAreRefused) {
  // Splits of the inner part into 3 parts each: past an extent of 1, every split triples the
  // (guarded) iterations; by 300 splits the index arithmetic would have overflowed int64 many
  // times over. The same chain by factors stays small (clamped), and replays.
  auto dag = ops::matmul(64, 64, 64);
  EXPECT_NO_THROW(schedule::replay(dag, outerChain(300)));
  std::vector<schedule::StepPtr> parts;
  std::string iterator = "j";
  for (int k = 0; k < 300; ++k) {
    parts.push_back(std::make_shared<schedule::SplitStep>("C", iterator, std::vector<int64_t>{}, 3));
    iterator += ".1";
  }
  try {
    schedule::replay(dag, parts);
    FAIL() << "replayed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("iterations, more than 2^48"), std::string::npos) << e.what();
  }
}

TEST(LongStepLists, SplitChainsComputeTheReference) {
  auto dag = ops::matmul(24, 36, 8);
  for (auto steps : {innerChain(40), outerChain(12)}) {
    auto result = kernelcheck::checkAgainstReference(schedule::replay(dag, steps), 7);
    EXPECT_LT(result.maxRelativeError, 1e-5);
  }
}

}  // namespace
