/// The statistical cost model of the xgb tuner: gradient-boosted trees (libxgboost's C API)
/// from a config's feature vector to a score, higher for faster configs. Two losses, as in
/// AutoTVM: `rank` (rank:pairwise — only the order of the configs matters, which is all the
/// search needs) and `reg` (squared error on the throughput divided by the task's best).
/// Failed trials count as throughput 0, so the model learns to avoid them.
///
/// Transfer learning: `fitBase` trains a base model on the trials of other tasks (each task's
/// throughputs normalized by its own best, one ranking group per task). Until this task has
/// its own model, predictions come from the base model alone; afterwards the base model's
/// prediction is the starting margin the task's own trees correct.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessel::tune::autotvm {

enum class LossType { Rank, Regression };
/// "rank" or "reg"; Error listing them otherwise.
LossType parseLossType(const std::string& name);

struct XGBoostOptions {
  LossType loss = LossType::Rank;
  int numThreads = 1;   ///< xgboost's nthread; <= 0 for xgboost's default (all cores)
  int rounds = 60;      ///< boosting rounds per fit (trees are retrained from scratch)
  int maxDepth = 3;     ///< AutoTVM's parameters: shallow trees, eta 0.3, gamma 1e-4
  double eta = 0.3;
  uint64_t seed = 0;
};

class XGBoostCostModel {
 public:
  explicit XGBoostCostModel(XGBoostOptions options = {});
  ~XGBoostCostModel();
  XGBoostCostModel(const XGBoostCostModel&) = delete;
  XGBoostCostModel& operator=(const XGBoostCostModel&) = delete;

  /// Fits this task's model from scratch: `x` is row-major with `columns` features per row,
  /// `throughput` one value per row (0 for a failed trial).
  void fit(const std::vector<float>& x, size_t columns, const std::vector<double>& throughput);
  /// Fits the base model on other tasks' rows; `groupSizes` partitions the rows by task, in order.
  void fitBase(const std::vector<float>& x, size_t columns, const std::vector<double>& throughput,
               const std::vector<unsigned>& groupSizes);
  bool hasModel() const { return model_ != nullptr; }
  bool hasBase() const { return base_ != nullptr; }
  bool canPredict() const { return hasModel() || hasBase(); }
  /// Scores of the rows (higher is better); Error if neither model was fitted.
  std::vector<double> predict(const std::vector<float>& x, size_t columns) const;
  const XGBoostOptions& options() const { return options_; }

 private:
  struct Booster;
  std::unique_ptr<Booster> train(const std::vector<float>& x, size_t columns, const std::vector<float>& labels,
                                 const std::vector<unsigned>& groups, const std::vector<float>* baseMargin) const;
  std::vector<float> margins(const Booster& booster, const std::vector<float>& x, size_t columns,
                             const std::vector<float>* baseMargin) const;

  XGBoostOptions options_;
  size_t columns_ = 0;
  std::unique_ptr<Booster> model_, base_;
};

}  // namespace tessel::tune::autotvm
