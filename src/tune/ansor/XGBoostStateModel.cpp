#include "tune/ansor/XGBoostStateModel.h"

#include "tune/ansor/Features.h"

namespace tessel::tune::ansor {

XGBoostStateModel::XGBoostStateModel(std::optional<target::CpuMachine> machine, autotvm::XGBoostOptions options,
                                     size_t warmupSamples)
    : machine_(std::move(machine)), model_(options), warmupSamples_(warmupSamples), rng_(options.seed) {}

std::vector<float> XGBoostStateModel::features(const schedule::State& state) const {
  return stateFeatures(state, machine_ ? &*machine_ : nullptr);
}

void XGBoostStateModel::update(const std::vector<const schedule::State*>& states, const std::vector<double>& throughputs) {
  for (size_t i = 0; i < states.size(); ++i) {
    std::vector<float> row = features(*states[i]);
    rows_.insert(rows_.end(), row.begin(), row.end());
    throughputs_.push_back(throughputs[i]);
  }
  // Nothing to rank until two measurements differ.
  bool varied = false;
  for (double t : throughputs_) varied = varied || t != throughputs_.front();
  if (throughputs_.size() >= warmupSamples_ && varied) model_.fit(rows_, kStateFeatureLength, throughputs_);
}

std::vector<double> XGBoostStateModel::predict(const std::vector<const schedule::State*>& states) {
  if (!model_.canPredict()) {
    std::uniform_real_distribution<double> uniform(0, 1);
    std::vector<double> scores;
    for (size_t i = 0; i < states.size(); ++i) scores.push_back(uniform(rng_));
    return scores;
  }
  std::vector<float> rows;
  rows.reserve(states.size() * kStateFeatureLength);
  for (const schedule::State* s : states) {
    std::vector<float> row = features(*s);
    rows.insert(rows.end(), row.begin(), row.end());
  }
  return model_.predict(rows, kStateFeatureLength);
}

}  // namespace tessel::tune::ansor
