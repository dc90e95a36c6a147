// The auto-scheduler's GPU sketches (tune/ansor/GpuSketches.h) on the zoo's NCHW tasks as GPU
// builds extract them (resnet-18's 3x3 convolution with its epilogue, mobilenet's depthwise
// convolution, the classifier's dense layer and its softmax, with 100 classes so that both
// reductions are shared across threads): the rules each task gets; every sketch and 120 random
// annotated states per task, for an H100's limits and for a Mali profile's, refused by the count of
// GpuStateLimits.h with a reason or lowered for the GPU within the limits (a state the count
// passes and the lowering refuses fails the test); a seeded sample of them run in the loop-IR
// evaluator against the reference; the sketches and 8 random states per task run on the first
// OpenCL device (PoCL here), the sketches and 12 random states per task compiled for CUDA by
// NVRTC (run where a GPU is); mutations that
// stay within the limits, the policy's proposals, and the features of thread bindings.
//
// Environment: TESSEL_FUZZ_SEED (default: random, printed) picks the states.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <random>
#include <set>

#include "common/GpuKernelCheck.h"
#include "common/GpuRequire.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/passes/PassManager.h"
#include "passes/Lower.h"
#include "runtime/CudaDevice.h"
#include "runtime/OpenclDevice.h"
#include "support/ThreadPool.h"
#include "tune/ansor/AnsorZooTasks.h"
#include "tune/ansor/Annotation.h"
#include "tune/ansor/Features.h"
#include "tune/ansor/GpuStateLimits.h"
#include "tune/ansor/Mutations.h"
#include "tune/ansor/SketchPolicy.h"

using namespace tessel;
using namespace tessel::tune::ansor;
using schedule::State;

namespace {

const std::vector<ansortest::ZooTask>& tasks() {
  static const auto all = ansortest::zooTasks(ops::Layout::NCHW, 100);
  return all;
}

const ansortest::ZooTask& task(const std::string& kind) {
  for (auto& t : tasks())
    if (t.what.rfind(kind + " ", 0) == 0) return t;
  throw std::runtime_error("no zoo task " + kind);
}

std::string descriptions(const std::vector<Sketch>& sketches) {
  std::vector<std::string> all;
  for (auto& s : sketches) all.push_back(s.description);
  return fmt::format("{}", fmt::join(all, "\n"));
}

int countContaining(const std::vector<Sketch>& sketches, const std::string& phrase) {
  int n = 0;
  for (auto& s : sketches) n += s.description.find(phrase) != std::string::npos;
  return n;
}

/// The device profiles the states are made for, and the target a kernel of each is built for.
struct Profile {
  std::string name, target;
  passes::GpuLimits limits;
};
std::vector<Profile> profiles() {
  return {{"H100", "cuda", passes::GpuLimits::cudaSm90()}, {"Mali", "opencl -device=mali", passes::GpuLimits::mali()}};
}

/// Random annotated states of a task's GPU sketches, the sketches (holes at 1) first.
struct Sampled {
  std::vector<State> states;
  std::vector<std::string> what;
};

Sampled sample(const te::ComputeDAG& dag, const passes::GpuLimits& limits, int randomStates, std::mt19937_64& rng) {
  Sampled out;
  auto sketches = generateSketches(dag, SketchOptions::forGpu(limits));
  for (auto& s : sketches) {
    out.states.push_back(schedule::replay(dag, s.steps));
    out.what.push_back("sketch: " + s.description);
  }
  SplitFactorizations factorizations;
  AnnotationOptions options = AnnotationOptions::forGpu(limits);
  for (int i = 0; i < randomStates; ++i) {
    const Sketch& sketch = sketches[size_t(i) % sketches.size()];
    AnnotatedState a = annotateRandomly(dag, sketch, factorizations, rng, options);
    std::string json = schedule::stepsToJson(a.steps).dump();
    out.states.push_back(std::move(a.state));
    out.what.push_back(fmt::format("state {} of '{}':\n{}\nsteps: {}", i, sketch.description, schedule::printSteps(a.steps), json));
  }
  return out;
}

}  // namespace

// ---- the rules on known tasks -----------------------------------------------------------------

TEST(GpuAnsorSketches, ConvolutionTilesIntoItsEpilogueWithSharedInputs) {
  for (const auto& t : {task("conv2d"), task("depthwise")}) {
    auto sketches = generateSketches(t.dag, SketchOptions::forGpu(passes::GpuLimits::cudaSm90()));
    ASSERT_EQ(sketches.size(), 1u) << t.what << "\n" << descriptions(sketches);
    const Sketch& s = sketches[0];
    EXPECT_NE(s.description.find("at its threads"), std::string::npos) << s.description;
    // The padded input and the weights copied into shared memory, by all threads together.
    std::string pad = t.what.rfind("conv2d", 0) == 0 ? "pad_temp" : "PaddedInput";
    EXPECT_NE(s.description.find("cache read " + pad + " in shared memory"), std::string::npos) << s.description;
    EXPECT_NE(s.description.find("cache read placeholder_1 in shared memory"), std::string::npos) << s.description;
    EXPECT_NE(s.description.find("inline " + pad), std::string::npos) << s.description;
    State state = schedule::replay(t.dag, s.steps);
    int shared = 0;
    for (auto& stage : state.stages()) shared += stage.memoryScope == "shared";
    EXPECT_EQ(shared, 2) << t.what;
    // The output's three bound levels, and the bounds random annotation keeps: threads, vthreads.
    std::set<schedule::Annotation> bound;
    for (auto& stage : state.stages())
      for (int id : stage.leaves) bound.insert(stage.iterator(id).annotation);
    EXPECT_TRUE(bound.count(schedule::Annotation::BlockX) && bound.count(schedule::Annotation::VThread) &&
                bound.count(schedule::Annotation::ThreadX))
        << t.what;
    EXPECT_EQ(s.bounds.size(), 2u);
  }
}

TEST(GpuAnsorSketches, ReductionsWithoutSpatialParallelismAreSharedAcrossThreads) {
  passes::GpuLimits h100 = passes::GpuLimits::cudaSm90();
  // The dense layer (100 outputs of 512 steps): across threads, or tiled into its bias epilogue.
  auto dense = generateSketches(task("dense").dag, SketchOptions::forGpu(h100));
  EXPECT_EQ(dense.size(), 2u) << descriptions(dense);
  EXPECT_EQ(countContaining(dense, "cross-thread reduction"), 1) << descriptions(dense);
  EXPECT_EQ(countContaining(dense, "at its threads"), 1) << descriptions(dense);
  // The softmax (two reductions of 100): each across threads or not.
  auto softmax = generateSketches(task("softmax").dag, SketchOptions::forGpu(h100));
  EXPECT_EQ(softmax.size(), 4u) << descriptions(softmax);
  EXPECT_EQ(countContaining(softmax, "cross-thread reduction of T_softmax_maxelem"), 2) << descriptions(softmax);
  EXPECT_EQ(countContaining(softmax, "cross-thread reduction of T_softmax_expsum"), 2) << descriptions(softmax);
  // Without the rule, a reduction is computed where its readers are.
  EXPECT_GE(countContaining(softmax, "compute T_softmax_maxelem at"), 1) << descriptions(softmax);
  // Ten classes: the reductions are too short to share out (at most a warp).
  auto small = ansortest::zooTasks(ops::Layout::NCHW, 10);
  EXPECT_EQ(countContaining(generateSketches(small[3].dag, SketchOptions::forGpu(h100)), "cross-thread"), 0);
}

TEST(GpuAnsorSketches, CpuSketchesAreUnchangedByTheOption) {
  // The same DAG without the option gets the CPU rules (no thread bindings anywhere).
  for (auto& t : tasks())
    for (auto& sketch : generateSketches(t.dag)) {
      State s = schedule::replay(t.dag, sketch.steps);
      for (auto& stage : s.stages())
        for (int id : stage.leaves) EXPECT_EQ(stage.iterator(id).annotation, schedule::Annotation::None) << sketch.description;
      EXPECT_TRUE(sketch.bounds.empty());
    }
}

TEST(GpuAnsorSketches, EveryTaskOfTheZoosNetworksGetsSketchesThatLower) {
  // Every fused function a GPU build of these networks has (convolutions of every kind with
  // their epilogues, pooling, concatenation, the classifier): sketches, and random states of
  // each that lower within an H100's limits. A DAG the rules cannot place is an Error here.
  passes::GpuLimits h100 = passes::GpuLimits::cudaSm90();
  std::mt19937_64 rng(kernelcheck::fuzzSeed());
  SplitFactorizations factorizations;
  for (std::string network : {"mobilenet-v2", "squeezenet_v1.1", "inception_v3"}) {
    graph::ModelOptions o;
    o.imageSize = network == "inception_v3" ? 75 : 32;
    graph::OptimizeOptions passes;
    passes.desiredLayout = ops::Layout::NCHW;
    passes.fuseSeparable = false;
    auto networkTasks = graph::extractTasks(graph::optimizeGraph(graph::buildModel(network, o), passes));
    int lowered = 0;
    for (auto& t : networkTasks) {
      SCOPED_TRACE(network + ", " + t.name);
      std::vector<Sketch> sketches;
      ASSERT_NO_THROW(sketches = generateSketches(t.dag, SketchOptions::forGpu(h100)));
      for (auto& sketch : sketches)
        for (int i = 0; i < 2; ++i) {
          AnnotatedState a = annotateRandomly(t.dag, sketch, factorizations, rng, AnnotationOptions::forGpu(h100));
          if (gpuLimitViolation(a.state, h100)) continue;
          EXPECT_NO_THROW(passes::lowerForGpu(a.state, "k", h100)) << schedule::printSteps(a.steps);
          ++lowered;
        }
    }
    EXPECT_GE(lowered, int(networkTasks.size())) << network;
  }
}

// ---- limits and numbers -----------------------------------------------------------------------

TEST(GpuAnsorSketches, StatesLowerWithinTheLimitsOrAreRefusedWithAReason) {
  uint64_t seed = kernelcheck::fuzzSeed();
  std::mt19937_64 rng(seed);
  constexpr int kStatesPerTask = 120;  // per profile: 240 per task
  constexpr int kEvaluatedPerTask = 4;  // besides the sketches, in the loop-IR evaluator
  for (const Profile& profile : profiles())
    for (auto& t : tasks()) {
      Sampled s = sample(t.dag, profile.limits, kStatesPerTask, rng);
      auto reference = kernelcheck::makeReferenceData(t.dag, rng());
      std::vector<std::string> problems(s.states.size()), refusals(s.states.size());
      size_t sketchCount = s.states.size() - kStatesPerTask;
      {
        ThreadPool pool;
        pool.parallelFor(int(s.states.size()), [&](int i) {
          const State& state = s.states[size_t(i)];
          if (auto why = gpuLimitViolation(state, profile.limits)) {
            refusals[size_t(i)] = *why;
            return;
          }
          try {
            auto lowered = passes::lowerForGpu(state, fmt::format("k{}", i), profile.limits);
            if (size_t(i) < sketchCount + kEvaluatedPerTask) {
              double error = kernelcheck::evaluateAndCompare(lowered.function, reference);
              if (!kernelcheck::withinTolerance(error, reference)) problems[size_t(i)] = fmt::format("evaluated error {}", error);
            }
          } catch (const std::exception& e) {
            problems[size_t(i)] = e.what();
          }
        });
      }
      int failed = 0, refused = 0;
      std::map<std::string, int> reasons;
      for (size_t i = 0; i < s.states.size(); ++i) {
        if (!problems[i].empty() && ++failed <= 3) ADD_FAILURE() << profile.name << ", " << t.what << ": " << s.what[i] << "\n" << problems[i];
        if (!refusals[i].empty()) {
          ++refused;
          ++reasons[refusals[i].substr(refusals[i].find(' ') + 1, 30)];
        }
        EXPECT_FALSE(i < sketchCount && !refusals[i].empty()) << "a sketch itself is refused: " << refusals[i];
      }
      EXPECT_EQ(failed, 0) << profile.name << ", " << t.what << " (seed " << seed << ")";
      // Annotation samples within the limits: refusals are the exception.
      EXPECT_LT(refused, kStatesPerTask / 4) << profile.name << ", " << t.what;
      std::printf("[ gpu      ] %s, %s: %zu sketches, %d states, %d refused by count (%s)\n", profile.name.c_str(), t.what.c_str(),
                  sketchCount, kStatesPerTask, refused, fmt::format("{}", reasons).c_str());
    }
}

namespace {

/// The sketches and `randomCount` random states (not refused by count) of every task, for the
/// profile's limits, lowered and built for its target in one module per task, and run on its
/// device against the reference where `run`.
void buildAndRun(const Profile& profile, int randomCount, bool run) {
  uint64_t seed = kernelcheck::fuzzSeed();
  std::mt19937_64 rng(seed);
  for (auto& t : tasks()) {
    Sampled s = sample(t.dag, profile.limits, randomCount, rng);
    std::vector<passes::GpuLoweredFunction> kernels;
    std::vector<size_t> kept;
    for (size_t i = 0; i < s.states.size(); ++i) {
      if (gpuLimitViolation(s.states[i], profile.limits)) continue;
      kernels.push_back(passes::lowerForGpu(s.states[i], fmt::format("k{}", i), profile.limits));
      kept.push_back(i);
    }
    ASSERT_GE(kernels.size(), size_t(randomCount) / 2) << t.what;
    codegen::GpuBinary binary = codegen::buildGpuKernels(kernels, target::Target::parse(profile.target));
    // The blocks' threads wait for the shared copies before reading them.
    if (t.what.rfind("conv2d", 0) == 0) {
      EXPECT_NE(binary.source.code.find(profile.target == "cuda" ? "__syncthreads()" : "barrier(CLK_LOCAL_MEM_FENCE)"),
                std::string::npos);
    }
    if (!run) continue;
    auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
    auto reference = kernelcheck::makeReferenceData(t.dag, rng());
    for (size_t k = 0; k < kept.size(); ++k) {
      double error = kernelcheck::runGpuAndCompare(module.kernel(kernels[k].function.name), reference);
      EXPECT_LT(error, 1e-4) << profile.name << ", " << t.what << " (seed " << seed << "): " << s.what[kept[k]];
    }
  }
}

}  // namespace

TEST(GpuAnsorSketches, SketchesAndStatesMatchTheReferenceOnOpencl) {
  TESSEL_REQUIRE_OPENCL();
  // PoCL runs each kernel in about a second (its work-group functions are compiled at the first
  // launch): 8 random states per task keep the test near half a minute.
  buildAndRun(profiles()[1], 8, true);  // the Mali profile's limits
}

TEST(GpuAnsorSketches, SketchesAndStatesCompileForCudaAndRunWhereAGpuIs) {
  std::string why = kernelcheck::cudaUnavailableReason();
  buildAndRun(profiles()[0], 12, why.empty());  // an H100's limits
  if (!why.empty()) {
    if (testsupport::deviceRequired("TESSEL_REQUIRE_CUDA")) FAIL() << "TESSEL_REQUIRE_CUDA=1: " << why;
    GTEST_SKIP() << "compiled with NVRTC, not run: " << why;
  }
}

// ---- the search on a GPU ----------------------------------------------------------------------

TEST(GpuAnsorSearch, MutationsStayWithinTheLimits) {
  // Mali's 256 threads per block: a tile-size change easily goes past them.
  passes::GpuLimits mali = passes::GpuLimits::mali();
  AnnotationOptions options = AnnotationOptions::forGpu(mali);
  std::mt19937_64 rng(5);
  SplitFactorizations factorizations;
  int exceeding = 0;
  for (auto& t : tasks()) {
    auto sketches = generateSketches(t.dag, SketchOptions::forGpu(mali));
    int tileChildren = 0, unrollChildren = 0, refusedByCount = 0;
    for (int i = 0; i < 20; ++i) {
      AnnotatedState parent = annotateRandomly(t.dag, sketches[size_t(i) % sketches.size()], factorizations, rng, options);
      if (gpuLimitViolation(parent.state, mali)) continue;
      for (int m = 0; m < 10; ++m) {
        for (MutationKind kind : {MutationKind::TileSize, MutationKind::AutoUnroll}) {
          auto child = mutate(t.dag, parent, kind, factorizations, options, rng);
          if (!child) continue;
          (kind == MutationKind::TileSize ? tileChildren : unrollChildren) += 1;
          ASSERT_EQ(child->steps.size(), parent.steps.size());
          EXPECT_FALSE(gpuLimitViolation(child->state, mali).has_value()) << t.what << "\n" << schedule::printSteps(child->steps);
          EXPECT_EQ(schedule::replay(t.dag, child->steps).toString(), child->state.toString());
        }
        // Without the limits' check, some of the same mutations would exceed them.
        AnnotationOptions unchecked = options;
        unchecked.gpu.reset();
        auto free = mutate(t.dag, parent, MutationKind::TileSize, factorizations, unchecked, rng);
        refusedByCount += free && gpuLimitViolation(free->state, mali).has_value();
      }
    }
    EXPECT_GT(tileChildren, 20) << t.what;
    EXPECT_GT(unrollChildren, 20) << t.what;
    std::printf("[ gpu      ] %s: %d tile-size and %d unroll children; unchecked, %d tile-size children exceeded the limits\n",
                t.what.c_str(), tileChildren, unrollChildren, refusedByCount);
    exceeding += refusedByCount;
  }
  EXPECT_GT(exceeding, 0) << "no mutation would exceed the limits: the check above proves nothing";
  // GPU mutation weights: no compute-location or parallel changes (the sketch places and binds).
  MutationWeights gpu = MutationWeights::forGpu();
  EXPECT_EQ(gpu.computeLocation + gpu.parallel, 0.0);
}

TEST(GpuAnsorSearch, ThePolicyProposesNewStatesWithinTheLimits) {
  passes::GpuLimits mali = passes::GpuLimits::mali();
  for (auto& t : tasks()) {
    SketchPolicyOptions o = SketchPolicyOptions::forGpu(mali);
    o.populationSize = 64;
    o.seed = 11;
    SketchPolicy policy(t.dag, std::make_shared<RandomCostModel>(3), o);
    std::set<std::string> seen;
    for (int round = 0; round < 3; ++round) {
      auto batch = policy.nextBatch(8);
      EXPECT_GE(batch.size(), 4u) << t.what;
      std::vector<MeasuredSchedule> measured;
      for (auto& steps : batch) {
        EXPECT_TRUE(seen.insert(scheduleKey(steps)).second) << t.what << ": proposed twice";
        State state = schedule::replay(t.dag, steps);
        EXPECT_FALSE(gpuLimitViolation(state, mali).has_value()) << t.what;
        measured.push_back({steps, 1e9 * double(measured.size() + 1)});
      }
      policy.update(measured);
    }
  }
}

TEST(GpuAnsorSearch, TheCountRefusesEachLimitAsTheLoweringDoes) {
  // A random state of the convolution for an H100, checked against devices with less: the
  // count names the limit the lowering's verification names too.
  passes::GpuLimits h100 = passes::GpuLimits::cudaSm90();
  const auto& conv = task("conv2d");
  auto sketches = generateSketches(conv.dag, SketchOptions::forGpu(h100));
  std::mt19937_64 rng(9);
  SplitFactorizations factorizations;
  State state;
  // One with 32 threads or more and virtual threads, so that every limit below binds.
  for (int i = 0; i < 200; ++i) {
    state = annotateRandomly(conv.dag, sketches[0], factorizations, rng, AnnotationOptions::forGpu(h100)).state;
    bool vthreads = false;
    for (auto& s : state.stages())
      for (int id : s.leaves) vthreads = vthreads || (s.iterator(id).annotation == schedule::Annotation::VThread && s.iterator(id).extent > 1);
    if (vthreads) break;
  }
  ASSERT_FALSE(gpuLimitViolation(state, h100).has_value());
  ASSERT_NO_THROW(passes::lowerForGpu(state, "k", h100));
  auto expectRefused = [&](passes::GpuLimits small, const std::string& reason) {
    small.profile = "small";
    auto why = gpuLimitViolation(state, small);
    ASSERT_TRUE(why.has_value()) << reason;
    EXPECT_NE(why->find(reason), std::string::npos) << *why;
    EXPECT_NE(why->find("(small)"), std::string::npos) << *why;
    std::string lowering;
    try {
      passes::lowerForGpu(state, "k", small);
    } catch (const Error& e) {
      lowering = e.what();
    }
    EXPECT_NE(lowering.find(reason), std::string::npos) << "the lowering: '" << lowering << "', the count: '" << *why << "'";
  };
  passes::GpuLimits few = h100;
  few.maxThreadsPerBlock = 8;
  expectRefused(few, "threads per block");
  passes::GpuLimits narrow = h100;
  narrow.maxBlockDimensions = {8, 1024, 64};
  expectRefused(narrow, "threads along threadIdx.x");
  passes::GpuLimits noVthreads = h100;
  noVthreads.maxVThreadExtent = 1;
  expectRefused(noVthreads, "virtual thread extent");
  passes::GpuLimits noShared = h100;
  noShared.maxSharedMemoryPerBlock = 16;
  noShared.maxDynamicSharedMemoryPerBlock = 0;
  expectRefused(noShared, "bytes of shared memory per block");
  passes::GpuLimits noLocal = h100;
  noLocal.maxLocalMemoryPerThread = 2;
  expectRefused(noLocal, "bytes of local memory per thread");
}

TEST(GpuAnsorFeatures, BoundLoopsAndSharedStagesShowInTheFeatures) {
  const auto& conv = task("conv2d");
  auto sketches = generateSketches(conv.dag, SketchOptions::forGpu(passes::GpuLimits::cudaSm90()));
  std::mt19937_64 rng(2);
  SplitFactorizations factorizations;
  AnnotatedState gpu = annotateRandomly(conv.dag, sketches[0], factorizations, rng, AnnotationOptions::forGpu(passes::GpuLimits::cudaSm90()));
  // blockIdx x, y, z, threadIdx x, y, z, vthread, bound, shared; then the CPU machine features
  const size_t gpuAt = kStoreFeatureLength - 9 - tune::autotvm::kMachineStageLength;
  auto stores = storeFeatures(gpu.state, nullptr);
  int bound = 0, shared = 0;
  for (auto& f : stores) {
    ASSERT_EQ(f.size(), kStoreFeatureLength);
    bound += f[gpuAt + 7] == 1.0f;
    shared += f[gpuAt + 8] == 1.0f;
    if (f[gpuAt + 7] == 1.0f) {
      EXPECT_GT(f[gpuAt + 0], 0.0f);  // blockIdx.x: at least 2 blocks of a 64x8x8 output
      EXPECT_GT(f[gpuAt + 3] + f[gpuAt + 6], 0.0f);  // threads or virtual threads
    }
  }
  EXPECT_EQ(bound, int(stores.size()));  // every stage of the kernel is under its bound loops
  EXPECT_EQ(shared, 2);                  // the padded input's and the weights' copies
  EXPECT_EQ(stateFeatures(gpu.state, nullptr).size(), kStateFeatureLength);
  // A CPU state of the same task: the GPU features are zero.
  auto cpuSketches = generateSketches(conv.dag);
  AnnotatedState cpu = annotateRandomly(conv.dag, cpuSketches[0], factorizations, rng);
  for (auto& f : storeFeatures(cpu.state, nullptr))
    for (size_t k = gpuAt; k < gpuAt + 9; ++k) EXPECT_EQ(f[k], 0.0f);
  // A GPU state has no CPU machine: its machine features are zero.
  for (auto& f : stores)
    for (size_t k = gpuAt + 9; k < kStoreFeatureLength; ++k) EXPECT_EQ(f[k], 0.0f);
}
