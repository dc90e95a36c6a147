/// Test support for the graph passes of int8 inference: seeded random tensors, a graph
/// compiled for the CPU and run by the graph executor, and bit-for-bit comparison of outputs.
#pragma once
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "graph/Build.h"
#include "runtime/GraphExecutor.h"
#include "support/TempDir.h"

namespace tessel::graph::testsupport {

/// float32, uniform in [low, high), the same for the same seed.
inline runtime::Tensor randomTensor(std::vector<int64_t> shape, uint32_t seed, float low, float high) {
  auto t = runtime::Tensor::empty(std::move(shape), DataType::float32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  for (int64_t i = 0; i < t.numel(); ++i) t.dataAs<float>()[i] = dist(rng);
  return t;
}

/// float32, uniform in [-limit, limit), the same for the same seed.
inline runtime::Tensor randomTensor(std::vector<int64_t> shape, uint32_t seed, float limit = 1) {
  return randomTensor(std::move(shape), seed, -limit, limit);
}

/// The graph's outputs computed by its compiled CPU module (default build options unless given).
inline std::vector<runtime::Tensor> runCompiled(const Graph& graph, const std::map<std::string, runtime::Tensor>& inputs,
                                                const BuildOptions& options = {}) {
  TempDir dir;
  buildGraph(graph, dir.path(), options);
  auto executor = runtime::GraphExecutor::load(dir.path());
  for (const auto& [name, value] : inputs) executor.setInput(name, value);
  executor.run();
  std::vector<runtime::Tensor> outputs;
  for (int o = 0; o < executor.numOutputs(); ++o) outputs.push_back(executor.getOutput(o).clone());
  return outputs;
}

inline bool bitEqual(const runtime::Tensor& a, const runtime::Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

}  // namespace tessel::graph::testsupport
