// The annealer over a config space on a known function: it finds the argmax of the conv2d
// template's space (14112 configs) under the synthetic landscape, respects exclusions, and is
// deterministic given its seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "SyntheticLandscape.h"
#include "tune/autotvm/SimulatedAnnealing.h"

using namespace tessel::tune::autotvm;

namespace {

struct Fixture {
  TuningTaskPtr task = synthetic::resnetConv2dTask();
  std::vector<double> values;
  uint64_t argmax = 0;
  Fixture() {
    for (uint64_t i = 0; i < task->space->size(); ++i) values.push_back(synthetic::conv2dLandscape(*task, i));
    argmax = uint64_t(std::max_element(values.begin(), values.end()) - values.begin());
  }
  SimulatedAnnealing::ScoreFunction score() const {
    return [this](const std::vector<uint64_t>& indices) {
      std::vector<double> out;
      for (uint64_t i : indices) out.push_back(values[i]);
      return out;
    };
  }
};

const Fixture& fixture() {
  static Fixture f;
  return f;
}

}  // namespace

TEST(SimulatedAnnealing, FindsTheArgmaxOfAKnownFunction) {
  const Fixture& f = fixture();
  for (uint64_t seed : {1, 2, 3}) {
    SimulatedAnnealing annealing({}, seed);
    std::vector<uint64_t> best = annealing.findMaximums(*f.task->space, f.score(), 8, [](uint64_t) { return false; });
    ASSERT_EQ(best.size(), 8u);
    EXPECT_EQ(f.values[best[0]], f.values[f.argmax]) << "seed " << seed;  // two configs tie for the best
    for (size_t i = 1; i < best.size(); ++i) EXPECT_GE(f.values[best[i - 1]], f.values[best[i]]);
    EXPECT_EQ(std::set<uint64_t>(best.begin(), best.end()).size(), best.size());
    std::printf("seed %llu: scored %zu of %llu configs\n", (unsigned long long)seed, annealing.lastScored(),
                (unsigned long long)f.task->space->size());
  }
}

TEST(SimulatedAnnealing, SkipsExcludedConfigs) {
  const Fixture& f = fixture();
  SimulatedAnnealing annealing({}, 5);
  std::vector<uint64_t> best =
      annealing.findMaximums(*f.task->space, f.score(), 4, [&](uint64_t i) { return f.values[i] >= f.values[f.argmax]; });
  ASSERT_EQ(best.size(), 4u);
  for (uint64_t i : best) EXPECT_LT(f.values[i], f.values[f.argmax]);
}

TEST(SimulatedAnnealing, DeterministicGivenTheSeed) {
  const Fixture& f = fixture();
  SimulatedAnnealingOptions quick;
  quick.maxSteps = 20;
  SimulatedAnnealing a(quick, 9), b(quick, 9);
  auto none = [](uint64_t) { return false; };
  for (int call = 0; call < 2; ++call)  // the chains persist: the second calls must agree too
    EXPECT_EQ(a.findMaximums(*f.task->space, f.score(), 16, none), b.findMaximums(*f.task->space, f.score(), 16, none));
}

TEST(SimulatedAnnealing, SmallSpacesAndUnscorableConfigs) {
  ConfigSpace space;
  space.defineKnob("a", {0, 1, 2, 3});
  space.defineKnob("b", {0, 1, 2});
  SimulatedAnnealing annealing({}, 1);
  // Odd indices cannot be scored; the best even ones come back, never more than exist.
  auto score = [](const std::vector<uint64_t>& indices) {
    std::vector<double> out;
    for (uint64_t i : indices) out.push_back(i % 2 ? -std::numeric_limits<double>::infinity() : double(i));
    return out;
  };
  std::vector<uint64_t> best = annealing.findMaximums(space, score, 100, [](uint64_t) { return false; });
  EXPECT_EQ(best, (std::vector<uint64_t>{10, 8, 6, 4, 2, 0}));
}
