// The auto-scheduler's evolutionary search and its tuning loop on a synthetic landscape over a
// matmul's real states (MatmulLandscape.h): mutations keep schedules valid, the search with the
// XGBoost cost model finds the planted optimum within 240 trials on 9 of 10 seeds (and random
// scores in its place do worse), and the loop keeps the tuning contract (budget,
// every result logged before the policy learns, early stopping, resume without repeats).
#include <gtest/gtest.h>

#include <limits>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "ops/Schedules.h"
#include "target/Target.h"
#include "tune/ansor/Mutations.h"
#include "tune/ansor/SketchPolicy.h"
#include "tune/ansor/TuneAutoTask.h"
#include "tune/ansor/XGBoostStateModel.h"
#include "tune/ansor/MatmulLandscape.h"

using namespace tessel;
using namespace tessel::tune;
using namespace tessel::tune::ansor;
using ansortest::landscape;
using ansortest::landscapeMatmul;

namespace {

/// The machine the learned models read the states against: a fixed one (not this host's), so
/// that a search runs the same everywhere.
const target::CpuMachine& searchMachine() {
  static const target::CpuMachine machine = target::Target::parse("cpu -mcpu=haswell").cpu;
  return machine;
}

/// Builds nothing; "runs" a schedule by replaying its steps and reading the landscape.
class LandscapeMeasurer : public Builder, public Runner {
 public:
  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) override { return std::vector<BuildResult>(inputs.size()); }
  void discard(const BuildResult&) override {}
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>&) override {
    std::vector<MeasureResult> out;
    for (auto& in : inputs) {
      MeasureResult r;
      r.costs = {in.task->dag.flopCount() / (1e9 * landscape(schedule::replay(in.task->dag, in.steps)))};
      out.push_back(r);
    }
    return out;
  }
  bool needsReference(const MeasureTask&) const override { return false; }
  void setReference(const MeasureTask&, const BuildResult&) override {}
};

/// Records each batch's stop bounds and costs.
class BoundRecorder : public LandscapeMeasurer {
 public:
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds) override {
    auto out = LandscapeMeasurer::run(inputs, builds);
    std::vector<double> bounds, costs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      bounds.push_back(inputs[i].stopAboveSeconds);
      costs.push_back(out[i].cost());
    }
    batchBounds.push_back(bounds);
    batchCosts.push_back(costs);
    return out;
  }
  std::vector<std::vector<double>> batchBounds, batchCosts;
};

SketchPolicyOptions smallSearch(uint64_t seed) {
  SketchPolicyOptions o;
  o.populationSize = 128;
  o.generations = 3;
  o.seed = seed;
  return o;
}

/// A policy that checks, each time it learns, that the loop logged those results first.
class LoggedFirstPolicy : public SearchPolicy {
 public:
  LoggedFirstPolicy(SearchPolicy& inner, const std::vector<std::string>& logged) : inner_(inner), logged_(logged) {}
  std::vector<std::vector<schedule::StepPtr>> nextBatch(size_t count) override { return inner_.nextBatch(count); }
  void update(const std::vector<MeasuredSchedule>& measured) override {
    learned_ += measured.size();
    EXPECT_GE(logged_.size(), learned_ - resumed);
    inner_.update(measured);
  }
  size_t resumed = 0;

 private:
  SearchPolicy& inner_;
  const std::vector<std::string>& logged_;
  size_t learned_ = 0;
};

}  // namespace

TEST(AnsorMutations, EveryMutationKindGivesValidChangedSchedules) {
  auto dag = landscapeMatmul();
  auto sketches = generateSketches(dag);
  SplitFactorizations factorizations;
  AnnotationOptions options;
  std::mt19937_64 rng(7);
  std::map<MutationKind, int> changed;
  for (int i = 0; i < 400; ++i) {
    AnnotatedState parent = annotateRandomly(dag, sketches[size_t(i) % sketches.size()], factorizations, rng);
    MutationKind kind = MutationKind(i % 4);
    auto child = mutate(dag, parent, kind, factorizations, options, rng);
    if (!child) continue;
    EXPECT_NE(scheduleKey(child->steps), scheduleKey(parent.steps));
    EXPECT_EQ(schedule::replay(dag, child->steps).toString(), child->state.toString());
    EXPECT_EQ(child->sketchLength, parent.sketchLength);
    ++changed[kind];
  }
  for (auto kind : {MutationKind::TileSize, MutationKind::AutoUnroll, MutationKind::Parallel}) EXPECT_GT(changed[kind], 20) << int(kind);
}

namespace {

/// On how many of seeds 1..10 a search of `trials` with the model finds the planted optimum.
int seedsFindingTheOptimum(bool learnedModel, int64_t trials, std::string* trace) {
  auto task = makeMeasureTask("matmul", landscapeMatmul());
  int found = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    tune::autotvm::XGBoostOptions xgboost;
    xgboost.seed = seed;
    std::shared_ptr<CostModel> model = learnedModel ? std::shared_ptr<CostModel>(std::make_shared<XGBoostStateModel>(searchMachine(), xgboost))
                                                    : std::make_shared<RandomCostModel>(seed);
    SketchPolicy policy(task->dag, model, smallSearch(seed));
    LandscapeMeasurer measurer;
    TuneAutoOptions o;
    o.nTrial = trials;
    o.batchSize = 32;
    auto result = tuneAutoTask(task, task->dag.flopCount(), policy, measurer, measurer, o);
    double best = result.bestFlopsPerSecond / 1e9;
    *trace += fmt::format(" {:.1f}", best);
    found += best >= ansortest::kPlantedOptimum * 0.999;
  }
  return found;
}

/// Seeds (of 10) on which a run of 8 trials, a good schedule measured first as a network's run
/// measures its default schedule, finds a schedule within 10% of that one's speed or faster;
/// `trace` gets each seed's best searched speed over the first one's. The good schedule stands
/// for a default: the best of 2,000 random states on the landscape.
int seedsNearTheDefault(int64_t neighbourTrials, std::string* trace) {
  auto task = makeMeasureTask("matmul", landscapeMatmul());
  std::vector<schedule::StepPtr> defaultSteps;
  double defaultScore = 0;
  {
    std::mt19937_64 rng(99);
    auto sketches = generateSketches(task->dag);
    SplitFactorizations factorizations;
    for (int i = 0; i < 2000; ++i) {
      auto s = annotateRandomly(task->dag, sketches[size_t(i) % sketches.size()], factorizations, rng);
      if (double score = landscape(s.state); score > defaultScore) {
        defaultScore = score;
        defaultSteps = s.steps;
      }
    }
  }
  int near = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    tune::autotvm::XGBoostOptions xgboost;
    xgboost.seed = seed;
    SketchPolicyOptions options = smallSearch(seed);
    options.neighbourTrials = neighbourTrials;
    SketchPolicy policy(task->dag, std::make_shared<XGBoostStateModel>(searchMachine(), xgboost), options);
    LandscapeMeasurer measurer;
    TuneAutoOptions o;
    o.nTrial = 8;
    o.batchSize = 8;
    o.measureFirst = defaultSteps;
    double bestSearched = 0;
    const std::string defaultKey = scheduleKey(defaultSteps);
    tuneAutoTask(task, task->dag.flopCount(), policy, measurer, measurer, o, {}, [&](const MeasureInput& input, const MeasureResult& r) {
      if (scheduleKey(input.steps) != defaultKey) bestSearched = std::max(bestSearched, task->dag.flopCount() / r.cost() / 1e9);
    });
    *trace += fmt::format(" {:.2f}", bestSearched / defaultScore);
    near += bestSearched >= 0.9 * defaultScore;
  }
  return near;
}

}  // namespace

// The two searches are two tests, so that ctest runs them side by side (under the sanitizers
// they took 127 s together).
TEST(AnsorSketchPolicy, FindsThePlantedOptimumWithin240TrialsOnNineOfTenSeeds) {
  std::string learned;
  int withModel = seedsFindingTheOptimum(true, 240, &learned);
  std::printf("[ search   ] planted optimum in 240 trials: %d of 10 seeds with the XGBoost model (best:%s)\n", withModel, learned.c_str());
  EXPECT_GE(withModel, 9) << "best per seed:" << learned;
}

TEST(AnsorSketchPolicy, RandomScoresMissThePlantedOptimumOnMoreSeeds) {
  // The model is what finds it: the same search with random scores mostly does not, on fewer
  // seeds than the nine the test above requires of the model.
  std::string random;
  int withoutModel = seedsFindingTheOptimum(false, 240, &random);
  std::printf("[ search   ] planted optimum in 240 trials: %d of 10 seeds with random scores (best:%s)\n", withoutModel, random.c_str());
  EXPECT_LT(withoutModel, 9) << "best per seed:" << random;
}

TEST(AnsorSketchPolicy, ASmallBudgetExploresAroundTheMeasuredDefault) {
  // Seven searched trials after a good first schedule (a network's run at 8 trials a task, its
  // default measured first): with a model of one point, the mutations of that schedule come
  // within 10% of it on 10 of 10 seeds; the evolution from random sketch states alone
  // (neighbourTrials 0, TVM's policy) on none (their best is 2% to 61% of its speed).
  std::string withNeighbours, without;
  int nearWith = seedsNearTheDefault(SketchPolicyOptions{}.neighbourTrials, &withNeighbours);
  int nearWithout = seedsNearTheDefault(0, &without);
  std::printf("[ search   ] within 10%% of the default after 8 trials: %d of 10 seeds with its neighbours first (best/default:%s), "
              "%d without (%s)\n",
              nearWith, withNeighbours.c_str(), nearWithout, without.c_str());
  EXPECT_GE(nearWith, 8) << withNeighbours;
  EXPECT_LE(nearWithout, 3) << without;
}

TEST(AnsorTuneLoop, KeepsTheBudgetLogsBeforeLearningAndNeverRepeats) {
  auto task = makeMeasureTask("matmul", landscapeMatmul());
  SketchPolicy inner(task->dag, std::make_shared<RandomCostModel>(3), smallSearch(3));
  std::vector<std::string> logged;
  LoggedFirstPolicy policy(inner, logged);
  LandscapeMeasurer measurer;
  TuneAutoOptions o;
  o.nTrial = 70;
  o.batchSize = 16;
  std::vector<MeasuredSchedule> log;
  auto first = tuneAutoTask(task, task->dag.flopCount(), policy, measurer, measurer, o, {},
                            [&](const MeasureInput& input, const MeasureResult& r) {
                              logged.push_back(scheduleKey(input.steps));
                              log.push_back({input.steps, task->dag.flopCount() / r.cost()});
                            });
  EXPECT_EQ(first.trials, 70);
  EXPECT_EQ(logged.size(), 70u);
  EXPECT_EQ(std::set<std::string>(logged.begin(), logged.end()).size(), 70u);

  // Resumed with a fresh policy from the log: the 70 count, none is proposed again.
  SketchPolicy resumedInner(task->dag, std::make_shared<RandomCostModel>(4), smallSearch(4));
  std::vector<std::string> more;
  LoggedFirstPolicy resumedPolicy(resumedInner, more);
  resumedPolicy.resumed = log.size();
  o.nTrial = 100;
  auto second = tuneAutoTask(task, task->dag.flopCount(), resumedPolicy, measurer, measurer, o, log,
                             [&](const MeasureInput& input, const MeasureResult&) { more.push_back(scheduleKey(input.steps)); });
  EXPECT_EQ(second.trials, 30);
  EXPECT_GE(second.bestFlopsPerSecond, first.bestFlopsPerSecond);
  for (auto& key : more) EXPECT_EQ(std::count(logged.begin(), logged.end(), key), 0);
}

TEST(AnsorTuneLoop, MeasuresTheGivenScheduleFirst) {
  // The default schedule goes first (the caller's measureFirst), counts towards the budget, and
  // the policy learns of it, so it is never proposed again.
  auto task = makeMeasureTask("matmul", landscapeMatmul());
  SketchPolicy policy(task->dag, std::make_shared<RandomCostModel>(6), smallSearch(6));
  LandscapeMeasurer measurer;
  std::vector<schedule::StepPtr> first = {std::make_shared<schedule::SplitStep>("C", "i", std::vector<int64_t>{4})};
  TuneAutoOptions o;
  o.nTrial = 20;
  o.batchSize = 8;
  o.measureFirst = first;
  std::vector<std::string> logged;
  auto onTrial = [&](const MeasureInput& input, const MeasureResult&) { logged.push_back(scheduleKey(input.steps)); };
  auto r = tuneAutoTask(task, task->dag.flopCount(), policy, measurer, measurer, o, {}, onTrial);
  EXPECT_EQ(r.trials, 20);
  ASSERT_EQ(logged.size(), 20u);
  EXPECT_EQ(logged[0], scheduleKey(first));
  EXPECT_EQ(std::count(logged.begin(), logged.end(), scheduleKey(first)), 1);
  // A later round of the same task without it: the policy does not propose it either.
  o.measureFirst.clear();
  tuneAutoTask(task, task->dag.flopCount(), policy, measurer, measurer, o, {}, onTrial);
  EXPECT_EQ(logged.size(), 40u);
  EXPECT_EQ(std::count(logged.begin(), logged.end(), scheduleKey(first)), 1);
}

TEST(AnsorSearch, TheMeasuredDefaultScheduleIsMutatedInItsTileSizes) {
  // The default schedule is in no sketch; measured, its splits become holes the evolution
  // mutates, so that the search explores around it.
  auto dag = landscapeMatmul();
  auto defaultSteps = ops::defaultCpuSchedule(dag);
  auto shape = [](const std::vector<schedule::StepPtr>& steps) {
    auto j = schedule::stepsToJson(steps);
    for (auto& step : j)
      if (step["step"] == "split") step.erase("factors");
    return j.dump();
  };
  size_t splits = 0;
  for (auto& step : defaultSteps) splits += dynamic_cast<const schedule::SplitStep*>(step.get()) != nullptr;
  ASSERT_GE(splits, 1u) << schedule::printSteps(defaultSteps);
  SketchPolicyOptions o = smallSearch(11);
  o.measuredRatio = 0.5;
  SketchPolicy policy(dag, std::make_shared<RandomCostModel>(11), o);
  policy.update({{defaultSteps, 1e9}});
  ASSERT_EQ(policy.measuredBest().size(), 1u);
  int neighbours = 0;
  for (int round = 0; round < 4; ++round)
    for (auto& steps : policy.nextBatch(16))
      if (shape(steps) == shape(defaultSteps)) {
        ++neighbours;
        EXPECT_NE(schedule::stepsToJson(steps).dump(), schedule::stepsToJson(defaultSteps).dump());
        EXPECT_NO_THROW(schedule::replay(dag, steps));
      }
  EXPECT_GE(neighbours, 1) << "no proposal kept the default's structure with other tile sizes";
}

TEST(AnsorTuneLoop, CandidatesFarSlowerThanTheBestAreTimedByOneCall) {
  // Each batch's candidates carry a stop bound of 4x the best cost measured before the batch
  // (in this call, or before it as the caller says), so the runner times a far slower one once.
  auto task = makeMeasureTask("matmul", landscapeMatmul());
  SketchPolicy policy(task->dag, std::make_shared<RandomCostModel>(3), smallSearch(3));
  BoundRecorder measurer;
  TuneAutoOptions o;
  o.nTrial = 24;
  o.batchSize = 8;
  tuneAutoTask(task, task->dag.flopCount(), policy, measurer, measurer, o);
  ASSERT_EQ(measurer.batchBounds.size(), 3u);
  double best = std::numeric_limits<double>::infinity();
  for (size_t b = 0; b < 3; ++b) {
    for (double bound : measurer.batchBounds[b]) EXPECT_DOUBLE_EQ(bound, b == 0 ? 0.0 : kStopAboveBestFactor * best) << "batch " << b;
    for (double c : measurer.batchCosts[b]) best = std::min(best, c);
  }
  // A later round that knows an earlier best bounds its first batch too.
  o.nTrial = 8;
  o.bestSecondsBefore = best / 2;
  tuneAutoTask(task, task->dag.flopCount(), policy, measurer, measurer, o);
  for (double bound : measurer.batchBounds.back()) EXPECT_DOUBLE_EQ(bound, kStopAboveBestFactor * best / 2);
}

TEST(AnsorTuneLoop, StopsEarlyWithoutImprovement) {
  auto task = makeMeasureTask("matmul", landscapeMatmul());
  SketchPolicy policy(task->dag, std::make_shared<RandomCostModel>(5), smallSearch(5));
  LandscapeMeasurer measurer;
  TuneAutoOptions o;
  o.nTrial = 100000;
  o.batchSize = 8;
  o.earlyStopping = 24;
  auto r = tuneAutoTask(task, task->dag.flopCount(), policy, measurer, measurer, o);
  EXPECT_TRUE(r.stoppedEarly);
  EXPECT_LT(r.trials, 100000);
}

TEST(AnsorTuneLoop, AResumedRunRestoresTheCostModel) {
  // A run of 64 trials, then a fresh policy and model resumed from its log: the model predicts
  // exactly what the original's did (TVM's resume does not restore it).
  auto task = makeMeasureTask("matmul", landscapeMatmul());
  LandscapeMeasurer measurer;
  TuneAutoOptions o;
  o.nTrial = 64;
  o.batchSize = 16;
  auto original = std::make_shared<XGBoostStateModel>(searchMachine());
  SketchPolicy first(task->dag, original, smallSearch(8));
  std::vector<MeasuredSchedule> log;
  tuneAutoTask(task, task->dag.flopCount(), first, measurer, measurer, o, {}, [&](const MeasureInput& input, const MeasureResult& r) {
    log.push_back({input.steps, task->dag.flopCount() / r.cost()});
  });
  auto restored = std::make_shared<XGBoostStateModel>(searchMachine());
  SketchPolicy second(task->dag, restored, smallSearch(9));
  auto resumed = tuneAutoTask(task, task->dag.flopCount(), second, measurer, measurer, o, log);
  EXPECT_EQ(resumed.trials, 0);  // the log already holds the budget
  EXPECT_EQ(restored->samples(), original->samples());
  ASSERT_TRUE(restored->fitted() && original->fitted());  // not two equal random streams
  SplitFactorizations factorizations;
  std::mt19937_64 rng(10);
  std::vector<AnnotatedState> probes;
  for (size_t i = 0; i < 50; ++i) probes.push_back(annotateRandomly(task->dag, second.sketches()[i % second.sketches().size()], factorizations, rng));
  std::vector<const schedule::State*> states;
  for (auto& p : probes) states.push_back(&p.state);
  EXPECT_EQ(restored->predict(states), original->predict(states));
}
