// The xgb tuner on synthetic landscapes: it reaches within 5% of the optimum of the conv2d
// template's real space in at most a quarter of the trials random search needs (median over
// 10 seeds); transfer learning from a similar task gives a better first batch than random;
// epsilon and the diversity filter do what they say; no config is proposed twice and the
// tuner runs out cleanly when the space does.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <set>

#include "SyntheticLandscape.h"
#include "schedule/Steps.h"
#include "support/Error.h"
#include "tune/autotvm/BasicTuners.h"
#include "tune/autotvm/XGBTuner.h"

using namespace tessel;
using namespace tessel::tune::autotvm;

namespace {

using Landscape = std::function<double(uint64_t)>;

/// Trials until the first config within `target`, proposing batches of `batch`; `cap` if none.
size_t trialsToReach(Tuner& tuner, const Landscape& y, double target, size_t batch, size_t cap) {
  size_t trials = 0;
  while (tuner.hasNext() && trials < cap) {
    std::vector<Trial> results;
    for (uint64_t index : tuner.nextBatch(batch)) {
      ++trials;
      results.push_back({index, y(index)});
      if (results.back().flopsPerSecond >= target) return trials;
    }
    tuner.update(results);
  }
  return cap;
}

size_t median(std::vector<size_t> v) {
  std::sort(v.begin(), v.end());
  return (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

XGBTunerOptions knobOptions() {
  XGBTunerOptions options;
  options.featureType = "knob";
  options.numThreads = 1;
  return options;
}

/// Feeds a tuner `count` trials of the landscape in batches of `batch`.
void feed(Tuner& tuner, const Landscape& y, size_t count, size_t batch) {
  for (size_t done = 0; done < count;) {
    std::vector<Trial> results;
    for (uint64_t index : tuner.nextBatch(std::min(batch, count - done))) results.push_back({index, y(index)});
    done += results.size();
    tuner.update(results);
  }
}

// ---- a small matmul template of our own, for the tasks of the transfer test ------------------

TuningTaskPtr matmulTask(int64_t n) {
  auto space = std::make_shared<ConfigSpace>();
  SplitOptions i, j, k;
  i.maxFactor = 16;
  j.maxFactor = 32;
  k.maxFactor = 64;
  space->defineSplit("tile_i", n, i);
  space->defineSplit("tile_j", n, j);
  space->defineSplit("tile_k", n, k);
  space->defineKnob("k_outside_i", {false, true});
  auto task = std::make_shared<TuningTask>();
  task->name = "matmul" + std::to_string(n);
  task->templateName = "test_matmul";
  task->measure = tune::makeMeasureTask(task->name, ops::matmul(n, n, n));
  task->space = space;
  task->instantiate = [](const ConfigEntity& config) {
    using namespace schedule;
    auto split = [&](const char* axis, const char* knob) {
      return std::make_shared<SplitStep>("C", axis, std::vector<int64_t>{config.split(knob)[1]});
    };
    std::vector<StepPtr> steps{split("i", "tile_i"), split("j", "tile_j"), split("k", "tile_k")};
    std::vector<std::string> order = config.value("k_outside_i").get<bool>()
                                         ? std::vector<std::string>{"i.0", "j.0", "k.0", "k.1", "i.1", "j.1"}
                                         : std::vector<std::string>{"i.0", "j.0", "k.0", "i.1", "k.1", "j.1"};
    steps.push_back(std::make_shared<ReorderStep>("C", order));
    steps.push_back(std::make_shared<AnnotateStep>("C", "i.0", Annotation::Parallel));
    steps.push_back(std::make_shared<AnnotateStep>("C", "j.1", Annotation::Vectorize));
    return steps;
  };
  return task;
}

/// The same preferences for every size: 16 vector lanes, 4 rows, a k tile near 8, k outside i.
double matmulLandscape(const TuningTask& task, uint64_t index) {
  ConfigEntity c = task.space->get(index);
  auto near = [](int64_t value, double best, double width) {
    return std::exp(-std::pow(std::log2(double(value)) - std::log2(best), 2) / width);
  };
  return 50.0 * near(c.split("tile_j")[1], 16, 2) * near(c.split("tile_i")[1], 4, 2) * near(c.split("tile_k")[1], 8, 6) *
         (c.value("k_outside_i").get<bool>() ? 1.0 : 0.7);
}

}  // namespace

// The acceptance test of issue 4's tuners.
TEST(XGBTuner, ReachesNearOptimumInAQuarterOfRandomsTrials) {
  TuningTaskPtr task = synthetic::resnetConv2dTask();
  std::vector<double> values;
  for (uint64_t i = 0; i < task->space->size(); ++i) values.push_back(synthetic::conv2dLandscape(*task, i));
  double target = 0.95 * *std::max_element(values.begin(), values.end());
  Landscape y = [&](uint64_t index) { return values[index]; };
  size_t cap = task->space->size();
  std::vector<size_t> xgb, random;
  auto start = std::chrono::steady_clock::now();
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    XGBTuner tuner(task, knobOptions(), seed);
    xgb.push_back(trialsToReach(tuner, y, target, 16, cap));
  }
  double xgbSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    RandomTuner tuner(task, seed);
    random.push_back(trialsToReach(tuner, y, target, 16, cap));
  }
  std::printf("trials to within 5%% of the optimum (space %zu): xgb median %zu (%.2f s for 10 runs), random median %zu\n",
              values.size(), median(xgb), xgbSeconds, median(random));
  std::printf("  xgb:");
  for (size_t t : xgb) std::printf(" %zu", t);
  std::printf("\n  random:");
  for (size_t t : random) std::printf(" %zu", t);
  std::printf("\n");
  EXPECT_LE(median(xgb) * 4, median(random));
}

TEST(XGBTuner, TransferLearningGivesABetterFirstBatch) {
  TuningTaskPtr a = matmulTask(64), b = matmulTask(128);
  // Task A's history: 150 random configs.
  std::vector<Trial> history;
  {
    RandomTuner sampler(a, 11);
    for (uint64_t index : sampler.nextBatch(150)) history.push_back({index, matmulLandscape(*a, index)});
  }
  double spaceMean = 0, best = 0;
  for (uint64_t i = 0; i < b->space->size(); ++i) {
    spaceMean += matmulLandscape(*b, i) / double(b->space->size());
    best = std::max(best, matmulLandscape(*b, i));
  }
  for (const char* type : {"itervar", "curve"}) {
    XGBTunerOptions options;
    options.featureType = type;
    options.numThreads = 1;
    options.planSize = 16;
    options.epsilon = 0;
    XGBTuner tuner(b, options, 3);
    tuner.loadHistory({{a, history}});
    std::vector<uint64_t> first = tuner.nextBatch(16);
    double mean = 0;
    for (uint64_t index : first) mean += matmulLandscape(*b, index) / double(first.size());
    std::printf("%s: first batch on task B after A's history: mean %.2f, best %.2f of %.2f; random expects %.2f\n", type,
                mean, matmulLandscape(*b, first[0]), best, spaceMean);
    EXPECT_EQ(tuner.modelPicks(), 16u);
    EXPECT_GT(mean, 2.0 * spaceMean);
    // And the tuner goes on learning B on top of the base model.
    std::vector<Trial> results;
    for (uint64_t index : first) results.push_back({index, matmulLandscape(*b, index)});
    tuner.update(results);
    EXPECT_EQ(tuner.fits(), 0);  // the fit waits for the next batch
    tuner.nextBatch(16);
    EXPECT_EQ(tuner.fits(), 1);
  }
  // Knob features do not transfer between different spaces: the history is ignored.
  XGBTunerOptions knob = knobOptions();
  XGBTuner tuner(b, knob, 3);
  tuner.loadHistory({{a, history}});
  EXPECT_FALSE(tuner.model().canPredict());
}

TEST(XGBTuner, EpsilonMixesRandomPicksIntoThePlan) {
  TuningTaskPtr task = synthetic::resnetConv2dTask();
  Landscape y = [&](uint64_t index) { return synthetic::conv2dLandscape(*task, index); };
  std::map<double, size_t> modelPicks;
  for (double epsilon : {0.0, 0.5, 1.0}) {
    XGBTunerOptions options = knobOptions();
    options.planSize = 32;
    options.epsilon = epsilon;
    XGBTuner tuner(task, options, 4);
    feed(tuner, y, 32, 32);  // random until the first fit
    EXPECT_EQ(tuner.modelPicks(), 0u);
    std::vector<uint64_t> plan = tuner.plan();
    ASSERT_EQ(tuner.fits(), 1);
    std::vector<uint64_t> batch = tuner.nextBatch(32);
    modelPicks[epsilon] = tuner.modelPicks();
    if (epsilon == 0) {
      EXPECT_EQ(batch, plan);  // exactly the plan, best first
    }
  }
  EXPECT_EQ(modelPicks[0.0], 32u);
  EXPECT_EQ(modelPicks[1.0], 0u);
  EXPECT_GT(modelPicks[0.5], 8u);
  EXPECT_LT(modelPicks[0.5], 24u);
}

TEST(XGBTuner, DiversityFilterSpreadsThePlanOverKnobValues) {
  TuningTaskPtr task = synthetic::resnetConv2dTask();
  Landscape y = [&](uint64_t index) { return synthetic::conv2dLandscape(*task, index); };
  auto diversity = [&](const std::vector<uint64_t>& plan) {
    size_t knobs = task->space->knobs().size(), total = 0;
    for (size_t k = 0; k < knobs; ++k) {
      std::set<size_t> values;
      for (uint64_t index : plan) values.insert(task->space->get(index).choices()[k]);
      total += values.size();
    }
    return total;
  };
  std::map<double, size_t> spread;
  for (double ratio : {0.0, 4.0}) {
    XGBTunerOptions options = knobOptions();
    options.planSize = 16;
    options.diversityFilterRatio = ratio;
    XGBTuner tuner(task, options, 6);
    feed(tuner, y, 64, 16);
    ASSERT_EQ(tuner.plan().size(), 16u);
    spread[ratio] = diversity(tuner.plan());
  }
  std::printf("distinct knob values in a plan of 16: %zu without the filter, %zu with ratio 4\n", spread[0.0], spread[4.0]);
  EXPECT_GT(spread[4.0], spread[0.0]);
  XGBTunerOptions bad = knobOptions();
  bad.diversityFilterRatio = 0.5;
  EXPECT_THROW(XGBTuner(task, bad, 1), Error);
}

TEST(XGBTuner, NeverProposesTwiceAndRunsOutCleanly) {
  auto space = std::make_shared<ConfigSpace>();
  space->defineKnob("a", {0, 1, 2, 3});
  space->defineKnob("b", {0, 1, 2});
  space->defineKnob("c", {0, 1, 2, 3, 4});
  auto task = std::make_shared<TuningTask>();
  task->name = "small";
  task->space = space;
  Landscape y = [](uint64_t index) { return index % 7 == 0 ? 0.0 : 1.0 + double((index * 37) % 60); };
  for (const char* loss : {"rank", "reg"}) {
    XGBTunerOptions options = knobOptions();
    options.lossType = loss;
    options.planSize = 8;
    XGBTuner tuner(task, options, 2);
    tuner.markProposed(5);  // measured by an earlier run
    std::set<uint64_t> seen{5};
    size_t proposals = 0;
    while (tuner.hasNext()) {
      std::vector<uint64_t> batch = tuner.nextBatch(7);
      ASSERT_FALSE(batch.empty());
      std::vector<Trial> results;
      for (uint64_t index : batch) {
        EXPECT_TRUE(seen.insert(index).second) << "proposed twice: " << index;
        results.push_back({index, y(index)});
      }
      proposals += batch.size();
      tuner.update(results);
    }
    EXPECT_EQ(proposals, 59u);
    EXPECT_EQ(seen.size(), 60u);
    EXPECT_TRUE(tuner.nextBatch(7).empty());
    EXPECT_GT(tuner.fits(), 3);
  }
}

TEST(XGBTuner, InvalidOptions) {
  TuningTaskPtr task = synthetic::resnetConv2dTask();
  XGBTunerOptions options = knobOptions();
  options.lossType = "hinge";
  EXPECT_THROW(makeXGBTuner(task, options, 0), Error);
  options = knobOptions();
  options.featureType = "ast";
  EXPECT_THROW(makeXGBTuner(task, options, 0), Error);
  options = knobOptions();
  options.epsilon = 2;
  EXPECT_THROW(makeXGBTuner(task, options, 0), Error);
}
