#include <fmt/format.h>

#include <optional>

#include "support/Error.h"
#include "tune/autotvm/BasicTuners.h"
#include "tune/autotvm/Tuner.h"
#include "tune/autotvm/XGBTuner.h"

namespace tessel::tune::autotvm {

namespace {

/// xgb[_FEATURE][-LOSS], as AutoTVM's tutorials name them: xgb, xgb_knob, xgb-rank, xgb_curve-reg.
std::optional<XGBTunerOptions> parseXgbName(const std::string& name) {
  if (name.rfind("xgb", 0) != 0) return std::nullopt;
  XGBTunerOptions options;
  std::string rest = name.substr(3);
  if (auto dash = rest.find('-'); dash != std::string::npos) {
    options.lossType = rest.substr(dash + 1);
    rest = rest.substr(0, dash);
  }
  if (!rest.empty()) {
    if (rest[0] != '_') return std::nullopt;
    options.featureType = rest.substr(1);
  }
  bool knownFeature = options.featureType == "itervar" || options.featureType == "knob" || options.featureType == "curve";
  bool knownLoss = options.lossType == "rank" || options.lossType == "reg";
  if (!knownFeature || !knownLoss) return std::nullopt;
  return options;
}

}  // namespace

void checkTunerName(const std::string& name) {
  if (name == "random" || name == "gridsearch" || name == "ga" || parseXgbName(name)) return;
  fail("Invalid tuner: {} (tuners: random, gridsearch, ga, xgb, xgb_knob, xgb_itervar, xgb_curve, xgb-rank, xgb-reg)", name);
}

std::unique_ptr<Tuner> makeTuner(const std::string& name, TuningTaskPtr task, uint64_t seed) {
  checkTunerName(name);
  TESSEL_CHECK(task && task->space, "makeTuner: no task");
  if (name == "random") return std::make_unique<RandomTuner>(std::move(task), seed);
  if (name == "gridsearch") return std::make_unique<GridSearchTuner>(std::move(task), seed);
  if (name == "ga") return std::make_unique<GATuner>(std::move(task), seed);
  return makeXGBTuner(std::move(task), *parseXgbName(name), seed);
}

}  // namespace tessel::tune::autotvm
