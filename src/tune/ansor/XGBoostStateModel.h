/// The auto-scheduler's learned cost model: the XGBoost model of template tuning
/// (autotvm/XGBoostCostModel.h, pairwise rank loss by default) over the states' feature
/// vectors (Features.h). Every update adds the measurements and retrains from scratch on all of
/// them; until `warmupSamples` measurements exist it scores at random, as TVM's model does
/// (trees fitted on a handful of points rank worse than chance). Retraining is deterministic,
/// so a resumed run that feeds the logged measurements in the same order gets the same model.
#pragma once
#include <optional>
#include <random>

#include "tune/ansor/CostModel.h"
#include "target/CpuMachine.h"
#include "tune/autotvm/XGBoostCostModel.h"

namespace tessel::tune::ansor {

class XGBoostStateModel : public CostModel {
 public:
  /// `machine`: the CPU the states are scheduled for (the features read the nest against it);
  /// none for a GPU.
  explicit XGBoostStateModel(std::optional<target::CpuMachine> machine, autotvm::XGBoostOptions options = {},
                             size_t warmupSamples = 16);
  void update(const std::vector<const schedule::State*>& states, const std::vector<double>& throughputs) override;
  std::vector<double> predict(const std::vector<const schedule::State*>& states) override;
  size_t samples() const { return throughputs_.size(); }
  /// False while it scores at random (before `warmupSamples` varied measurements).
  bool fitted() const { return model_.canPredict(); }

 private:
  std::vector<float> features(const schedule::State& state) const;

  std::optional<target::CpuMachine> machine_;
  autotvm::XGBoostCostModel model_;
  size_t warmupSamples_;
  std::vector<float> rows_;
  std::vector<double> throughputs_;
  std::mt19937_64 rng_;
};

}  // namespace tessel::tune::ansor
