/// The `xgb` tuner: AutoTVM's model-based tuner. It proposes random configs until it has
/// measured `firstFit` of them, then fits an XGBoost cost model on (features, throughput),
/// runs simulated annealing over the model for a plan of the best-predicted unmeasured
/// configs, and proposes from that plan — each pick, with probability `epsilon`, a random
/// unmeasured config instead, so that a wrong model cannot lock the search in. It refits and
/// replans after as many new trials as it has (doubling), then every `planSize` new trials; a
/// fit that is due happens when the next batch is asked for, so the last batch of a budget
/// costs no fit and no annealing that nothing would use. With `diversityFilterRatio` r > 0 (r >= 1)
/// the annealer returns r * planSize candidates and the plan is picked greedily from them,
/// trading predicted score against knob values not yet in the plan (a submodular pick), so a
/// batch does not spend all its trials on one neighbourhood.
///
/// loadHistory() is AutoTVM's use_transfer_learning: it trains a base model on the trials of
/// other tasks (itervar or curve features, which mean the same for every task; knob features
/// only transfer from the same task) and plans with it from the first batch; this task's own
/// model later starts from the base model's prediction.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tune/autotvm/FeatureCache.h"
#include "tune/autotvm/SimulatedAnnealing.h"
#include "tune/autotvm/Tuner.h"
#include "tune/autotvm/XGBoostCostModel.h"

namespace tessel::tune::autotvm {

struct XGBTunerOptions {
  std::string featureType = "itervar";  ///< knob, itervar, curve
  std::string lossType = "rank";        ///< rank, reg
  int planSize = 64;
  /// The first fit comes after this many trials (not after planSize), and the next ones after
  /// twice as many, until planSize apart: a small budget (a demo's 24 trials per task) then
  /// still gets a model instead of spending every trial at random.
  int firstFit = 16;
  double epsilon = 0.05;                ///< chance that a pick is a random unmeasured config
  double diversityFilterRatio = 0;      ///< 0: off; else >= 1
  int numThreads = 0;                   ///< feature extraction and xgboost; 0: every core
  SimulatedAnnealingOptions annealing;  ///< AutoTVM's defaults
  int boostRounds = 60;
};

class XGBTuner : public Tuner {
 public:
  XGBTuner(TuningTaskPtr task, const XGBTunerOptions& options, uint64_t seed);

  std::vector<uint64_t> nextBatch(size_t batchSize) override;
  void update(const std::vector<Trial>& trials) override;
  void loadHistory(const std::vector<std::pair<TuningTaskPtr, std::vector<Trial>>>& history) override;

  /// The model's scores of configs (-infinity for those that fail to instantiate).
  std::vector<double> predict(const std::vector<uint64_t>& indices);
  /// The plan the next picks come from (after the fit that is due, if one is).
  const std::vector<uint64_t>& plan();
  int fits() const { return fits_; }
  size_t randomPicks() const { return randomPicks_; }
  size_t modelPicks() const { return modelPicks_; }
  FeatureCache& features() { return features_; }
  const XGBoostCostModel& model() const { return model_; }

 private:
  void fitIfDue();
  void fitAndPlan();
  void replan();
  uint64_t randomUnproposed();
  /// `count` of the candidates, picked greedily for normalized score (0..1) plus one for every
  /// knob whose value no earlier pick has.
  std::vector<uint64_t> diversePick(const std::vector<uint64_t>& candidates, size_t count);

  XGBTunerOptions options_;
  FeatureCache features_;
  XGBoostCostModel model_;
  SimulatedAnnealing annealing_;
  std::vector<uint64_t> measured_;
  std::vector<double> throughput_;
  size_t nextFitAt_;
  int fits_ = 0;
  std::vector<uint64_t> plan_;
  size_t planPosition_ = 0;
  size_t randomPicks_ = 0, modelPicks_ = 0;
};

std::unique_ptr<Tuner> makeXGBTuner(TuningTaskPtr task, const XGBTunerOptions& options, uint64_t seed);

}  // namespace tessel::tune::autotvm
