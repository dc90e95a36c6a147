#include "driver/NetworkEvaluation.h"

#include "runtime/GraphExecutor.h"
#include "runtime/TimeEvaluator.h"

namespace tessel::driver {

NetworkEvaluation timeAgainstUntuned(const std::string& tunedDirectory, const std::string& untunedDirectory,
                                     const runtime::Device& device, int repeat) {
  auto tuned = runtime::GraphExecutor::load(tunedDirectory, {device});
  auto untuned = runtime::GraphExecutor::load(untunedDirectory, {device});
  tuned.setZeroInputs();
  untuned.setZeroInputs();
  runtime::TimeEvaluatorOptions timing;
  timing.number = 1;
  timing.repeat = repeat;
  timing.minRepeatMs = 100;
  auto r = runtime::timeInterleaved({[&] { tuned.run(); }, [&] { untuned.run(); }}, timing);
  NetworkEvaluation e;
  e.tuned = {r[0].mean * 1e3, r[0].stddev * 1e3};
  e.untuned = NetworkTiming{r[1].mean * 1e3, r[1].stddev * 1e3};
  e.rounds = runtime::roundRatios(r[1], r[0]);
  e.device = device.str();
  return e;
}

}  // namespace tessel::driver
