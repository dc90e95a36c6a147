// Template tuning without measurement: config spaces (knob policies, index <-> config,
// entity JSON), the CPU templates (their spaces hold the default schedule as the fallback,
// every config instantiates or fails cleanly), the basic tuners and the tuning loop, driven by
// a deterministic synthetic cost.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "common/ErrorText.h"
#include "ops/Broadcast.h"
#include "ops/Conv2d.h"
#include "ops/Dense.h"
#include "ops/Elementwise.h"
#include "ops/Schedules.h"
#include "passes/Lower.h"
#include "support/TempDir.h"
#include "tune/RecordLog.h"
#include "tune/RecordQueries.h"
#include "tune/Confirmation.h"
#include "tune/autotvm/BasicTuners.h"
#include "tune/autotvm/ConfigSpace.h"
#include "tune/autotvm/CpuTemplates.h"
#include "tune/autotvm/ResumedTrials.h"
#include "tune/autotvm/TuneTask.h"

using namespace tessel;
using namespace tessel::tune;
using namespace tessel::tune::autotvm;
using namespace tessel::testsupport;

namespace {

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

TEST(ConfigSpace, SplitPoliciesCoverTheExtent) {
  SplitOptions factors;
  factors.numOutputs = 3;
  auto exact = splitCandidates(64, factors);
  EXPECT_EQ(exact.size(), 28u);  // ordered pairs of divisors of 64 whose product divides it: C(7+1, 2)
  for (auto& p : exact) EXPECT_EQ(product(p), 64);

  SplitOptions power2;
  power2.policy = SplitPolicy::Power2;
  for (auto& p : splitCandidates(56, power2)) {
    EXPECT_EQ(p[0], (56 + p[1] - 1) / p[1]);  // the outer part rounds up
    EXPECT_EQ(p[1] & (p[1] - 1), 0);
  }
  SplitOptions verbose;
  verbose.policy = SplitPolicy::Verbose;
  verbose.maxFactor = 16;
  std::set<int64_t> inner;
  for (auto& p : splitCandidates(56, verbose)) inner.insert(p[1]);
  EXPECT_EQ(inner, (std::set<int64_t>{1, 2, 4, 7, 8, 14, 16}));

  SplitOptions filtered;
  filtered.filter = [](const std::vector<int64_t>& p) { return p[1] % 2 == 0; };
  filtered.include = {{3, 5}};
  auto f = splitCandidates(12, filtered);
  EXPECT_EQ(f, (std::vector<std::vector<int64_t>>{{6, 2}, {3, 4}, {3, 5}, {2, 6}, {1, 12}}));
}

ConfigSpace smallSpace() {
  ConfigSpace space;
  space.defineSplit("tile", 12);  // 6 options
  space.defineReorder("order", 3);  // 6
  space.defineAnnotate("ann", 2, "try_unroll");  // 4
  space.defineKnob("flag", {false, true});  // 2
  return space;
}

TEST(ConfigSpace, IndicesAndEntitiesRoundTrip) {
  ConfigSpace space = smallSpace();
  ASSERT_EQ(space.size(), 6u * 6 * 4 * 2);
  std::set<std::string> seen;
  for (uint64_t i = 0; i < space.size(); ++i) {
    ConfigEntity c = space.get(i);
    EXPECT_EQ(space.fromChoices(c.choices()).index(), i);
    auto back = space.fromEntityJson(c.toJson()["entity"]);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->index(), i);
    seen.insert(c.toJson().dump());
  }
  EXPECT_EQ(seen.size(), space.size());
  EXPECT_EQ(space.get(0).split("tile"), (std::vector<int64_t>{12, 1}));
  EXPECT_EQ(space.get(0).order("order"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(space.knob("ann").options[1], (nlohmann::json{"none", "unroll"}));

  expectContains(errorOf([&] { space.get(space.size()); }), "outside the space of 288 configs");
  std::string unknown = errorOf([&] { space.get(0).value("tile_x"); });
  expectContains(unknown, "no knob 'tile_x'");
  expectContains(unknown, "tile, order, ann, flag");
  expectContains(errorOf([&] { space.defineKnob("flag", {1}); }), "knob 'flag' is defined twice");
  expectContains(errorOf([&] { ConfigSpace s; s.defineReorder("r", 2, "sorted"); }), "unknown policy 'sorted'");
  // An entity from another space is not silently mapped.
  nlohmann::json wrong = space.get(5).toJson()["entity"];
  wrong[0][0] = "tile_y";
  EXPECT_FALSE(space.fromEntityJson(wrong).has_value());
}

te::ComputeDAG convBiasRelu(ops::Layout layout, int64_t size = 14, int64_t in = 32, int64_t out = 64, int64_t kernel = 3) {
  bool nhwc = layout == ops::Layout::NHWC;
  auto data = te::placeholder(nhwc ? std::vector<int64_t>{1, size, size, in} : std::vector<int64_t>{1, in, size, size},
                              DataType::float32(), "data");
  auto weight = te::placeholder(nhwc ? std::vector<int64_t>{kernel, kernel, in, out} : std::vector<int64_t>{out, in, kernel, kernel},
                                DataType::float32(), "weight");
  auto bias = te::placeholder(nhwc ? std::vector<int64_t>{out} : std::vector<int64_t>{out, 1, 1}, DataType::float32(), "bias");
  ops::Conv2dAttrs a;
  a.padding = {kernel / 2, kernel / 2, kernel / 2, kernel / 2};
  a.layout = layout;
  auto y = ops::relu(ops::add(ops::conv2d(data, weight, a), bias));
  return te::ComputeDAG({y}, {data, weight, bias});
}

te::ComputeDAG depthwise(ops::Layout layout) {
  bool nhwc = layout == ops::Layout::NHWC;
  auto data = te::placeholder(nhwc ? std::vector<int64_t>{1, 14, 14, 32} : std::vector<int64_t>{1, 32, 14, 14},
                              DataType::float32(), "data");
  auto weight = te::placeholder(nhwc ? std::vector<int64_t>{3, 3, 32, 1} : std::vector<int64_t>{32, 1, 3, 3},
                                DataType::float32(), "weight");
  ops::Conv2dAttrs a;
  a.padding = {1, 1, 1, 1};
  a.layout = layout;
  return te::ComputeDAG({ops::relu(ops::depthwiseConv2d(data, weight, a))}, {data, weight});
}

te::ComputeDAG denseLayer() {
  auto data = te::placeholder({1, 512}, DataType::float32(), "data");
  auto weight = te::placeholder({100, 512}, DataType::float32(), "weight");
  return te::ComputeDAG({ops::dense(data, weight)}, {data, weight});
}

TEST(CpuTemplates, EachAnchorKindGetsItsTemplateWithTheDefaultScheduleAsFallback) {
  struct Case {
    te::ComputeDAG dag;
    std::string templateName;
  };
  std::vector<Case> cases = {{convBiasRelu(ops::Layout::NHWC), "conv2d_nhwc.x86"},
                             {convBiasRelu(ops::Layout::NCHW), "conv2d_nchw.x86"},
                             {depthwise(ops::Layout::NHWC), "depthwise_conv2d_nhwc.x86"},
                             {depthwise(ops::Layout::NCHW), "depthwise_conv2d_nchw.x86"},
                             {denseLayer(), "dense.x86"}};
  for (const Case& c : cases) {
    ASSERT_EQ(cpuTemplateFor(c.dag, target::Target::host()).value_or(""), c.templateName);
    auto task = makeCpuTuningTask("t", c.dag);
    EXPECT_EQ(task->templateName, c.templateName);
    uint64_t minimum = c.templateName == "dense.x86" ? 3 : c.templateName.find("depthwise") == 0 ? 100 : 500;
    EXPECT_GT(task->space->size(), minimum) << c.templateName << "\n" << task->space->str();
    auto fallback = task->instantiate(task->space->get(task->fallbackIndex));
    EXPECT_EQ(schedule::stepsToJson(fallback), schedule::stepsToJson(ops::defaultCpuSchedule(c.dag))) << c.templateName;
  }
  auto pool = te::placeholder({1, 8, 8, 4}, DataType::float32(), "x");
  EXPECT_FALSE(cpuTemplateFor(te::ComputeDAG({ops::relu(pool)}, {pool}), target::Target::host()).has_value());
  std::string wrong = errorOf([] { makeCpuTuningTask("t", denseLayer(), target::Target::host(), "conv2d_nhwc.x86"); });
  expectContains(wrong, "template 'conv2d_nhwc.x86' does not fit");
  expectContains(wrong, "dense.x86");
}

TEST(CpuTemplates, SpacesLeaveOutWhatCannotWin) {
  // 64 output channels: only the machine's widest vectors (16 lanes on AVX-512); a 1x1 kernel:
  // one order of its reduction loops (ry and rx have one iteration each), a 3x3 kernel: all six.
  const auto avx512 = target::Target::parse("cpu -mcpu=skylake-avx512");
  auto pointwise = makeCpuTuningTask("t", convBiasRelu(ops::Layout::NHWC, 14, 32, 64, 1), avx512);
  auto threeByThree = makeCpuTuningTask("t", convBiasRelu(ops::Layout::NHWC, 14, 32, 64, 3), avx512);
  for (const auto& task : {pointwise, threeByThree}) {
    for (const auto& option : task->space->knob("tile_v").options) EXPECT_EQ(option[2].get<int64_t>(), 16) << option.dump();
    EXPECT_GE(task->unprunedSize, (task == pointwise ? 20 : 3) * task->space->size());
    // The fallback, the default schedule's own tile, is still in the space.
    auto fallback = task->instantiate(task->space->get(task->fallbackIndex));
    EXPECT_FALSE(fallback.empty());
  }
  EXPECT_EQ(pointwise->space->knob("reorder_reduce").options.size(), 1u);
  EXPECT_EQ(threeByThree->space->knob("reorder_reduce").options.size(), 6u);
  // 24 channels: 16-lane vectors leave a tail, so narrower ones stay candidates.
  auto awkward = makeCpuTuningTask("t", convBiasRelu(ops::Layout::NHWC, 14, 32, 24, 3), avx512);
  std::set<int64_t> lanes;
  for (const auto& option : awkward->space->knob("tile_v").options) lanes.insert(option[2].get<int64_t>());
  EXPECT_TRUE(lanes.count(8)) << awkward->space->str();
  // The same layers for AVX2 and NEON: the widest vectors are theirs (8 and 4 lanes), nothing wider.
  for (const auto& [text, widest] : {std::pair{"cpu -mcpu=haswell", 8}, std::pair{"cpu -mtriple=aarch64-linux-gnu", 4}}) {
    auto task = makeCpuTuningTask("t", convBiasRelu(ops::Layout::NHWC, 14, 32, 64, 3), target::Target::parse(text));
    for (const auto& option : task->space->knob("tile_v").options) EXPECT_EQ(option[2].get<int64_t>(), widest) << text;
    auto odd = makeCpuTuningTask("t", convBiasRelu(ops::Layout::NHWC, 14, 32, 24, 3), target::Target::parse(text));
    for (const auto& option : odd->space->knob("tile_v").options) EXPECT_LE(option[2].get<int64_t>(), widest) << text;
  }
}

TEST(CpuTemplates, PackedRowTilesThatSpillTheRegistersArePruned) {
  // Packed weights by 32 channels: every tile is 2 vectors of 16 lanes, so a row tile of more
  // than 15 rows (2 x 15 accumulators + 2 weight vectors = 32 registers) would spill.
  auto data = te::placeholder({1, 16, 16, 32}, DataType::float32(), "data");
  auto weight = te::placeholder({2, 3, 3, 32, 32}, DataType::float32(), "weight");
  ops::Conv2dAttrs attrs;
  attrs.layout = ops::Layout::NHWC;
  attrs.padding = {1, 1, 1, 1};
  te::ComputeDAG dag({ops::conv2dPacked(data, weight, attrs)}, {data, weight});
  auto task = makeCpuTuningTask("t", dag, target::Target::parse("cpu -mcpu=skylake-avx512"));
  std::set<int64_t> rows;
  for (const auto& option : task->space->knob("tile_r").options) rows.insert(option[1].get<int64_t>());
  EXPECT_TRUE(rows.count(8)) << task->space->str();
  EXPECT_FALSE(rows.count(16)) << task->space->str();
  EXPECT_GT(task->unprunedSize, task->space->size());
  // On AVX2 the same block is 4 vectors of 8 lanes in 16 registers: at most 3 rows (4 x 3 + 4),
  // so of the 16 rows' splits 1 and 2 remain; the default takes 2 (its broadcast input needs a
  // register: 4 x 2 + 4 + 1), so no tile with a tail is added.
  auto avx2 = makeCpuTuningTask("t", dag, target::Target::parse("cpu -mcpu=haswell"));
  std::set<int64_t> avx2Rows;
  for (const auto& option : avx2->space->knob("tile_r").options) avx2Rows.insert(option[1].get<int64_t>());
  EXPECT_EQ(avx2Rows, (std::set<int64_t>{1, 2})) << avx2->space->str();
}

/// The extent of the parallel loop of the DAG's output stage under `steps` (0: none).
int64_t parallelExtent(const te::ComputeDAG& dag, const std::vector<schedule::StepPtr>& steps) {
  schedule::State state = schedule::replay(dag, steps);
  for (const auto& stage : state.stages())
    if (state.isOutput(stage.name()))
      for (int leaf : stage.leaves)
        if (stage.iterator(leaf).annotation == schedule::Annotation::Parallel) return stage.iterator(leaf).extent;
  return 0;
}

// The parallel decomposition is a knob: the target number of chunks, from the machine's cores
// (the rules' count first, one and 16 per core), the rules' count in the fallback config.
TEST(CpuTemplates, TheParallelChunksKnobFollowsTheCores) {
  te::ComputeDAG dag = convBiasRelu(ops::Layout::NHWC, 28, 32, 64, 3);
  for (const auto& [cores, expected] : {std::pair{2, std::vector<int64_t>{64, 2, 32}}, std::pair{16, std::vector<int64_t>{64, 16, 256}},
                                        std::pair{64, std::vector<int64_t>{256, 64, 1024}}, std::pair{4, std::vector<int64_t>{64, 4}}}) {
    auto target = target::Target::parse(fmt::format("cpu -mcpu=haswell -num-cores={}", cores));
    auto task = makeCpuTuningTask("t", dag, target);
    std::vector<int64_t> options;
    for (const auto& o : task->space->knob("parallel_chunks").options) options.push_back(o.get<int64_t>());
    EXPECT_EQ(options, expected) << cores << " cores";
    ConfigEntity fallback = task->space->get(task->fallbackIndex);
    EXPECT_EQ(fallback.value("parallel_chunks"), ops::cpuScheduleOptionsFor(target).ruleParallelChunks());
    EXPECT_EQ(schedule::stepsToJson(task->instantiate(fallback)),
              schedule::stepsToJson(ops::defaultCpuSchedule(dag, ops::cpuScheduleOptionsFor(target))))
        << cores << " cores";
  }
  // 4 x 16 = 64: the rule's count once. Dense fuses its whole output, and a fused depthwise tile
  // fixes the parallel loop: no knob.
  EXPECT_LT(makeCpuTuningTask("t", denseLayer())->space->knobIndex("parallel_chunks"), 0);
  auto x = te::placeholder({1, 14, 14, 32}, DataType::float32(), "data");
  auto d = te::placeholder({3, 3, 32, 1}, DataType::float32(), "depthwise");
  auto w = te::placeholder({1, 1, 32, 64}, DataType::float32(), "weight");
  ops::Conv2dAttrs same;
  same.padding = {1, 1, 1, 1};
  same.layout = ops::Layout::NHWC;
  ops::Conv2dAttrs pointwise;
  pointwise.layout = ops::Layout::NHWC;
  te::ComputeDAG separable({ops::relu(ops::conv2d(ops::relu(ops::depthwiseConv2d(x, d, same)), w, pointwise))}, {x, d, w});
  ASSERT_TRUE(ops::fusedDepthwiseOf(separable).has_value());
  EXPECT_LT(makeCpuTuningTask("t", separable)->space->knobIndex("parallel_chunks"), 0);
}

// Configs that differ only in parallel_chunks fuse different numbers of outer loops: on 16
// cores, a 28x28 image in 6-column row tiles with a tail (5 of them) and 4 channel blocks has a
// parallel loop of 112 iterations by the rule (64 chunks: its 28 rows are too few, so the channel
// blocks move before the ragged row tiles, which end the fusion, [1, 28, 4 | 5]), 28 for 16
// chunks (the rows are enough, [1, 28 | 5, 4]), and 112 again for 256.
TEST(CpuTemplates, ParallelChunksChangeTheParallelLoop) {
  te::ComputeDAG dag = convBiasRelu(ops::Layout::NHWC, 28, 32, 64, 3);
  auto task = makeCpuTuningTask("t", dag, target::Target::parse("cpu -mcpu=haswell -num-cores=16"));
  ConfigEntity fallback = task->space->get(task->fallbackIndex);
  ASSERT_EQ(fallback.split("tile_r"), (std::vector<int64_t>{5, 6})) << fallback.str();
  ASSERT_EQ(fallback.split("tile_v"), (std::vector<int64_t>{4, 2, 8})) << fallback.str();
  std::vector<size_t> choices = fallback.choices();
  choices[size_t(task->space->knobIndex("weights_outer"))] = *task->space->optionIndex("weights_outer", false);
  std::vector<int64_t> extents;
  for (size_t option = 0; option < 3; ++option) {
    choices[size_t(task->space->knobIndex("parallel_chunks"))] = option;
    extents.push_back(parallelExtent(dag, task->instantiate(task->space->fromChoices(choices))));
  }
  EXPECT_EQ(extents, (std::vector<int64_t>{112, 28, 112}));
}

TEST(CpuTemplates, RandomConfigsLowerOrFailWithAMessage) {
  std::mt19937_64 rng(7);
  for (auto dag : {convBiasRelu(ops::Layout::NHWC), convBiasRelu(ops::Layout::NCHW), depthwise(ops::Layout::NHWC), denseLayer()}) {
    auto task = makeCpuTuningTask("t", dag);
    int lowered = 0;
    for (int i = 0; i < 25; ++i) {
      uint64_t index = std::uniform_int_distribution<uint64_t>(0, task->space->size() - 1)(rng);
      std::string error;
      auto input = instantiateConfig(*task, task->space->get(index), &error);
      if (!input) {
        EXPECT_FALSE(error.empty());
        continue;
      }
      passes::lower(schedule::replay(dag, input->steps), "candidate");
      ++lowered;
    }
    EXPECT_GT(lowered, 15) << task->templateName;
  }
}

/// A synthetic landscape over a space: each knob prefers one option, with an interaction
/// between the first two knobs, so the optimum is unique and not found knob by knob alone.
double syntheticFlops(const ConfigSpace& space, uint64_t index) {
  auto c = space.get(index).choices();
  double score = 1;
  for (size_t k = 0; k < c.size(); ++k) {
    double n = double(space.knobs()[k].options.size());
    double want = std::fmod(0.37 * double(k + 1), 1.0) * (n - 1);
    score *= 1.0 / (1.0 + std::fabs(double(c[k]) - want));
  }
  if (c.size() >= 2) score *= 1.0 + 0.5 * std::cos(double(c[0]) * 0.7 - double(c[1]) * 0.4);
  return score * 1e11;
}

/// Builds nothing; "runs" a candidate by reading its config index back from the input.
class SyntheticMeasurer : public Builder, public Runner {
 public:
  explicit SyntheticMeasurer(const TuningTask& task) : task_(task) {}
  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) override {
    return std::vector<BuildResult>(inputs.size());
  }
  void discard(const BuildResult&) override {}
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>&) override {
    std::vector<MeasureResult> out;
    for (auto& in : inputs) {
      uint64_t index = nlohmann::json::parse(in.config)["index"].get<uint64_t>();
      MeasureResult r;
      r.costs = {task_.flops / syntheticFlops(*task_.space, index)};
      out.push_back(r);
    }
    return out;
  }
  bool needsReference(const MeasureTask&) const override { return false; }
  void setReference(const MeasureTask&, const BuildResult&) override {}

 private:
  const TuningTask& task_;
};

/// Schedule number `n` of denseLayer(): a step list that replays on it, another for every n.
std::vector<schedule::StepPtr> numberedSchedule(uint64_t n) {
  return {std::make_shared<schedule::PragmaStep>("T_matmul_NT", "i", "auto_unroll_max_step", std::to_string(n))};
}

/// A task over smallSpace() whose configs instantiate each to a schedule of its own.
TuningTaskPtr syntheticTask() {
  auto task = std::make_shared<TuningTask>();
  task->name = "synthetic";
  task->templateName = "synthetic";
  task->measure = makeMeasureTask("synthetic", denseLayer());
  task->flops = 1e6;
  task->space = std::make_shared<ConfigSpace>(smallSpace());
  task->instantiate = [](const ConfigEntity& c) { return numberedSchedule(c.index()); };
  return task;
}

TEST(BasicTuners, GridSearchVisitsEveryConfigExactlyOnceAndRandomNeverRepeats) {
  auto task = syntheticTask();
  for (const std::string name : {"gridsearch", "random", "ga"}) {
    auto tuner = makeTuner(name, task, 3);
    std::vector<uint64_t> all;
    while (tuner->hasNext()) {
      auto batch = tuner->nextBatch(7);
      ASSERT_FALSE(batch.empty()) << name;
      std::vector<Trial> trials;
      for (auto i : batch) trials.push_back({i, syntheticFlops(*task->space, i)});
      tuner->update(trials);
      all.insert(all.end(), batch.begin(), batch.end());
    }
    std::set<uint64_t> unique(all.begin(), all.end());
    EXPECT_EQ(all.size(), task->space->size()) << name;
    EXPECT_EQ(unique.size(), task->space->size()) << name;
    EXPECT_TRUE(tuner->nextBatch(4).empty()) << name;
    if (name == "gridsearch") {
      EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
    }
  }
  expectContains(errorOf([&] { makeTuner("bayes", task); }), "Invalid tuner: bayes");
  for (const std::string name : {"xgb", "xgb_knob", "xgb_itervar", "xgb_curve", "xgb-rank", "xgb-reg", "xgb_knob-reg"})
    EXPECT_NE(makeTuner(name, task), nullptr) << name;
  for (const std::string name : {"xgb_flops", "xgb-l2", "xgboost", "xgb_"})
    expectContains(errorOf([&] { makeTuner(name, task); }), "Invalid tuner: " + name);
}

TEST(BasicTuners, GeneticAlgorithmImprovesOverItsFirstGeneration) {
  // On a conv2d template's real space, with the synthetic landscape.
  auto task = makeCpuTuningTask("conv", convBiasRelu(ops::Layout::NHWC, 56, 64, 64));
  int improved = 0;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    GATunerOptions o;
    o.populationSize = 32;
    GATuner ga(task, seed, o);
    double firstBest = 0, laterBest = 0;
    for (int generation = 0; generation < 8; ++generation) {
      std::vector<Trial> trials;
      for (auto i : ga.nextBatch(32)) trials.push_back({i, syntheticFlops(*task->space, i)});
      for (auto& t : trials) (generation == 0 ? firstBest : laterBest) = std::max(generation == 0 ? firstBest : laterBest, t.flopsPerSecond);
      ga.update(trials);
    }
    improved += laterBest > firstBest;
  }
  EXPECT_EQ(improved, 5);
}

TEST(TuneLoop, RespectsBudgetEarlyStoppingAndResumedTrials) {
  auto task = syntheticTask();
  SyntheticMeasurer measurer(*task);
  TuneTaskOptions o;
  o.progressTo = nullptr;
  o.confirmTop = 0;  // the confirmation has its own tests

  // The budget is capped by the space; every config is measured once, the best is the optimum.
  o.nTrial = 100000;
  auto grid = makeTuner("gridsearch", task);
  int calls = 0;
  auto all = tuneTask(task, *grid, measurer, measurer, o, {}, [&](const ConfigEntity&, const MeasureInput&, const MeasureResult& r) {
    ++calls;
    EXPECT_TRUE(r.ok());
  });
  EXPECT_EQ(all.trials, int64_t(task->space->size()));
  EXPECT_EQ(calls, all.trials);
  double optimum = 0;
  for (uint64_t i = 0; i < task->space->size(); ++i) optimum = std::max(optimum, syntheticFlops(*task->space, i));
  EXPECT_NEAR(all.bestFlopsPerSecond, optimum, optimum * 1e-9);

  // Early stopping: the grid's best comes at some index; it stops that many trials later.
  o.earlyStopping = 10;
  auto early = makeTuner("gridsearch", task);
  auto stopped = tuneTask(task, *early, measurer, measurer, o);
  EXPECT_TRUE(stopped.stoppedEarly);
  EXPECT_LT(stopped.trials, all.trials);

  // Resumed trials count towards the budget and are never measured again.
  o.earlyStopping = 0;
  o.nTrial = 50;
  std::vector<Trial> resumed;
  for (uint64_t i = 0; i < 20; ++i) resumed.push_back({i * 3, syntheticFlops(*task->space, i * 3)});
  auto random = makeTuner("random", task, 1);
  std::set<uint64_t> measured;
  auto rest = tuneTask(task, *random, measurer, measurer, o, resumed,
                       [&](const ConfigEntity& c, const MeasureInput&, const MeasureResult&) { measured.insert(c.index()); });
  EXPECT_EQ(rest.trials, 30);
  for (auto& t : resumed) EXPECT_EQ(measured.count(t.index), 0u);
}

// ---- resume by entity ----------------------------------------------------------------------

/// A record of `config` as a tessel whose template had no knob `dropped` wrote it: the entity
/// without that knob, the index counted over the other knobs, and the given steps.
TuningRecord recordWithoutKnob(const TuningTask& task, const ConfigEntity& config, const std::string& dropped,
                               std::vector<schedule::StepPtr> steps, double cost) {
  nlohmann::json entity = nlohmann::json::array();
  int64_t index = 0, stride = 1;
  for (size_t k = 0; k < task.space->knobs().size(); ++k) {
    const Knob& knob = task.space->knobs()[k];
    if (knob.name == dropped) continue;
    entity.push_back(config.toJson()["entity"][k]);
    index += int64_t(config.choices()[k]) * stride;
    stride *= int64_t(knob.options.size());
  }
  MeasureResult r;
  r.costs = {cost};
  return makeRecord(MeasureInput{task.measure, std::move(steps), ""}, r, task.templateName, nullptr, RecordConfig{index, entity});
}

/// A record of `config` as this space writes it, with its entity edited by `edit`.
TuningRecord recordWithEntity(const TuningTask& task, const ConfigEntity& config, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json entity = config.toJson()["entity"];
  edit(entity);
  MeasureResult r;
  r.costs = {1e-3};
  return makeRecord(MeasureInput{task.measure, task.instantiate(config), ""}, r, task.templateName, nullptr,
                    RecordConfig{int64_t(config.index()), entity});
}

/// Writes a log of 12 random configs of `task` as a tessel whose template lacked knob `dropped`
/// (it could only write that knob's first option), plus a forged record: `forged`'s steps with
/// `dropped` at its second option, under an entity without it. Reads the log back as --resume
/// does and checks that the 12 resume onto their configs and the forged one is left out.
/// Returns how many of the 12 have another index in today's space.
int expectResumedWithoutKnob(const TuningTask& task, const std::string& dropped, ConfigEntity forged) {
  const ConfigSpace& space = *task.space;
  std::mt19937_64 rng(3);
  std::vector<TuningRecord> log;
  std::vector<uint64_t> expected;
  int renumbered = 0;
  while (expected.size() < 12) {
    uint64_t index = std::uniform_int_distribution<uint64_t>(0, space.size() - 1)(rng);
    ConfigEntity config = space.get(index);
    if (config.value(dropped) != space.knob(dropped).options[0]) continue;
    std::vector<schedule::StepPtr> steps;
    try {
      steps = task.instantiate(config);
    } catch (const Error&) {
      continue;
    }
    log.push_back(recordWithoutKnob(task, config, dropped, steps, 1e-3 * double(expected.size() + 1)));
    renumbered += log.back().config->index != int64_t(index);
    expected.push_back(index);
  }
  std::vector<size_t> choices = forged.choices();
  choices[size_t(space.knobIndex(dropped))] = 1;
  ConfigEntity second = space.fromChoices(choices);
  log.push_back(recordWithoutKnob(task, second, dropped, task.instantiate(second), 1e-6));

  // Through a file, as --resume reads it: the steps compared are those read back.
  TempDir dir;
  writeRecordLog(dir.path() + "/old.log", log);
  ResumedTrials resumed = resumedTrials(task, readRecords(dir.path() + "/old.log").records);
  EXPECT_EQ(resumed.trials.size(), expected.size()) << dropped;
  for (size_t i = 0; i < std::min(expected.size(), resumed.trials.size()); ++i) {
    EXPECT_EQ(resumed.trials[i].index, expected[i]) << dropped << ": record " << i;
    EXPECT_DOUBLE_EQ(resumed.trials[i].flopsPerSecond, task.flops / (1e-3 * double(i + 1)));
  }
  EXPECT_EQ(resumed.records, int64_t(log.size()));
  EXPECT_EQ(resumed.leftOutCount(), 1) << resumed.leftOutLine();
  expectContains(resumed.leftOutLine(), "1 of 13 records left out");
  expectContains(resumed.leftOutLine(), "written without knob '" + dropped + "', and not the schedule of its first option (1)");
  return renumbered;
}

// A log written before a knob existed (its entities one knob short, its indices counted without
// it) resumes onto the configs with that knob at its first option, which reproduce the schedule
// each record measured; a record whose steps are not that schedule is left out, not mis-mapped.
TEST(ResumedTrials, ALogWrittenForASpaceWithOneKnobFewerResumesOntoTheSameConfigs) {
  auto task = makeCpuTuningTask("conv", convBiasRelu(ops::Layout::NHWC, 14, 32, 64, 3));
  ASSERT_EQ(task->space->knob("unroll_kw").options[0], false);
  int renumbered = expectResumedWithoutKnob(*task, "unroll_kw", task->space->get(task->fallbackIndex));
  EXPECT_GT(renumbered, 0) << "the test needs records whose index differs in today's space";
}

// The log of a tessel before parallel_chunks: its records land on the rules' chunk count.
TEST(ResumedTrials, ALogWrittenBeforeParallelChunksResumesOntoTheRulesCount) {
  te::ComputeDAG dag = convBiasRelu(ops::Layout::NHWC, 28, 32, 64, 3);
  auto task = makeCpuTuningTask("conv", dag, target::Target::parse("cpu -mcpu=haswell -num-cores=16"));
  // The forged record: 16 chunks where the weights are not outer (a parallel loop of 28, not 112).
  std::vector<size_t> choices = task->space->get(task->fallbackIndex).choices();
  choices[size_t(task->space->knobIndex("weights_outer"))] = *task->space->optionIndex("weights_outer", false);
  expectResumedWithoutKnob(*task, "parallel_chunks", task->space->fromChoices(choices));
}

// Entities that do not fit today's space are counted, by reason, and never resumed; records of
// another template or task, and confirmations (a config measured again), are not this task's trials.
TEST(ResumedTrials, EntitiesThatDoNotFitAreLeftOutAndCounted) {
  auto task = makeCpuTuningTask("conv", convBiasRelu(ops::Layout::NHWC, 14, 32, 64, 3));
  ConfigEntity fallback = task->space->get(task->fallbackIndex);
  int tileV = task->space->knobIndex("tile_v");
  std::vector<TuningRecord> log = {
      recordWithEntity(*task, fallback, [](nlohmann::json&) {}),
      recordWithEntity(*task, fallback, [&](nlohmann::json& e) { e[size_t(tileV)][2] = {1, 1, 64}; }),  // no such option
      recordWithEntity(*task, fallback, [&](nlohmann::json& e) { e[size_t(tileV)][2] = {1, 1, 3}; }),
      recordWithEntity(*task, fallback, [](nlohmann::json& e) { e.push_back({"tile_z", "split", {1, 2}}); }),
      recordWithEntity(*task, fallback, [](nlohmann::json& e) { e = "tile_v=16"; }),
  };
  TuningRecord confirmed = recordWithEntity(*task, fallback, [](nlohmann::json&) {});
  confirmed.result.confirmed = true;
  TuningRecord otherTemplate = recordWithEntity(*task, fallback, [&](nlohmann::json& e) { e[size_t(tileV)][2] = {1, 1, 3}; });
  otherTemplate.task.templateName = "conv2d_nchw.x86";
  log.push_back(confirmed);
  log.push_back(otherTemplate);

  ResumedTrials resumed = resumedTrials(*task, log);
  ASSERT_EQ(resumed.trials.size(), 1u);
  EXPECT_EQ(resumed.trials[0].index, task->fallbackIndex);
  EXPECT_EQ(resumed.records, 5);
  EXPECT_EQ(resumed.leftOut, (std::map<std::string, int64_t>{{"a value of 'tile_v' is not among its options", 2},
                                                             {"knob 'tile_z' is not in the space", 1},
                                                             {"the entity is not a list of [knob, kind, value]", 1}}));
  EXPECT_EQ(resumed.leftOutLine(),
            "--resume: 4 of 5 records left out, their configs are not in today's spaces: a value of 'tile_v' is not among its "
            "options (2); knob 'tile_z' is not in the space (1); the entity is not a list of [knob, kind, value] (1)");
  // The run's line sums its tasks'.
  ResumedTrials total;
  auto perTask = resumedTrialsOfTasks({task, task}, log, total);
  ASSERT_EQ(perTask.size(), 2u);
  EXPECT_EQ(perTask[1].size(), 1u);
  expectContains(total.leftOutLine(), "--resume: 8 of 10 records left out");
  EXPECT_EQ(ResumedTrials{}.leftOutLine(), "");
}

TEST(TuneLoop, TheFallbackConfigIsMeasuredFirstSoTuningNeverLosesToTheDefault) {
  auto task = std::make_shared<TuningTask>(*syntheticTask());
  task->fallbackIndex = 17;
  SyntheticMeasurer measurer(*task);
  TuneTaskOptions o;
  o.nTrial = 5;
  o.progressTo = nullptr;
  o.confirmTop = 0;
  auto tuner = makeTuner("random", task, 4);
  std::vector<uint64_t> order;
  auto r = tuneTask(task, *tuner, measurer, measurer, o, {},
                    [&](const ConfigEntity& c, const MeasureInput&, const MeasureResult&) { order.push_back(c.index()); });
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order[0], 17u);
  EXPECT_GE(r.bestFlopsPerSecond, syntheticFlops(*task->space, 17));
  EXPECT_EQ(std::count(order.begin(), order.end(), 17u), 1);
}

TEST(TuneLoop, ConfigsThatDoNotInstantiateAreErrorRecords) {
  auto base = syntheticTask();
  auto task = std::make_shared<TuningTask>(*base);
  task->instantiate = [](const ConfigEntity& c) -> std::vector<schedule::StepPtr> {
    TESSEL_CHECK(c.index() % 2 == 0, "config {} has no schedule", c.index());
    return numberedSchedule(c.index());
  };
  SyntheticMeasurer measurer(*task);
  TuneTaskOptions o;
  o.nTrial = 40;
  o.progressTo = nullptr;
  auto tuner = makeTuner("gridsearch", task);
  int errors = 0;
  auto r = tuneTask(task, *tuner, measurer, measurer, o, {}, [&](const ConfigEntity& c, const MeasureInput&, const MeasureResult& m) {
    if (c.index() % 2) {
      EXPECT_EQ(m.errorNo, MeasureErrorNo::InstantiationError);
      expectContains(m.errorMessage, "has no schedule");
      ++errors;
    }
  });
  EXPECT_EQ(errors, 20);
  EXPECT_EQ(r.errors, 20);
  EXPECT_EQ(r.bestIndex.value() % 2, 0u);
}


// ---- configs with the same steps ---------------------------------------------------------------

/// The synthetic task whose configs 2k and 2k+1 instantiate to one schedule, number k (as two
/// configs do that differ only in a knob the rules override).
TuningTaskPtr pairedTask() {
  auto task = std::make_shared<TuningTask>(*syntheticTask());
  task->instantiate = [](const ConfigEntity& c) { return numberedSchedule(c.index() / 2); };
  return task;
}

/// Counts how often it builds each schedule (by step list); runs a candidate at its config's
/// synthetic cost, except that with `failThirds` every third schedule's run fails.
class CountingMeasurer : public SyntheticMeasurer {
 public:
  using SyntheticMeasurer::SyntheticMeasurer;
  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) override {
    for (const MeasureInput& in : inputs) ++builds[candidateKey(in.steps)];
    return SyntheticMeasurer::build(inputs);
  }
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& built) override {
    std::vector<MeasureResult> out = SyntheticMeasurer::run(inputs, built);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (failThirds && nlohmann::json::parse(inputs[i].config)["index"].get<uint64_t>() / 2 % 3 == 0)
        out[i] = errorResult(MeasureErrorNo::RuntimeDeviceError, "the kernel crashed");
    return out;
  }
  bool failThirds = false;
  std::map<std::string, int> builds;  ///< schedule -> times built
};

/// A random tuner that keeps every result it is told.
class ListeningTuner : public RandomTuner {
 public:
  using RandomTuner::RandomTuner;
  void update(const std::vector<Trial>& trials) override { told.insert(told.end(), trials.begin(), trials.end()); }
  std::vector<Trial> told;
};

std::string readAll(std::FILE* f) {
  std::rewind(f);
  std::string text;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) text.append(buffer, n);
  return text;
}

// Two configs with one step list are one schedule: built and run once, for the config proposed
// first; the other takes its result (its failure too) as a copy, which is logged with its own
// config and steps, taught to the tuner and counted against the budget.
TEST(TuneLoop, ConfigsWithTheSameStepsAreMeasuredOnce) {
  auto task = pairedTask();
  CountingMeasurer measurer(*task);
  measurer.failThirds = true;
  ListeningTuner tuner(task, 6);
  TuneTaskOptions o;
  o.nTrial = 100000;  // capped by the space: every config is proposed
  o.batchSize = 5;    // odd: some pairs fall in one batch, some in two
  o.confirmTop = 0;   // below
  o.progressPrefix = "[Task  1/1] ";
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> progress(std::tmpfile(), &std::fclose);
  ASSERT_TRUE(progress);
  o.progressTo = progress.get();
  std::map<uint64_t, MeasureResult> logged;
  std::map<uint64_t, size_t> position;  // config -> when it was logged
  auto r = tuneTask(task, tuner, measurer, measurer, o, {}, [&](const ConfigEntity& c, const MeasureInput& in, const MeasureResult& m) {
    EXPECT_EQ(candidateKey(in.steps), candidateKey(numberedSchedule(c.index() / 2))) << c.index();
    EXPECT_TRUE(logged.emplace(c.index(), m).second) << c.index();
    position[c.index()] = position.size();
  });
  const uint64_t configs = task->space->size();
  EXPECT_EQ(r.trials, int64_t(configs));
  EXPECT_EQ(r.duplicates, int64_t(configs / 2));
  ASSERT_EQ(logged.size(), configs);
  EXPECT_EQ(measurer.builds.size(), configs / 2);
  for (const auto& [schedule, times] : measurer.builds) EXPECT_EQ(times, 1) << schedule;
  int64_t failedPairs = 0;
  for (uint64_t k = 0; k < configs / 2; ++k) {
    uint64_t first = position[2 * k] < position[2 * k + 1] ? 2 * k : 2 * k + 1, second = first ^ 1;
    const MeasureResult &measured = logged[first], &copy = logged[second];
    EXPECT_FALSE(measured.sameAs.has_value()) << first;
    ASSERT_TRUE(copy.sameAs.has_value()) << second;
    EXPECT_EQ(*copy.sameAs, int64_t(first));
    EXPECT_EQ(copy.errorNo, measured.errorNo);
    EXPECT_EQ(copy.costs, measured.costs);
    EXPECT_EQ(copy.allCost, 0.0);
    EXPECT_EQ(measured.ok(), k % 3 != 0);
    failedPairs += !measured.ok();
  }
  EXPECT_EQ(r.errors, 2 * failedPairs);
  // The tuner learnt every proposal, a copy at its original's throughput.
  ASSERT_EQ(tuner.told.size(), configs);
  for (const Trial& t : tuner.told) {
    const MeasureResult& m = logged[t.index];
    EXPECT_DOUBLE_EQ(t.flopsPerSecond, m.ok() ? task->flops / m.cost() : 0.0) << t.index;
  }
  expectContains(readAll(progress.get()), "[Task  1/1] 144 duplicates of measured schedules not measured again\n");
}

// A space whose every config is one schedule still ends (each copy counts against the budget),
// after one build: and the confirmation does not measure the fallback against its own copies.
TEST(TuneLoop, ASpaceOfOneScheduleEndsAfterOneBuild) {
  auto task = std::make_shared<TuningTask>(*syntheticTask());
  task->instantiate = [](const ConfigEntity&) { return numberedSchedule(7); };
  CountingMeasurer measurer(*task);
  TuneTaskOptions o;
  o.nTrial = 100000;
  o.progressTo = nullptr;
  o.confirmTop = 3;
  auto tuner = makeTuner("random", task, 2);
  auto r = tuneTask(task, *tuner, measurer, measurer, o);
  EXPECT_EQ(r.trials, int64_t(task->space->size()));
  EXPECT_EQ(r.duplicates, r.trials - 1);
  EXPECT_EQ(measurer.builds, (std::map<std::string, int>{{candidateKey(numberedSchedule(7)), 1}}));
  ASSERT_TRUE(r.confirmedIndex.has_value());
  EXPECT_EQ(*r.confirmedIndex, task->fallbackIndex);
  EXPECT_TRUE(r.withoutRounds) << r.confirmationSummary;
}

// Copies are logged as trials, so a resumed run counts them and never proposes them again;
// a config whose schedule the log measured is a copy of that record, not measured again.
TEST(TuneLoop, AResumedLogWithCopiesMeasuresNothingAgain) {
  auto task = pairedTask();
  TuneTaskOptions o;
  o.batchSize = 5;
  o.confirmTop = 0;
  o.progressTo = nullptr;
  TempDir dir;
  const std::string log = dir.path() + "/tune.log";
  std::set<uint64_t> schedules;  // proposed in either run
  auto logTo = [&](RecordLogWriter& writer) {
    return [&](const ConfigEntity& c, const MeasureInput& in, const MeasureResult& m) {
      schedules.insert(c.index() / 2);
      writer.append(makeRecord(in, m, task->templateName, nullptr, RecordConfig{int64_t(c.index()), c.toJson()["entity"]}));
    };
  };
  CountingMeasurer first(*task);
  first.failThirds = true;
  o.nTrial = 60;
  int64_t copies = 0;
  {
    RecordLogWriter writer(log);
    auto tuner = makeTuner("random", task, 11);
    copies = tuneTask(task, *tuner, first, first, o, {}, logTo(writer)).duplicates;
  }
  ASSERT_GT(copies, 0);
  std::vector<TuningRecord> records = readRecords(log).records;
  ASSERT_EQ(records.size(), 60u);
  EXPECT_EQ(std::count_if(records.begin(), records.end(), [](const TuningRecord& r) { return r.result.sameAs.has_value(); }), copies);
  std::vector<Trial> resumed = resumedTrials(*task, records).trials;
  ASSERT_EQ(resumed.size(), 60u);  // the copies too
  std::map<uint64_t, double> resumedFlops;
  for (const Trial& t : resumed) resumedFlops[t.index] = t.flopsPerSecond;

  // The same budget: nothing left to do.
  CountingMeasurer again(*task);
  auto tuner = makeTuner("random", task, 12);
  EXPECT_EQ(tuneTask(task, *tuner, again, again, o, resumed).trials, 0);
  EXPECT_TRUE(again.builds.empty());

  // A larger one: only schedules the log lacks are built, each once.
  o.nTrial = 200;
  CountingMeasurer more(*task);
  more.failThirds = true;
  int copiesOfTheLog = 0;
  auto moreTuner = makeTuner("random", task, 13);
  auto r = tuneTask(task, *moreTuner, more, more, o, resumed, [&](const ConfigEntity& c, const MeasureInput&, const MeasureResult& m) {
    schedules.insert(c.index() / 2);
    EXPECT_FALSE(resumedFlops.count(c.index())) << c.index() << " was proposed again";
    if (!m.sameAs || !resumedFlops.count(uint64_t(*m.sameAs))) return;
    ++copiesOfTheLog;  // of the record's median cost, or of its failure
    double flops = resumedFlops[uint64_t(*m.sameAs)];
    if (flops > 0) EXPECT_NEAR(task->flops / m.cost(), flops, flops * 1e-12);
    else EXPECT_EQ(m.errorNo, MeasureErrorNo::UnknownError);
  });
  EXPECT_EQ(r.trials, 140);
  EXPECT_GT(copiesOfTheLog, 0);
  for (const auto& [schedule, times] : more.builds) {
    EXPECT_EQ(times, 1) << schedule;
    EXPECT_FALSE(first.builds.count(schedule)) << schedule << " was measured again";
  }
  EXPECT_EQ(first.builds.size() + more.builds.size(), schedules.size());
}


// ---- confirmation under noise ------------------------------------------------------------------

/// Measures with the noise of a busy machine: every repeat is the true cost times 1 + 2%
/// Gaussian noise, and one repeat in twenty is a 10x outlier (a preemption, a page fault storm).
class NoisyMeasurer : public Builder, public Runner {
 public:
  NoisyMeasurer(const TuningTask& task, uint64_t seed) : task_(task), rng_(seed) {}
  double trueCost(uint64_t index) const { return task_.flops / syntheticFlops(*task_.space, index); }
  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) override { return std::vector<BuildResult>(inputs.size()); }
  void discard(const BuildResult&) override {}
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>&) override {
    std::vector<MeasureResult> out;
    std::normal_distribution<double> jitter(0.0, 0.02);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (auto& in : inputs) {
      uint64_t index = nlohmann::json::parse(in.config)["index"].get<uint64_t>();
      MeasureResult r;
      for (int repeat = 0; repeat < 3; ++repeat)
        r.costs.push_back(trueCost(index) * (1 + jitter(rng_)) * (unit(rng_) < 0.05 ? 10.0 : 1.0));
      out.push_back(r);
    }
    return out;
  }
  bool needsReference(const MeasureTask&) const override { return false; }
  void setReference(const MeasureTask&, const BuildResult&) override {}

 private:
  const TuningTask& task_;
  std::mt19937_64 rng_;
};

struct Decision {
  uint64_t index = 0;
  double bestMeasuredTrueCost = 0;
  bool confirmed = false;
};

Decision tuneNoisily(const TuningTaskPtr& task, uint64_t seed) {
  NoisyMeasurer measurer(*task, seed);
  TuneTaskOptions o;
  o.nTrial = 40;
  o.progressTo = nullptr;
  o.seed = seed;
  auto tuner = makeTuner("random", task, seed);
  Decision d;
  d.bestMeasuredTrueCost = std::numeric_limits<double>::infinity();
  tuneTask(task, *tuner, measurer, measurer, o, {}, [&](const ConfigEntity& c, const MeasureInput&, const MeasureResult& r) {
    if (r.confirmed) {
      d.confirmed = true;
      d.index = c.index();
    } else {
      d.bestMeasuredTrueCost = std::min(d.bestMeasuredTrueCost, measurer.trueCost(c.index()));
    }
  });
  return d;
}

TEST(TuneLoop, TheConfirmedBestSurvivesHeavyTailedNoise) {
  auto task = syntheticTask();
  NoisyMeasurer truth(*task, 0);
  int close = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Decision d = tuneNoisily(task, seed);
    ASSERT_TRUE(d.confirmed) << "seed " << seed;
    if (truth.trueCost(d.index) <= 1.05 * d.bestMeasuredTrueCost) ++close;
  }
  EXPECT_GE(close, 19) << "the confirmed best was within 5% of the best measured candidate in only " << close << " of 20 seeds";
}

TEST(TuneLoop, ADefaultThatIsTrulyBestIsNeverReplaced) {
  auto task = std::make_shared<TuningTask>(*syntheticTask());
  NoisyMeasurer truth(*task, 0);
  for (uint64_t i = 0; i < task->space->size(); ++i)
    if (truth.trueCost(i) < truth.trueCost(task->fallbackIndex)) task->fallbackIndex = i;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Decision d = tuneNoisily(task, seed);
    ASSERT_TRUE(d.confirmed) << "seed " << seed;
    EXPECT_EQ(d.index, task->fallbackIndex) << "seed " << seed << ": the true optimum, the default, was replaced";
  }
}

/// The search measures the landscape as it is; the confirmation's rounds then drift (each
/// slower than the last), with the candidate winning three rounds of five by 10% but losing
/// the two slowest: its per-round ratio is 0.9, its median cost higher than the default's.
class DriftingMeasurer : public SyntheticMeasurer {
 public:
  using SyntheticMeasurer::SyntheticMeasurer;
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds) override {
    if (calls_++ == 0) return SyntheticMeasurer::run(inputs, builds);  // the search: one batch
    const int round = calls_ - 2;
    const double fallback[] = {1, 2, 3, 4, 5}, candidate[] = {0.9, 1.8, 3.3, 4.4, 4.5};
    std::vector<MeasureResult> out;
    for (auto& in : inputs) {
      bool isFallback = nlohmann::json::parse(in.config)["index"].get<uint64_t>() == fallbackIndex;
      MeasureResult r;
      r.costs = {(isFallback ? fallback : candidate)[round] * 1e-3};
      out.push_back(r);
    }
    return out;
  }
  uint64_t fallbackIndex = 0;

 private:
  int calls_ = 0;
};

TEST(TuneLoop, AWinnerMustAlsoHaveTheLowerMedianCost) {
  auto task = syntheticTask();
  DriftingMeasurer measurer(*task);
  measurer.fallbackIndex = task->fallbackIndex;
  TuneTaskOptions o;
  o.nTrial = 4;
  o.batchSize = 4;
  o.progressTo = nullptr;
  o.confirmTop = 1;
  o.confirmRounds = 5;
  auto tuner = makeTuner("random", task, 3);
  auto r = tuneTask(task, *tuner, measurer, measurer, o);
  ASSERT_TRUE(r.confirmedIndex.has_value());
  EXPECT_TRUE(r.keptFallback) << r.confirmationSummary;
  EXPECT_EQ(*r.confirmedIndex, task->fallbackIndex);
  expectContains(r.confirmationSummary, "the default stays (3.0000 ms)");
}

/// The default 1 ms, every other config 10 ms; counts the runner's calls.
class FarAheadDefaultMeasurer : public SyntheticMeasurer {
 public:
  using SyntheticMeasurer::SyntheticMeasurer;
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>&) override {
    ++calls;
    std::vector<MeasureResult> out;
    for (auto& in : inputs) {
      MeasureResult r;
      r.costs = {nlohmann::json::parse(in.config)["index"].get<uint64_t>() == fallbackIndex ? 1e-3 : 10e-3};
      out.push_back(r);
    }
    return out;
  }
  uint64_t fallbackIndex = 0;
  int calls = 0;
};

/// Records each batch's stop bounds.
class StopBoundRecorder : public SyntheticMeasurer {
 public:
  using SyntheticMeasurer::SyntheticMeasurer;
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds) override {
    std::vector<double> bounds;
    for (auto& in : inputs) bounds.push_back(in.stopAboveSeconds);
    batchBounds.push_back(bounds);
    return SyntheticMeasurer::run(inputs, builds);
  }
  std::vector<std::vector<double>> batchBounds;
};

TEST(TuneLoop, CandidatesFarSlowerThanTheBestAreTimedByOneCall) {
  auto task = syntheticTask();
  StopBoundRecorder measurer(*task);
  TuneTaskOptions o;
  o.nTrial = 8;
  o.batchSize = 4;
  o.progressTo = nullptr;
  o.confirmTop = 0;
  // A resumed best (2e9 FLOP/s on the 1e6-FLOP task: 0.5 ms) bounds even the first batch.
  std::vector<Trial> resumed{{0, 2e9}};
  auto tuner = makeTuner("random", task, 4);
  auto r = tuneTask(task, *tuner, measurer, measurer, o, resumed);
  ASSERT_FALSE(measurer.batchBounds.empty());
  for (double bound : measurer.batchBounds[0]) EXPECT_DOUBLE_EQ(bound, kStopAboveBestFactor * 0.5e-3);
  // Later batches: the best so far only gets better.
  for (size_t b = 1; b < measurer.batchBounds.size(); ++b)
    for (double bound : measurer.batchBounds[b]) EXPECT_LE(bound, measurer.batchBounds[b - 1][0]);
}

TEST(TuneLoop, ADefaultFarAheadOfEveryCandidateStaysWithoutRounds) {
  auto task = syntheticTask();
  FarAheadDefaultMeasurer measurer(*task);
  measurer.fallbackIndex = task->fallbackIndex;
  TuneTaskOptions o;
  o.nTrial = 4;
  o.batchSize = 4;
  o.progressTo = nullptr;
  o.confirmTop = 3;
  // The search measures the default among its candidates.
  std::vector<Trial> resumed{{task->fallbackIndex, task->flops / 1e-3}};
  auto tuner = makeTuner("random", task, 5);
  std::vector<MeasureResult> confirmed;
  auto r = tuneTask(task, *tuner, measurer, measurer, o, resumed, [&](const ConfigEntity&, const MeasureInput&, const MeasureResult& m) {
    if (m.confirmed) confirmed.push_back(m);
  });
  EXPECT_EQ(measurer.calls, 1);  // the search's batch only: no interleaved rounds
  ASSERT_EQ(confirmed.size(), 1u);
  EXPECT_EQ(confirmed[0].confirmation["rounds"], 0);
  EXPECT_TRUE(confirmed[0].confirmation["kept_fallback"].get<bool>());
  EXPECT_EQ(confirmed[0].costs, std::vector<double>{1e-3});
  ASSERT_TRUE(r.confirmedIndex.has_value());
  EXPECT_EQ(*r.confirmedIndex, task->fallbackIndex);
  expectContains(r.confirmationSummary, "no candidate came within 1.5x of the default schedule: the default stays (1.0000 ms)");

  // A template whose fallback is its own config (a GPU conv's tiles) says so.
  auto tiled = std::make_shared<TuningTask>(*task);
  tiled->fallbackIsDefaultSchedule = false;
  FarAheadDefaultMeasurer again(*tiled);
  again.fallbackIndex = tiled->fallbackIndex;
  auto retuner = makeTuner("random", tiled, 5);
  auto t = tuneTask(tiled, *retuner, again, again, o, resumed, {});
  expectContains(t.confirmationSummary,
                 "no candidate came within 1.5x of the template's fallback config: the fallback stays (1.0000 ms)");
}

TEST(TuneLoop, TheConfirmationIsOneRecordThatNamesWhatItBeat) {
  auto task = syntheticTask();
  SyntheticMeasurer measurer(*task);
  TuneTaskOptions o;
  o.nTrial = 16;
  o.progressTo = nullptr;
  o.confirmTop = 3;
  o.confirmRounds = 4;
  auto tuner = makeTuner("random", task, 9);
  std::vector<MeasureResult> confirmed;
  std::map<uint64_t, double> measuredByIndex;
  auto r = tuneTask(task, *tuner, measurer, measurer, o, {}, [&](const ConfigEntity& c, const MeasureInput&, const MeasureResult& m) {
    if (m.confirmed) confirmed.push_back(m);
    else measuredByIndex[c.index()] = task->flops / m.cost();
  });
  ASSERT_EQ(confirmed.size(), 1u);
  ASSERT_TRUE(r.confirmedIndex.has_value());
  EXPECT_EQ(confirmed[0].costs.size(), 4u);  // one cost per round
  EXPECT_EQ(confirmed[0].confirmation["rounds"], 4);
  EXPECT_EQ(confirmed[0].confirmation["fallback_index"], task->fallbackIndex);
  // The contenders: the three fastest measured configs within 1.5x of the fastest measured.
  std::vector<double> measuredFlops;
  for (const auto& [index, flops] : measuredByIndex) measuredFlops.push_back(flops);
  std::sort(measuredFlops.rbegin(), measuredFlops.rend());
  size_t near = 0;
  for (double f : measuredFlops) near += f * kContenderSlack >= measuredFlops[0];
  if (measuredByIndex.count(task->fallbackIndex) && measuredByIndex[task->fallbackIndex] * kContenderSlack >= measuredFlops[0]) --near;
  ASSERT_GE(near, 1u);
  EXPECT_EQ(confirmed[0].confirmation["candidates"].size(), std::min<size_t>(3, near));
  // Noise-free: the decision is the best measured config, unless that was the default.
  EXPECT_EQ(*r.confirmedIndex, *r.bestIndex);
  EXPECT_FALSE(r.confirmationSummary.empty());
  // A run that only resumes measures nothing and confirms nothing.
  std::vector<Trial> resumed;
  for (uint64_t i = 0; i < 16; ++i) resumed.push_back({i, syntheticFlops(*task->space, i)});
  auto again = makeTuner("random", task, 9);
  auto none = tuneTask(task, *again, measurer, measurer, o, resumed);
  EXPECT_FALSE(none.confirmedIndex.has_value());
}

}  // namespace

namespace {

TEST(Confirmation, ContendersAreTheFastestDistinctCandidatesNearTheBest) {
  std::vector<SearchedCandidate> searched{{"fallback", 100}, {"a", 90}, {"b", 80}, {"c", 50}, {"a", 85}, {"d", 0}, {"e", 70}};
  // Within 1.5x of the fastest (100, the fallback's own measurement): a, b and e; c is 2x slower,
  // d failed, the second "a" is the same schedule.
  EXPECT_EQ(pickContenders(searched, "fallback", 5), (std::vector<size_t>{1, 2, 6}));
  EXPECT_EQ(pickContenders(searched, "fallback", 2), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(pickContenders(searched, "fallback", 5, 1.2), (std::vector<size_t>{1}));
  // The fallback far ahead of everything: nothing to confirm.
  EXPECT_TRUE(pickContenders({{"fallback", 100}, {"x", 10}, {"y", 60}}, "fallback", 5).empty());
  EXPECT_THROW(pickContenders(searched, "fallback", 5, 0.5), Error);
}

TEST(Confirmation, TheConfirmedLineLeadsWithTheRoundByRoundFigure) {
  // Equal medians and a 6.5% faster median ratio (the rounds pair the two side by side): the
  // line says what decided first, so the two do not read as a contradiction.
  Confirmation c;
  c.keptFallback = false;
  c.winnerRatio = 0.935;
  c.winnerCost = 0.0198e-3;
  c.fallbackCost = 0.0198e-3;
  EXPECT_EQ(c.confirmedLine("config 222", "the default", 5),
            "config 222 confirmed: 6.5% faster than the default, the median of its ratios in 5 interleaved rounds "
            "(median times 0.0198 ms against 0.0198 ms)");
}

}  // namespace
