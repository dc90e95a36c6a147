// The auto-scheduler's features and XGBoost cost model on the matmul landscape's real states:
// fixed-length finite vectors that tell tilings apart, a model that ranks unseen states by the
// landscape better than chance, and a model restored from a log (its measurements fed again,
// as a resumed run does) that predicts exactly what the original did.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "target/Target.h"
#include "tune/ansor/Annotation.h"
#include "tune/ansor/Features.h"
#include "tune/ansor/MatmulLandscape.h"
#include "tune/ansor/XGBoostStateModel.h"

using namespace tessel;
using namespace tessel::tune::ansor;
using ansortest::landscape;
using ansortest::landscapeMatmul;

namespace {

std::vector<AnnotatedState> randomStates(const te::ComputeDAG& dag, size_t count, uint64_t seed) {
  auto sketches = generateSketches(dag);
  SplitFactorizations factorizations;
  std::mt19937_64 rng(seed);
  std::vector<AnnotatedState> states;
  for (size_t i = 0; i < count; ++i) states.push_back(annotateRandomly(dag, sketches[i % sketches.size()], factorizations, rng));
  return states;
}

std::vector<const schedule::State*> pointers(const std::vector<AnnotatedState>& states, size_t begin, size_t end) {
  std::vector<const schedule::State*> out;
  for (size_t i = begin; i < end; ++i) out.push_back(&states[i].state);
  return out;
}

std::vector<double> throughputs(const std::vector<AnnotatedState>& states, size_t begin, size_t end) {
  std::vector<double> out;
  for (size_t i = begin; i < end; ++i) out.push_back(landscape(states[i].state) * 1e9);
  return out;
}

/// The fraction of pairs the scores order as the landscape does.
double pairAccuracy(const std::vector<double>& scores, const std::vector<double>& truth) {
  int64_t right = 0, all = 0;
  for (size_t i = 0; i < scores.size(); ++i)
    for (size_t j = i + 1; j < scores.size(); ++j) {
      if (truth[i] == truth[j]) continue;
      ++all;
      right += (scores[i] > scores[j]) == (truth[i] > truth[j]);
    }
  return all ? double(right) / double(all) : 0;
}

/// A fixed machine (not this host's), so that the features and the models are the same everywhere.
const target::CpuMachine& haswell() {
  static const target::CpuMachine machine = target::Target::parse("cpu -mcpu=haswell").cpu;
  return machine;
}

}  // namespace

TEST(AnsorFeatures, FixedLengthFiniteAndTellTilingsApart) {
  auto states = randomStates(landscapeMatmul(), 60, 1);
  std::set<std::vector<float>> distinct;
  for (auto& s : states) {
    auto row = stateFeatures(s.state, &haswell());
    ASSERT_EQ(row.size(), kStateFeatureLength);
    for (float v : row) ASSERT_TRUE(std::isfinite(v) && v >= 0);
    for (auto& store : storeFeatures(s.state, &haswell())) EXPECT_EQ(store.size(), kStoreFeatureLength);
    EXPECT_EQ(stateFeatures(s.state, &haswell()), row);  // deterministic
    distinct.insert(row);
  }
  EXPECT_GT(distinct.size(), 50u);
}

TEST(AnsorCostModel, RanksUnseenStatesBetterThanChance) {
  auto states = randomStates(landscapeMatmul(), 400, 2);
  XGBoostStateModel model(haswell());
  model.update(pointers(states, 0, 300), throughputs(states, 0, 300));
  double accuracy = pairAccuracy(model.predict(pointers(states, 300, 400)), throughputs(states, 300, 400));
  std::printf("[ model    ] pairwise order right on %.1f%% of unseen pairs\n", 100 * accuracy);
  EXPECT_GT(accuracy, 0.7);
}

TEST(AnsorCostModel, ResumedModelPredictsWhatTheOriginalDid) {
  auto states = randomStates(landscapeMatmul(), 200, 3);
  // The original learned in rounds, as a tuning run does; the restored one from the whole log.
  XGBoostStateModel original(haswell()), restored(haswell());
  for (size_t begin = 0; begin < 120; begin += 40) original.update(pointers(states, begin, begin + 40), throughputs(states, begin, begin + 40));
  restored.update(pointers(states, 0, 120), throughputs(states, 0, 120));
  EXPECT_EQ(restored.samples(), original.samples());
  ASSERT_TRUE(restored.fitted() && original.fitted());
  EXPECT_EQ(restored.predict(pointers(states, 120, 200)), original.predict(pointers(states, 120, 200)));
}
