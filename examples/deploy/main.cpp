// Deploying a compiled network: load a module directory written by `tessel compile` (or
// graph::buildGraph), feed an input, run, and print the top-5 classes and the latency.
// It links only the runtime library (tessel::runtime), as an application shipping a model would.
//
//   tessel_deploy MODULE_DIR [INPUT.npy]      (without an input: uniform random in [0, 1))
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "runtime/GraphExecutor.h"
#include "runtime/MachineLoad.h"
#include "runtime/Npy.h"
#include "support/ErrorType.h"

using namespace tessel;

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s MODULE_DIR [INPUT.npy]\n", argv[0]);
    return 2;
  }
  try {
    auto executor = runtime::GraphExecutor::load(argv[1]);
    // Kernels run on the cores other programs leave free (the runtime's thread policy).
    runtime::useFreeCores();
    runtime::Tensor input;
    if (argc == 3) {
      input = runtime::loadNpy(argv[2]);
    } else {
      input = runtime::Tensor::empty(executor.inputShape(0), executor.inputDtype(0));
      std::mt19937 rng(0);
      std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
      float* p = input.dataAs<float>();
      for (int64_t i = 0; i < input.numel(); ++i) p[i] = uniform(rng);
    }
    executor.setInput(0, input);
    executor.run();
    runtime::Tensor output = executor.getOutput(0);
    const float* scores = output.dataAs<float>();
    std::vector<int64_t> order(size_t(output.numel()));
    std::iota(order.begin(), order.end(), 0);
    size_t top = std::min<size_t>(5, order.size());
    std::partial_sort(order.begin(), order.begin() + long(top), order.end(),
                      [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
    for (size_t i = 0; i < top; ++i) std::printf("class %lld: %.6g\n", (long long)order[i], scores[order[i]]);
    runtime::TimeEvaluatorOptions timing;
    timing.repeat = 5;
    timing.minRepeatMs = 50;
    auto result = executor.benchmark(timing);
    std::printf("Mean inference time (std dev): %.2f ms (%.2f ms)\n", result.mean * 1e3, result.stddev * 1e3);
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
