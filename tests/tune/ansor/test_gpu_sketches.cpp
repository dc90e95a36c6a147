// The auto-scheduler's GPU sketches (tune/ansor/GpuSketches.h) on the zoo's NCHW tasks as GPU
// builds extract them (resnet-18's 3x3 convolution with its epilogue, mobilenet's depthwise
// convolution, the classifier's dense layer and its softmax, with 100 classes so that both
// reductions are shared across threads): the rules each task gets; every sketch and 300 random
// annotated states per task, for an H100's limits and a Mali profile's, refused by the count of
// GpuStateLimits.h with a reason or lowered for the GPU within the limits (a state the count
// passes and the lowering refuses fails the test); a seeded sample of them run in the loop-IR
// evaluator against the reference; the sketches and 16 random states per task run on the first
// OpenCL device (PoCL here) and compiled for CUDA by NVRTC (run where a GPU is); mutations that
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

// ---- limits and numbers -----------------------------------------------------------------------

TEST(GpuAnsorSketches, StatesLowerWithinTheLimitsOrAreRefusedWithAReason) {
  uint64_t seed = kernelcheck::fuzzSeed();
  std::mt19937_64 rng(seed);
  constexpr int kStatesPerTask = 300;
  constexpr int kEvaluatedPerTask = 12;  // besides the sketches, in the loop-IR evaluator
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
