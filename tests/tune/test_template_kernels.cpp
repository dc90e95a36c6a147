// Random configs of every CPU template, compiled and run: whatever tile a tuner picks, the
// kernel computes what the reference evaluator computes.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "common/KernelCheck.h"
#include "ops/Conv2d.h"
#include "ops/Broadcast.h"
#include "ops/Dense.h"
#include "ops/Elementwise.h"
#include "ops/Winograd.h"
#include "tune/FlippedConfig.h"
#include "tune/autotvm/CpuTemplates.h"
#include "tune/autotvm/TuneTask.h"

using namespace tessel;
using namespace tessel::tune::autotvm;

namespace {

te::ComputeDAG conv(ops::Layout layout, bool depthwise, int64_t stride) {
  bool nhwc = layout == ops::Layout::NHWC;
  int64_t c = 16, k = depthwise ? 1 : 24, size = 9;
  auto data = te::placeholder(nhwc ? std::vector<int64_t>{1, size, size, c} : std::vector<int64_t>{1, c, size, size},
                              DataType::float32(), "data");
  std::vector<int64_t> w = depthwise ? (nhwc ? std::vector<int64_t>{3, 3, c, 1} : std::vector<int64_t>{c, 1, 3, 3})
                                     : (nhwc ? std::vector<int64_t>{3, 3, c, k} : std::vector<int64_t>{k, c, 3, 3});
  auto weight = te::placeholder(w, DataType::float32(), "weight");
  ops::Conv2dAttrs a;
  a.padding = {1, 1, 1, 1};
  a.strides = {stride, stride};
  a.layout = layout;
  auto y = depthwise ? ops::depthwiseConv2d(data, weight, a) : ops::conv2d(data, weight, a);
  return te::ComputeDAG({ops::relu(y)}, {data, weight});
}

/// Winograd F(m x m) on a 7x7 image (partial tiles) with a bias and relu epilogue.
te::ComputeDAG winograd(int m) {
  auto data = te::placeholder({1, 7, 7, 16}, DataType::float32(), "data");
  auto weight = te::placeholder({m + 2, m + 2, 16, 24}, DataType::float32(), "weight");
  auto bias = te::placeholder({1, 1, 1, 24}, DataType::float32(), "bias");
  ops::Conv2dAttrs a;
  a.padding = {1, 1, 1, 1};
  a.layout = ops::Layout::NHWC;
  return te::ComputeDAG({ops::relu(ops::add(ops::conv2dWinograd(data, weight, a, m), bias))}, {data, weight, bias});
}

/// A 3x3 conv with weights packed by 16 output channels, bias and relu.
te::ComputeDAG packed() {
  auto data = te::placeholder({1, 9, 9, 16}, DataType::float32(), "data");
  auto weight = te::placeholder({2, 3, 3, 16, 16}, DataType::float32(), "weight");
  auto bias = te::placeholder({1, 1, 1, 32}, DataType::float32(), "bias");
  ops::Conv2dAttrs a;
  a.padding = {1, 1, 1, 1};
  a.layout = ops::Layout::NHWC;
  return te::ComputeDAG({ops::relu(ops::add(ops::conv2dPacked(data, weight, a), bias))}, {data, weight, bias});
}

TEST(TemplateKernels, RandomConfigsOfEveryTemplateMatchTheReference) {
  auto data = te::placeholder({2, 64}, DataType::float32(), "data");
  auto weight = te::placeholder({10, 64}, DataType::float32(), "weight");
  std::vector<te::ComputeDAG> dags = {conv(ops::Layout::NHWC, false, 1), conv(ops::Layout::NCHW, false, 2),
                                      conv(ops::Layout::NHWC, true, 1),  conv(ops::Layout::NCHW, true, 1),
                                      te::ComputeDAG({ops::dense(data, weight)}, {data, weight}),
                                      winograd(2),                       winograd(4),
                                      packed()};
  std::mt19937_64 rng(11);
  for (const auto& dag : dags) {
    auto task = makeCpuTuningTask("t", dag);
    // Three random configs, and the fallback with every boolean knob flipped.
    for (int i = 0; i < 4; ++i) {
      uint64_t index = std::uniform_int_distribution<uint64_t>(0, task->space->size() - 1)(rng);
      auto config = i == 3 ? flipped(*task->space, task->space->get(task->fallbackIndex)) : task->space->get(index);
      std::string error;
      auto input = instantiateConfig(*task, config, &error);
      if (!input) continue;  // an invalid tile is a clean error record, tested elsewhere
      auto result = kernelcheck::checkAgainstReference(schedule::replay(dag, input->steps), 5, kernelcheck::boundsCheckedOptions());
      // Winograd's transforms round differently from the reference's stages: a few ulps more.
      double tolerance = task->templateName == "conv2d_nhwc_winograd.x86" ? 1e-4 : 1e-5;
      EXPECT_LT(result.maxRelativeError, tolerance) << task->templateName << " " << config.str();
    }
  }
}

// Each option of parallel_chunks fuses another number of outer loops into the parallel loop
// (one chunk per core on a 1-core machine model: none; 16 per core on a 16-core one: as many as
// are exact); each computes what the reference does, with the weights outer and not.
TEST(TemplateKernels, EveryParallelChunksOptionMatchesTheReference) {
  for (const auto& dag : {conv(ops::Layout::NHWC, false, 1), conv(ops::Layout::NCHW, false, 2), conv(ops::Layout::NHWC, true, 1),
                          winograd(4), packed()}) {
    std::set<std::string> schedules;
    std::string templateName;
    for (const char* machine : {"cpu -num-cores=1", "cpu -num-cores=16"}) {
      auto task = makeCpuTuningTask("t", dag, target::Target::parse(machine));
      const ConfigSpace& space = *task->space;
      templateName = task->templateName;
      ASSERT_GE(space.knobIndex("parallel_chunks"), 0) << templateName;
      for (bool weightsOuter : {false, true}) {
        std::vector<size_t> choices = space.get(task->fallbackIndex).choices();
        choices[size_t(space.knobIndex("weights_outer"))] = *space.optionIndex("weights_outer", weightsOuter);
        for (size_t option = 0; option < space.knob("parallel_chunks").options.size(); ++option) {
          choices[size_t(space.knobIndex("parallel_chunks"))] = option;
          ConfigEntity config = space.fromChoices(choices);
          auto steps = task->instantiate(config);
          if (!schedules.insert(schedule::stepsToJson(steps).dump()).second) continue;  // checked already
          auto result = kernelcheck::checkAgainstReference(schedule::replay(dag, steps), 5, kernelcheck::boundsCheckedOptions());
          double tolerance = templateName == "conv2d_nhwc_winograd.x86" ? 1e-4 : 1e-5;
          EXPECT_LT(result.maxRelativeError, tolerance) << templateName << " " << machine << " " << config.str();
        }
      }
    }
    // More schedules than the two of weights_outer: the knob changed the loop nest.
    EXPECT_GE(schedules.size(), 3u) << templateName;
  }
}

}  // namespace
