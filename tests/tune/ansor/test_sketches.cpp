// Sketch generation and random annotation on the zoo's tasks: every sketch (with its tile
// holes at 1) and 1,000 random annotated states per task replay from their JSON, lower, and
// run in the loop-IR evaluator (tests/common/LoopIrEvaluator.h: bounds-checked, no compiler)
// against the reference evaluator. The sketches and a seeded sample of 12 states per task are
// also compiled and run, so that the C++ code generator stays covered too (all of them with
// TESSEL_ANSOR_ALL_STATES=1: a few thousand compiler runs, a quarter of an hour).
//
// Environment: TESSEL_FUZZ_SEED (default: random, printed) picks the states.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <set>

#include <sys/resource.h>

#include "common/KernelCheck.h"
#include "ops/Winograd.h"
#include "passes/Lower.h"
#include "support/ThreadPool.h"
#include "tune/ansor/Annotation.h"
#include "tune/ansor/AnsorZooTasks.h"
#include "tune/ansor/DagAnalysis.h"
#include "tune/ansor/Mutations.h"
#include "tune/ansor/Sketches.h"

using namespace tessel;
using namespace tessel::tune::ansor;
using schedule::State;

namespace {

const std::vector<ansortest::ZooTask>& tasks() {
  static const auto all = ansortest::zooTasks();
  return all;
}

const ansortest::ZooTask& task(const std::string& kind) {
  for (auto& t : tasks())
    if (t.what.rfind(kind + " ", 0) == 0) return t;
  throw std::runtime_error("no zoo task " + kind);
}

std::set<std::string> descriptions(const std::vector<Sketch>& sketches) {
  std::set<std::string> out;
  for (auto& s : sketches) out.insert(s.description);
  return out;
}

/// The schedules of one task: every one lowered and run in the loop-IR evaluator (on every
/// core), the marked ones also compiled (one library per batch) and run; each compared with
/// the reference.
struct TaskCheck {
  kernelcheck::ReferenceData reference;
  std::vector<State> states;
  std::vector<std::string> what;
  std::vector<bool> compiled;

  void add(State state, std::string description, bool compile) {
    states.push_back(std::move(state));
    what.push_back(std::move(description));
    compiled.push_back(compile);
  }

  struct Summary {
    int evaluated = 0, compiled = 0;
    double evaluateSeconds = 0, evaluateCpuSeconds = 0, compileSeconds = 0;
  };

  /// This process's CPU time, all threads: what the evaluation costs, however busy the machine.
  static double cpuSeconds() {
    rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + 1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  }

  Summary check(const std::string& task) {
    auto start = std::chrono::steady_clock::now();
    double startCpu = cpuSeconds();
    auto secondsSince = [](auto t) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count(); };
    std::vector<std::string> problems(states.size());  // empty: lowered and matched the reference
    std::vector<passes::LoweredFunction> functions(states.size());
    {
      ThreadPool pool;
      pool.parallelFor(int(states.size()), [&](int i) {
        try {
          auto f = passes::lower(states[size_t(i)], fmt::format("k{}", i));
          if (compiled[size_t(i)]) functions[size_t(i)] = f;
          double error = kernelcheck::evaluateAndCompare(f, reference);
          if (!kernelcheck::withinTolerance(error, reference)) problems[size_t(i)] = fmt::format("evaluated error {}", error);
        } catch (const std::exception& e) {
          problems[size_t(i)] = e.what();
        }
      });
    }
    // The first few in full (a broken pass can fail them all, each with its step list).
    int failed = 0;
    for (size_t i = 0; i < states.size(); ++i)
      if (!problems[i].empty() && ++failed <= 5) ADD_FAILURE() << task << ": " << what[i] << "\n" << problems[i];
    EXPECT_EQ(failed, 0) << task << ": schedules whose lowering failed or computed wrong numbers in the loop-IR evaluator";
    Summary summary{int(states.size()), 0, secondsSince(start), cpuSeconds() - startCpu, 0};
    start = std::chrono::steady_clock::now();
    std::vector<passes::LoweredFunction> sample;
    std::vector<size_t> sampled;
    for (size_t i = 0; i < states.size(); ++i)
      if (compiled[i] && functions[i].body.defined()) {  // lowered, whatever the evaluator found
        sample.push_back(std::move(functions[i]));
        sampled.push_back(i);
      }
    // Small libraries: unrolled tiles make big kernels, and one compiler run must stay
    // within the toolchain's timeout.
    kernelcheck::compileInBatches(sample, 16, [&](size_t k, const runtime::Kernel& kernel) {
      double error = kernelcheck::runAndCompare(kernel, reference);
      EXPECT_TRUE(kernelcheck::withinTolerance(error, reference)) << task << ": " << what[sampled[k]] << " (compiled error " << error << ")";
    });
    summary.compiled = int(sample.size());
    summary.compileSeconds = secondsSince(start);
    return summary;
  }
};

}  // namespace

// ---- the analysis and the rules on known tasks ----------------------------------------------

TEST(AnsorDagAnalysis, ConvolutionNeedsTilingAndFusesItsEpilogue) {
  State state(task("conv2d").dag);
  std::string conv, output = state.stages().back().name();
  for (auto& s : state.stages())
    if (!s.isPlaceholder() && s.op->reduction()) conv = s.name();
  ASSERT_FALSE(conv.empty());
  EXPECT_TRUE(needsMultiLevelTiling(state, conv));
  EXPECT_GE(reusedInputCount(state, conv), 1);
  EXPECT_FALSE(isStrictlyInlinable(state, conv));
  EXPECT_FALSE(isStrictlyInlinable(state, output));  // an output
  EXPECT_FALSE(needsRfactor(state, conv, 4));
  // The epilogue's intermediate stages are element-wise and cheap: inlinable.
  for (auto& s : state.stages()) {
    if (s.isPlaceholder() || s.name() == conv || s.name() == output) continue;
    EXPECT_TRUE(isStrictlyInlinable(state, s.name())) << s.name();
  }
}

TEST(AnsorDagAnalysis, SoftmaxNeedsNoTilingButRfactor) {
  State state(task("softmax").dag);
  EXPECT_FALSE(needsMultiLevelTiling(state, "T_softmax_maxelem"));
  EXPECT_FALSE(isStrictlyInlinable(state, "T_softmax_exp"));  // exp is a library call
  EXPECT_TRUE(needsRfactor(state, "T_softmax_maxelem", 2));
  EXPECT_TRUE(needsRfactor(state, "T_softmax_expsum", 2));
  // Its two readers (the sum and the quotient) make the exp unfusible.
  EXPECT_FALSE(fusibleConsumer(state, "T_softmax_exp"));
}

TEST(AnsorDagAnalysis, ATransformItsGemmReadsWithReuseIsNotInlinedButThePaddingIs) {
  ops::Conv2dAttrs attrs;
  attrs.layout = ops::Layout::NHWC;
  attrs.padding = {1, 1, 1, 1};
  auto data = te::placeholder({1, 8, 8, 8}, DataType::float32(), "data");
  auto weight = te::placeholder({4, 4, 8, 16}, DataType::float32(), "weight");  // U of F(2x2)
  State state(te::ComputeDAG({ops::conv2dWinograd(data, weight, attrs, 2)}));
  // The GEMM reads V once per output channel: inlined, the transform would be recomputed 16x.
  EXPECT_TRUE(readsWithReuse(state, "winograd_gemm", "winograd_input"));
  EXPECT_FALSE(isStrictlyInlinable(state, "winograd_input"));
  // The padding only selects values: inlined wherever it is read.
  EXPECT_TRUE(isStrictlyInlinable(state, "winograd_pad"));
  // No sketch inlines the transform.
  for (auto& sketch : generateSketches(state.dag())) {
    State s = schedule::replay(state.dag(), sketch.steps);
    EXPECT_NE(s.stage("winograd_input").attach, schedule::AttachKind::Inline) << sketch.description;
  }
}

TEST(AnsorAnnotation, AStageTheSketchSplitKeepsItsPlace) {
  // The outer stage of a cache write follows its cache's tiles; random compute locations must
  // not move it into a consumer that reads it with reuse (whole tiles recomputed per read).
  uint64_t seed = kernelcheck::fuzzSeed();
  std::mt19937_64 rng(seed);
  for (auto& t : tasks()) {
    SplitFactorizations factorizations;
    for (auto& sketch : generateSketches(t.dag)) {
      State sketched = schedule::replay(t.dag, sketch.steps);
      for (int i = 0; i < 20; ++i) {
        AnnotatedState annotated = annotateRandomly(t.dag, sketch, factorizations, rng);
        for (auto& s : sketched.stages()) {
          bool split = false;
          for (auto& r : s.relations) split = split || r.kind == schedule::IterRelation::Kind::Split;
          if (!split) continue;
          const auto& after = annotated.state.stage(s.name());
          EXPECT_EQ(after.attach, s.attach) << t.what << ", " << sketch.description << ": " << s.name() << " moved";
          EXPECT_EQ(after.attachStage, s.attachStage) << t.what << ", " << sketch.description << ": " << s.name() << " moved";
        }
      }
    }
  }
}

/// Each parallel loop of `annotated`: how many outer loops it fused and the fused extents of
/// 1, 2, ... of the loops it could have fused (the state before its fuse).
struct ParallelChoice {
  std::string stage;
  size_t fused = 1;
  std::vector<int64_t> extents;
};
std::vector<ParallelChoice> parallelChoices(const te::ComputeDAG& dag, const AnnotatedState& annotated) {
  std::vector<ParallelChoice> out;
  for (size_t i = 0; i < annotated.steps.size(); ++i) {
    auto a = dynamic_cast<const schedule::AnnotateStep*>(annotated.steps[i].get());
    if (!a || a->annotation != schedule::Annotation::Parallel) continue;
    ParallelChoice c;
    c.stage = a->stage;
    size_t first = i;
    if (auto f = i ? dynamic_cast<const schedule::FuseStep*>(annotated.steps[i - 1].get()) : nullptr; f && f->stage == a->stage) {
      first = i - 1;
      c.fused = f->iterators.size();
    }
    State before = schedule::replay(dag, std::vector<schedule::StepPtr>(annotated.steps.begin(), annotated.steps.begin() + long(first)));
    const auto& stage = before.stage(a->stage);
    int64_t extent = 1;
    for (const std::string& loop : parallelizableOuterLoops(before, a->stage))
      c.extents.push_back(extent *= stage.iterator(stage.leafByName(loop)).extent);
    out.push_back(c);
  }
  return out;
}

TEST(AnsorAnnotation, ParallelLoopsHaveIterationsForEveryCore) {
  // Random annotation fuses outer loops until the parallel loop has more than 16 iterations per
  // core (TVM's InitParallel); a mutation may fuse fewer, but never below 4 per core unless
  // every loop fused gives fewer: a loop of 2 iterations on 2 cores cannot be rebalanced when
  // another program slows one of them.
  uint64_t seed = kernelcheck::fuzzSeed();
  std::mt19937_64 rng(seed);
  for (int64_t cores : {2, 4}) {
    AnnotationOptions options;
    options.cores = cores;
    int initial = 0, mutated = 0;
    for (auto& t : tasks()) {
      SplitFactorizations factorizations;
      for (auto& sketch : generateSketches(t.dag))
        for (int i = 0; i < 8; ++i) {
          AnnotatedState annotated = annotateRandomly(t.dag, sketch, factorizations, rng, options);
          for (const ParallelChoice& c : parallelChoices(t.dag, annotated)) {
            size_t want = 1;
            while (want < c.extents.size() && c.extents[want - 1] <= 16 * cores) ++want;
            EXPECT_EQ(c.fused, want) << t.what << ", " << sketch.description << ", " << c.stage << ", " << cores << " cores";
            ++initial;
          }
          for (int m = 0; m < 4; ++m) {
            auto child = mutate(t.dag, annotated, MutationKind::Parallel, factorizations, options, rng);
            if (!child) continue;
            for (const ParallelChoice& c : parallelChoices(t.dag, *child)) {
              EXPECT_GE(c.extents[c.fused - 1], std::min(4 * cores, c.extents.back()))
                  << t.what << ", " << sketch.description << ", " << c.stage << ", " << cores << " cores";
              ++mutated;
            }
          }
        }
    }
    EXPECT_GT(initial, 50);
    EXPECT_GT(mutated, 20);
  }
}

TEST(AnsorSketches, ConvolutionWithEpilogueTilesAndFusesAtTwoLevels) {
  auto sketches = generateSketches(task("conv2d").dag);
  // Fused into the epilogue at level 1 or 2, or tiled alone; the padding always inlined.
  ASSERT_EQ(sketches.size(), 3u) << fmt::format("{}", fmt::join(descriptions(sketches), "\n"));
  int fused = 0;
  for (auto& s : sketches) {
    EXPECT_NE(s.description.find("inline"), std::string::npos) << s.description;
    fused += s.description.find(" at level ") != std::string::npos;
  }
  EXPECT_EQ(fused, 2);
}

TEST(AnsorSketches, DenseOutputGetsACacheWriteSketch) {
  auto sketches = generateSketches(task("dense").dag);
  bool cacheWrite = false;
  for (auto& s : sketches) cacheWrite = cacheWrite || s.description.find("cache write") != std::string::npos;
  // With a bias epilogue the dense fuses into it; as the output it computes into a cache.
  EXPECT_GE(sketches.size(), 3u);
  State state(task("dense").dag);
  std::string dense;
  for (auto& s : state.stages())
    if (!s.isPlaceholder() && s.op->reduction()) dense = s.name();
  EXPECT_EQ(cacheWrite, state.isOutput(dense)) << fmt::format("{}", fmt::join(descriptions(sketches), "\n"));
}

TEST(AnsorSketches, SoftmaxGetsRfactorVariants) {
  auto sketches = generateSketches(task("softmax").dag);
  // Each of the two reductions: rfactor at the outer part, at the inner part, or left alone.
  EXPECT_EQ(sketches.size(), 9u) << fmt::format("{}", fmt::join(descriptions(sketches), "\n"));
  EXPECT_EQ(descriptions(sketches).size(), sketches.size());
}

TEST(AnsorSketches, SketchesReplayFromTheirJson) {
  for (auto& t : tasks())
    for (auto& sketch : generateSketches(t.dag)) {
      auto steps = schedule::stepsFromJson(nlohmann::json::parse(schedule::stepsToJson(sketch.steps).dump()));
      EXPECT_EQ(schedule::replay(t.dag, steps).toString(), schedule::replay(t.dag, sketch.steps).toString()) << sketch.description;
    }
}

// ---- numbers ----------------------------------------------------------------------------------

/// The kinds of zooTasks(), by the first word of ZooTask::what.
const std::vector<std::string> kZooTaskKinds = {"conv2d", "depthwise", "dense", "softmax"};

/// A task's random states are checked in kShards tests of kStatesPerShard states each, so that
/// ctest spreads a task over the cores (the convolution's 1,000 states took 135 s in one test on
/// a loaded 2-core machine); each shard compiles its share of the sample, the first also the
/// sketches.
constexpr int kShards = 4;
constexpr int kStatesPerShard = 250;
constexpr int kCompiledPerShard = 3;  // besides the sketches

struct ZooTaskShard {
  std::string kind;
  int shard = 0;
};

/// gtest prints a parameter in test listings (and ctest's names): the task and the shard.
void PrintTo(const ZooTaskShard& s, std::ostream* out) { *out << s.kind << " states " << s.shard + 1 << "/" << kShards; }

std::vector<ZooTaskShard> zooTaskShards() {
  std::vector<ZooTaskShard> out;
  for (const std::string& kind : kZooTaskKinds)
    for (int shard = 0; shard < kShards; ++shard) out.push_back({kind, shard});
  return out;
}

class AnsorZooTaskNumerics : public ::testing::TestWithParam<ZooTaskShard> {};

TEST_P(AnsorZooTaskNumerics, EverySketchAndRandomStatesComputeTheReference) {
  const ZooTaskShard& param = GetParam();
  const ansortest::ZooTask& t = task(param.kind);
  uint64_t seed = kernelcheck::fuzzSeed();
  // The shard's own stream of the seed (the task's place in the list, the shard): the same seed
  // gives the same states whichever shards run.
  std::mt19937_64 rng(seed + uint64_t(kShards * (&t - tasks().data()) + param.shard));
  const char* all = std::getenv("TESSEL_ANSOR_ALL_STATES");
  const bool compileAll = all && std::string(all) == "1";
  TaskCheck check{kernelcheck::makeReferenceData(t.dag, rng()), {}, {}, {}};
  auto sketches = generateSketches(t.dag);
  if (param.shard == 0)
    for (auto& sketch : sketches) check.add(schedule::replay(t.dag, sketch.steps), "sketch: " + sketch.description, true);
  SplitFactorizations factorizations;
  std::set<std::string> distinct;
  for (int i = 0; i < kStatesPerShard; ++i) {
    // The sketches in turn, each shard's turn starting where the previous shard's compiled
    // states stopped: the compiled states of all shards take the sketches in turn too.
    const Sketch& sketch = sketches[size_t(param.shard * kCompiledPerShard + i) % sketches.size()];
    AnnotatedState annotated = annotateRandomly(t.dag, sketch, factorizations, rng);
    // The record is the step list: it must replay by itself to the same state.
    std::string json = schedule::stepsToJson(annotated.steps).dump();
    State replayed = schedule::replay(t.dag, schedule::stepsFromJson(nlohmann::json::parse(json)));
    ASSERT_EQ(replayed.toString(), annotated.state.toString()) << t.what << "\n" << schedule::printSteps(annotated.steps);
    distinct.insert(json);
    std::string what = fmt::format("state {} of sketch '{}' (seed {}, shard {}):\n{}\nsteps: {}", i, sketch.description, seed,
                                   param.shard, schedule::printSteps(annotated.steps), json);
    check.add(std::move(replayed), std::move(what), compileAll || i < kCompiledPerShard);
  }
  // Random annotation explores: the states are mostly different.
  EXPECT_GT(distinct.size(), size_t(kStatesPerShard) / 2) << t.what;
  auto summary = check.check(t.what);
  std::printf("[ fuzz     ] %s, shard %d: %zu sketches, %zu distinct states of %d; %d kernels lowered and evaluated (%.1f s, %.1f s "
              "CPU), %d of them compiled too (%.1f s)\n",
              t.what.c_str(), param.shard, sketches.size(), distinct.size(), kStatesPerShard, summary.evaluated, summary.evaluateSeconds,
              summary.evaluateCpuSeconds, summary.compiled, summary.compileSeconds);
}

INSTANTIATE_TEST_SUITE_P(Zoo, AnsorZooTaskNumerics, ::testing::ValuesIn(zooTaskShards()),
                         [](const ::testing::TestParamInfo<ZooTaskShard>& info) {
                           return fmt::format("{}_{}", info.param.kind, info.param.shard + 1);
                         });

TEST(AnsorSketches, TheNumericsCoverEveryZooTask) {
  // The numerics are instantiated by kind: a task added to zooTasks() must be named there too.
  std::vector<std::string> kinds;
  for (auto& t : tasks()) kinds.push_back(t.what.substr(0, t.what.find(' ')));
  EXPECT_EQ(kinds, kZooTaskKinds);
}

TEST(AnsorRegression, DepthwisePointwiseUnderAutoUnroll) {
  // A random state of the depthwise + pointwise task (seed 42, state 244): the convolution's
  // copy stage computed at the output's innermost loop, the depthwise inside the convolution's
  // cache stage, auto_unroll_max_step 64. With split extents clamped to a smaller parent in bound
  // inference, its corner piece kept loops whose whole body was a guard on their variable, each
  // holding 32 scalar accumulators after unrolling; GCC 12 with AVX-512 miscompiled that (at -O2
  // -mavx512f, not at -O1 nor with clang). tightenGuardedLoops now runs such loops only where
  // the guard holds, which removes the guards (passes/TightenGuardedLoops.cpp).
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/tests/tune/ansor/data/depthwise_pointwise_unroll64.json");
  ASSERT_TRUE(in.good());
  auto steps = schedule::stepsFromJson(nlohmann::json::parse(in));
  auto result = kernelcheck::checkAgainstReference(schedule::replay(task("depthwise").dag, steps), 7);
  EXPECT_LT(result.maxRelativeError, 1e-5);
}

TEST(AnsorSketches, DISABLED_EvaluatorSpeed) {
  // Not a check: the loop-IR evaluator's speed on random states of each task, in this
  // thread's CPU time (what other processes take of the machine does not count).
  auto threadSeconds = [] {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
  };
  for (auto& t : tasks()) {
    auto reference = kernelcheck::makeReferenceData(t.dag, 1);
    std::mt19937_64 rng(1);
    auto sketches = generateSketches(t.dag);
    SplitFactorizations factorizations;
    int64_t macs = 0;  // of all reductions
    for (auto& op : t.dag.ops())
      if (op->reduction()) {
        int64_t m = 1;
        for (auto e : op->shape) m *= e;
        for (auto& a : op->reduction()->axes) m *= a.extent;
        macs += m;
      }
    const int states = 40;
    double lowerSeconds = 0, compileSeconds = 0, runSeconds = 0, slowest = 0;
    for (int i = 0; i < states; ++i) {
      State s = annotateRandomly(t.dag, sketches[size_t(i) % sketches.size()], factorizations, rng).state;
      auto t0 = threadSeconds();
      auto f = passes::lower(s, "k");
      auto t1 = threadSeconds();
      kernelcheck::LoopIrEvaluator evaluator(f);
      auto t2 = threadSeconds();
      EXPECT_TRUE(kernelcheck::withinTolerance(kernelcheck::evaluateAndCompare(evaluator, reference), reference));
      auto t3 = threadSeconds();
      lowerSeconds += t1 - t0;
      compileSeconds += t2 - t1;
      runSeconds += t3 - t2;
      slowest = std::max(slowest, t3 - t2);
    }
    std::printf("%s: %d states of %lld MACs, per state: lowering %.4f s, evaluator compile %.4f s, run %.4f s (slowest %.3f s): "
                "%.1f ns per MAC\n",
                t.what.c_str(), states, static_cast<long long>(macs), lowerSeconds / states, compileSeconds / states,
                runSeconds / states, slowest, runSeconds / states / double(macs) * 1e9);
  }
}
