#include <fmt/format.h>

#include "support/Error.h"
#include "tune/autotvm/BasicTuners.h"
#include "tune/autotvm/Tuner.h"

namespace tessel::tune::autotvm {

std::unique_ptr<Tuner> makeTuner(const std::string& name, TuningTaskPtr task, uint64_t seed) {
  TESSEL_CHECK(task && task->space, "makeTuner: no task");
  if (name == "random") return std::make_unique<RandomTuner>(std::move(task), seed);
  if (name == "gridsearch") return std::make_unique<GridSearchTuner>(std::move(task), seed);
  if (name == "ga") return std::make_unique<GATuner>(std::move(task), seed);
  fail("Invalid tuner: {} (tuners: random, gridsearch, ga, xgb, xgb_knob, xgb_itervar, xgb_curve, xgb-rank, xgb-reg)", name);
}

}  // namespace tessel::tune::autotvm
