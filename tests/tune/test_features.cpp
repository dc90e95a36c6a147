// Feature extraction for the xgb tuner: fixed lengths, sensible loop statistics on a schedule
// we know, independence from knob names (what transfer learning needs), and speed on the real
// conv2d template's space.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <cmath>
#include <set>

#include "ops/Examples.h"
#include "schedule/Steps.h"
#include "support/Error.h"
#include "tune/autotvm/CpuTemplates.h"
#include "tune/autotvm/FeatureCache.h"
#include "tune/autotvm/Features.h"
#include "target/Target.h"
#include "tune/autotvm/LoopSummary.h"
#include "tune/autotvm/MachineFeatures.h"

using namespace tessel;
using namespace tessel::tune::autotvm;

namespace {

/// A matmul template of our own: split i and j, choose the inner loop order, vectorize j's inner part.
TuningTaskPtr matmulTask(int64_t n, const std::string& prefix) {
  auto space = std::make_shared<ConfigSpace>();
  SplitOptions i, j;
  i.maxFactor = 16;
  j.maxFactor = 32;
  space->defineSplit(prefix + "i", n, i);
  space->defineSplit(prefix + "j", n, j);
  space->defineKnob(prefix + "k_inner", {false, true});
  auto task = std::make_shared<TuningTask>();
  task->name = "matmul";
  task->templateName = "test_matmul";
  task->measure = tune::makeMeasureTask("matmul", ops::matmul(n, n, n));
  task->space = space;
  task->instantiate = [prefix, space](const ConfigEntity& config) {
    using namespace schedule;
    std::vector<int64_t> i = config.split(prefix + "i"), j = config.split(prefix + "j");
    std::string c = "C";
    std::vector<StepPtr> steps{std::make_shared<SplitStep>(c, "i", std::vector<int64_t>{i[1]}),
                               std::make_shared<SplitStep>(c, "j", std::vector<int64_t>{j[1]})};
    if (config.value(prefix + "k_inner").get<bool>())
      steps.push_back(std::make_shared<ReorderStep>(c, std::vector<std::string>{"i.0", "j.0", "i.1", "j.1", "k"}));
    else
      steps.push_back(std::make_shared<ReorderStep>(c, std::vector<std::string>{"i.0", "j.0", "k", "i.1", "j.1"}));
    steps.push_back(std::make_shared<AnnotateStep>(c, "i.0", Annotation::Parallel));
    steps.push_back(std::make_shared<AnnotateStep>(c, "j.1", Annotation::Vectorize));
    return steps;
  };
  return task;
}

TuningTaskPtr resnetConvTask() {
  return makeCpuTuningTask("conv2d", ops::conv2dNHWC(1, 64, 56, 56, 64, 3, 3, 1, 1), target::Target::host(), "conv2d_nhwc.x86");
}

}  // namespace

TEST(Features, MatmulLoopSummaryHasTheScheduleLoops) {
  TuningTaskPtr task = matmulTask(64, "");
  ConfigEntity config = task->space->fromChoices({*task->space->optionIndex("i", nlohmann::json::array({16, 4})),
                                                  *task->space->optionIndex("j", nlohmann::json::array({8, 8})), 0});
  schedule::State state = schedule::replay(task->measure->dag, task->instantiate(config));
  std::vector<StageSummary> stages = summarizeLoops(state);
  ASSERT_EQ(stages.size(), 1u);
  const StageSummary& c = stages[0];
  ASSERT_EQ(c.loops.size(), 5u);  // i.0 j.0 k i.1 j.1
  EXPECT_EQ(c.loops[0].annotation, schedule::Annotation::Parallel);
  EXPECT_EQ(c.loops[2].extent, 64);
  EXPECT_TRUE(c.loops[2].reduce);
  EXPECT_EQ(c.loops[4].extent, 8);
  EXPECT_EQ(c.loops[4].annotation, schedule::Annotation::Vectorize);
  EXPECT_DOUBLE_EQ(c.iterations(), 64.0 * 64 * 64);
  // The store to C, then the reads of A and B.
  ASSERT_EQ(c.accesses.size(), 3u);
  EXPECT_TRUE(c.accesses[0].isStore);
  // i.0 steps C's row by 4 (the inner i extent); j.1 steps C's column by 1; k does not move C.
  EXPECT_EQ(c.accesses[0].coefficients[0], (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(c.accesses[0].coefficients[4], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(c.accesses[0].coefficients[2], (std::vector<int64_t>{0, 0}));
  // A[i, k]: k moves A's column.
  EXPECT_EQ(c.accesses[1].coefficients[2], (std::vector<int64_t>{0, 1}));
}

TEST(Features, ItervarValuesOnAKnownSchedule) {
  TuningTaskPtr task = matmulTask(64, "");
  ConfigEntity config = task->space->fromChoices({*task->space->optionIndex("i", nlohmann::json::array({16, 4})),
                                                  *task->space->optionIndex("j", nlohmann::json::array({8, 8})), 0});
  std::vector<float> f = itervarFeatures(schedule::replay(task->measure->dag, task->instantiate(config)), nullptr);
  ASSERT_EQ(f.size(), kItervarLength);
  // The innermost loop (j.1, extent 8, vectorized) has the last of the ten loop slots.
  const size_t perLoop = 21, innermost = 2 + 9 * perLoop;
  EXPECT_EQ(f[innermost + 0], 1.f);
  EXPECT_FLOAT_EQ(f[innermost + 1], std::log2(9.f));
  EXPECT_EQ(f[innermost + 4], 1.f);  // vectorize
  // C's stride under j.1 is one float; touched: 8 floats; no reuse.
  EXPECT_FLOAT_EQ(f[innermost + 9], std::log2(5.f));
  EXPECT_FLOAT_EQ(f[innermost + 10], std::log2(33.f));
  EXPECT_FLOAT_EQ(f[innermost + 11], 1.f);  // reuse 1 -> log2(2)
  // Only five loops: the first five slots are padding.
  EXPECT_EQ(f[2], 0.f);
  EXPECT_EQ(f[2 + 5 * perLoop], 1.f);
  for (float v : f) EXPECT_TRUE(std::isfinite(v));
}

TEST(Features, ItervarAndCurveIgnoreKnobNames) {
  TuningTaskPtr a = matmulTask(64, ""), b = matmulTask(64, "renamed_");
  for (FeatureType type : {FeatureType::Itervar, FeatureType::Curve}) {
    FeatureCache fa(a, type, 1), fb(b, type, 1);
    for (uint64_t index = 0; index < a->space->size(); index += 3) EXPECT_EQ(fa.features(index), fb.features(index));
  }
  // Knob features are the choices themselves, so they agree too, but their length depends on the space.
  EXPECT_EQ(knobFeatureLength(*a->space), 3u + 2 + 2);
}

TEST(Features, LengthsAreFixedAcrossTasks) {
  TuningTaskPtr matmul = matmulTask(64, ""), conv = resnetConvTask();
  for (FeatureType type : {FeatureType::Itervar, FeatureType::Curve}) {
    FeatureCache fm(matmul, type, 1), fc(conv, type, 1);
    EXPECT_EQ(fm.length(), fc.length());
    EXPECT_EQ(fm.features(1).size(), fc.features(fc.task().fallbackIndex).size());
  }
}

TEST(Features, KnobFeaturesAreChoicesAndLogFactors) {
  TuningTaskPtr task = matmulTask(64, "");
  ConfigEntity config = task->space->fromChoices({*task->space->optionIndex("i", nlohmann::json::array({16, 4})),
                                                  *task->space->optionIndex("j", nlohmann::json::array({2, 32})), 1});
  std::vector<float> f = knobFeatures(config, *task->space);
  ASSERT_EQ(f.size(), 7u);
  EXPECT_EQ(f[0], float(config.choices()[0]));
  EXPECT_FLOAT_EQ(f[1], 4.f);  // log2 16
  EXPECT_FLOAT_EQ(f[2], 2.f);  // log2 4
  EXPECT_FLOAT_EQ(f[4], 1.f);
  EXPECT_FLOAT_EQ(f[5], 5.f);
  EXPECT_EQ(f[6], 1.f);
}

TEST(Features, UnknownFeatureTypeFails) {
  EXPECT_THROW(parseFeatureType("loops"), Error);
}

// The real conv2d template on resnet's 56x56x64 -> 64 3x3 layer: features tell configs apart.
// The extraction speed is printed for information only: timings are never a test's verdict
// (the machines are shared; under the sanitizers it is several times slower).
TEST(Features, Conv2dTemplateFeaturesTellConfigsApart) {
  TuningTaskPtr task = resnetConvTask();
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint64_t> pick(0, task->space->size() - 1);
  std::set<uint64_t> unique;
  while (unique.size() < 400) unique.insert(pick(rng));
  std::vector<uint64_t> sample(unique.begin(), unique.end());
  for (FeatureType type : {FeatureType::Itervar, FeatureType::Curve}) {
    FeatureCache cache(task, type, 1);
    auto start = std::chrono::steady_clock::now();
    cache.ensure(sample);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::set<std::vector<float>> distinct;
    size_t valid = 0;
    for (uint64_t index : sample) {
      distinct.insert(cache.features(index));
      valid += cache.valid(index);
    }
    std::printf("%s: space %llu, %zu configs in %.3f s: %.0f configs/s on one thread; %zu distinct, %zu valid\n",
                featureTypeName(type), (unsigned long long)task->space->size(), cache.size(), seconds,
                double(cache.size()) / seconds, distinct.size(), valid);
    EXPECT_EQ(valid, cache.size());
    EXPECT_GT(distinct.size(), cache.size() * 8 / 10);
    // Cached: a second pass extracts nothing new and gives the same rows.
    size_t before = cache.size();
    auto matrix = cache.matrix(sample);
    EXPECT_EQ(cache.size(), before);
    ASSERT_EQ(matrix.size(), sample.size() * cache.length());
    EXPECT_TRUE(std::equal(cache.features(sample[0]).begin(), cache.features(sample[0]).end(), matrix.begin()));
  }
}

// Extraction on a thread pool gives the same vectors as one thread.
TEST(Features, ParallelExtractionMatchesSerial) {
  TuningTaskPtr task = resnetConvTask();
  std::vector<uint64_t> sample;
  for (uint64_t i = 0; i < 64; ++i) sample.push_back((i * 7919) % task->space->size());
  FeatureCache serial(task, FeatureType::Itervar, 1), parallel(task, FeatureType::Itervar, 2);
  EXPECT_EQ(serial.matrix(sample), parallel.matrix(sample));
}

// The machine features read one nest against the target's machine model: a 4 x 16-lane float
// tile is two AVX2 registers wide but one AVX-512 register, eight of AVX2's 16 registers but
// four of AVX-512's 32; 16 parallel chunks divide evenly among 2 cores, not among 3; and the
// reuse a cache holds grows with the cache.
TEST(MachineFeatures, ANestIsReadAgainstTheTargetsRegistersCoresAndCaches) {
  using namespace schedule;
  te::ComputeDAG dag = ops::matmul(64, 64, 64);
  State state = replay(dag, {std::make_shared<SplitStep>("C", "i", std::vector<int64_t>{4}),
                             std::make_shared<SplitStep>("C", "j", std::vector<int64_t>{16}),
                             std::make_shared<ReorderStep>("C", std::vector<std::string>{"i.0", "j.0", "k", "i.1", "j.1"}),
                             std::make_shared<AnnotateStep>("C", "i.0", Annotation::Parallel),
                             std::make_shared<AnnotateStep>("C", "i.1", Annotation::Unroll),
                             std::make_shared<AnnotateStep>("C", "j.1", Annotation::Vectorize)});
  std::vector<StageSummary> stages = summarizeLoops(state);
  ASSERT_EQ(stages.size(), 1u);
  auto features = [&](const std::string& targetText) {
    target::CpuMachine machine = target::Target::parse(targetText).cpu;
    std::vector<float> out(kMachineStageLength);
    machineStageFeatures(stages[0], loopStats(stages[0]), &machine, out.data());
    return out;
  };
  auto avx2 = features("cpu -mcpu=haswell -num-cores=2");
  auto avx512 = features("cpu -mcpu=skylake-avx512 -num-cores=2");
  auto log2p1 = [](double x) { return float(std::log2(1 + x)); };
  EXPECT_FLOAT_EQ(avx2[0], log2p1(2.0));     // 16 floats: two 32-byte registers
  EXPECT_FLOAT_EQ(avx512[0], log2p1(1.0));   // one 64-byte register
  EXPECT_FLOAT_EQ(avx2[1], log2p1(8.0 / 16));   // 4 x 16 floats in 8 of 16 registers
  EXPECT_FLOAT_EQ(avx512[1], log2p1(4.0 / 32)); // in 4 of 32
  EXPECT_FLOAT_EQ(avx2[2], log2p1(16.0 / 2));
  EXPECT_FLOAT_EQ(avx2[3], 1.0f);
  auto threeCores = features("cpu -mcpu=haswell -num-cores=3");
  EXPECT_FLOAT_EQ(threeCores[3], float(16.0 / 18.0));  // 6, 5 and 5 chunks
  // The whole nest (three 16 KiB matrices) fits a 1 MiB L2, not a 16 KiB L1d: the L2 holds
  // more reuse than the L1d, and the last-level cache as much as the L2.
  auto small = features("cpu -mcpu=haswell -l1d=16K -l2=1M -llc=8M");
  EXPECT_GT(small[5], small[4]);
  EXPECT_EQ(small[6], small[5]);
  EXPECT_LT(small[7], features("cpu -mcpu=haswell -l1d=16K -l2=1M -llc=32K")[7]);
  // Without a machine (a GPU target) the features are zero.
  std::vector<float> none(kMachineStageLength, 1.f);
  machineStageFeatures(stages[0], loopStats(stages[0]), nullptr, none.data());
  for (float v : none) EXPECT_EQ(v, 0.f);
}

// The xgb tuner's features take the task's target, and one state reads differently against an
// AVX2 and an AVX-512 machine in the machine part of each stage only.
TEST(MachineFeatures, TheFeatureCacheReadsTheTasksTarget) {
  TuningTaskPtr task = makeCpuTuningTask("conv2d", ops::conv2dNHWC(1, 64, 56, 56, 64, 3, 3, 1, 1),
                                         target::Target::parse("cpu -mcpu=haswell"), "conv2d_nhwc.x86");
  schedule::State state = task->instantiateState ? task->instantiateState(task->space->get(task->fallbackIndex))
                                                 : schedule::replay(task->measure->dag, task->instantiate(task->space->get(task->fallbackIndex)));
  const target::CpuMachine avx2 = task->measure->target.cpu, avx512 = target::Target::parse("cpu -mcpu=skylake-avx512").cpu;
  FeatureCache cache(task, FeatureType::Itervar, 1);
  EXPECT_EQ(cache.features(task->fallbackIndex), itervarFeatures(state, &avx2));
  std::vector<float> a = itervarFeatures(state, &avx2), b = itervarFeatures(state, &avx512);
  ASSERT_EQ(a.size(), kItervarLength);
  const size_t perStage = kItervarLength / 3, machineAt = perStage - kMachineStageLength;
  int differing = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    bool machinePart = k % perStage >= machineAt;
    if (!machinePart) {
      EXPECT_EQ(a[k], b[k]) << "feature " << k;
    }
    differing += machinePart && a[k] != b[k];
  }
  EXPECT_GT(differing, 0);
}
