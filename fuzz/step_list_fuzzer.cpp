// libFuzzer harness: step lists (the JSON of a schedule). A list that reads must print, write
// back to the same JSON, and either fail to replay with an Error or replay, lower and generate
// code on the example DAGs: a matmul and a padded NHWC convolution with an epilogue.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "codegen/CSource.h"
#include "ops/Examples.h"
#include "passes/Lower.h"
#include "schedule/Steps.h"
#include "support/Error.h"
#include "support/Json.h"

using namespace tessel;

namespace {
const std::vector<te::ComputeDAG>& dags() {
  static const std::vector<te::ComputeDAG> all = {ops::exampleByName("matmul", {16, 16, 16}),
                                                  ops::exampleByName("conv2d_bias_relu", {1, 8, 6, 6, 8, 3, 3, 1, 1})};
  return all;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<schedule::StepPtr> steps;
  try {
    steps = schedule::stepsFromJson(parseJson(std::string_view(reinterpret_cast<const char*>(data), size), "steps"));
  } catch (const Error&) {
    return 0;
  }
  nlohmann::json written = schedule::stepsToJson(steps);
  if (schedule::stepsToJson(schedule::stepsFromJson(written)) != written) std::abort();
  (void)schedule::printSteps(steps);
  for (const te::ComputeDAG& dag : dags()) {
    try {
      auto function = passes::lower(schedule::replay(dag, steps), "fuzz");
      (void)codegen::generateCSource({function});
    } catch (const Error&) {
    }
  }
  return 0;
}
