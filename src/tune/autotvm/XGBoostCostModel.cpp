#include "tune/autotvm/XGBoostCostModel.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "support/Error.h"

namespace tessel::tune::autotvm {

LossType parseLossType(const std::string& name) {
  if (name == "rank") return LossType::Rank;
  if (name == "reg") return LossType::Regression;
  fail("Invalid loss type: {} (expected rank or reg)", name);
}

namespace {

void check(int status, const char* what) {
  if (status != 0) fail("xgboost: {} failed: {}", what, XGBGetLastError());
}

/// A DMatrix owned for the scope of one call.
class Matrix {
 public:
  Matrix(const std::vector<float>& x, size_t columns) {
    TESSEL_CHECK(columns > 0 && x.size() % columns == 0, "xgboost: {} values do not form rows of {} features", x.size(),
                 columns);
    // NaN marks missing values, so that zero features stay real values.
    check(XGDMatrixCreateFromMat(x.data(), x.size() / columns, columns, std::nanf(""), &handle_), "XGDMatrixCreateFromMat");
  }
  ~Matrix() { XGDMatrixFree(handle_); }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  DMatrixHandle handle() const { return handle_; }
  void setFloats(const char* field, const std::vector<float>& values) {
    check(XGDMatrixSetFloatInfo(handle_, field, values.data(), values.size()), field);
  }

 private:
  DMatrixHandle handle_ = nullptr;
};

/// Throughputs divided by their group's best (AutoTVM normalizes y by max); non-finite and
/// negative values (failed trials) become 0.
std::vector<float> normalizedLabels(const std::vector<double>& throughput, const std::vector<unsigned>& groups) {
  std::vector<float> labels(throughput.size(), 0.f);
  size_t begin = 0;
  for (unsigned size : groups) {
    double best = 0;
    for (size_t i = begin; i < begin + size; ++i)
      if (std::isfinite(throughput[i])) best = std::max(best, throughput[i]);
    for (size_t i = begin; i < begin + size; ++i)
      labels[i] = best > 0 && std::isfinite(throughput[i]) && throughput[i] > 0 ? float(throughput[i] / best) : 0.f;
    begin += size;
  }
  return labels;
}

}  // namespace

struct XGBoostCostModel::Booster {
  BoosterHandle handle = nullptr;
  ~Booster() {
    if (handle) XGBoosterFree(handle);
  }
};

XGBoostCostModel::XGBoostCostModel(XGBoostOptions options) : options_(options) {}
XGBoostCostModel::~XGBoostCostModel() = default;

std::unique_ptr<XGBoostCostModel::Booster> XGBoostCostModel::train(const std::vector<float>& x, size_t columns,
                                                                   const std::vector<float>& labels,
                                                                   const std::vector<unsigned>& groups,
                                                                   const std::vector<float>* baseMargin) const {
  Matrix data(x, columns);
  data.setFloats("label", labels);
  if (options_.loss == LossType::Rank)
    check(XGDMatrixSetUIntInfo(data.handle(), "group", groups.data(), groups.size()), "group");
  if (baseMargin) data.setFloats("base_margin", *baseMargin);

  auto booster = std::make_unique<Booster>();
  DMatrixHandle matrices[] = {data.handle()};
  check(XGBoosterCreate(matrices, 1, &booster->handle), "XGBoosterCreate");
  auto set = [&](const char* key, const std::string& value) {
    check(XGBoosterSetParam(booster->handle, key, value.c_str()), key);
  };
  set("objective", options_.loss == LossType::Rank ? "rank:pairwise" : "reg:squarederror");
  set("max_depth", std::to_string(options_.maxDepth));
  set("eta", std::to_string(options_.eta));
  set("gamma", "0.0001");
  set("min_child_weight", "1");
  set("lambda", "1");
  set("alpha", "0");
  set("seed", std::to_string(options_.seed % 2147483647));
  set("verbosity", "0");
  if (options_.numThreads > 0) set("nthread", std::to_string(options_.numThreads));
  for (int round = 0; round < options_.rounds; ++round)
    check(XGBoosterUpdateOneIter(booster->handle, round, data.handle()), "XGBoosterUpdateOneIter");
  return booster;
}

std::vector<float> XGBoostCostModel::margins(const Booster& booster, const std::vector<float>& x, size_t columns,
                                             const std::vector<float>* baseMargin) const {
  Matrix data(x, columns);
  if (baseMargin) data.setFloats("base_margin", *baseMargin);
  bst_ulong length = 0;
  const float* result = nullptr;
  // option_mask 1: the raw margin (identity for both objectives, but says what we mean).
  check(XGBoosterPredict(booster.handle, data.handle(), 1, 0, 0, &length, &result), "XGBoosterPredict");
  return std::vector<float>(result, result + length);
}

void XGBoostCostModel::fit(const std::vector<float>& x, size_t columns, const std::vector<double>& throughput) {
  TESSEL_CHECK(!throughput.empty() && x.size() == throughput.size() * columns,
               "cost model: {} feature values for {} throughputs of {} features", x.size(), throughput.size(), columns);
  TESSEL_CHECK(!base_ || columns == columns_, "cost model: {} features, the base model has {}", columns, columns_);
  columns_ = columns;
  std::vector<unsigned> groups{unsigned(throughput.size())};
  std::vector<float> labels = normalizedLabels(throughput, groups);
  if (base_) {
    std::vector<float> margin = margins(*base_, x, columns, nullptr);
    model_ = train(x, columns, labels, groups, &margin);
  } else {
    model_ = train(x, columns, labels, groups, nullptr);
  }
}

void XGBoostCostModel::fitBase(const std::vector<float>& x, size_t columns, const std::vector<double>& throughput,
                               const std::vector<unsigned>& groupSizes) {
  size_t rows = 0;
  for (unsigned size : groupSizes) rows += size;
  TESSEL_CHECK(rows == throughput.size() && rows > 0 && x.size() == rows * columns,
               "cost model: base data of {} rows in groups summing to {}", throughput.size(), rows);
  columns_ = columns;
  base_ = train(x, columns, normalizedLabels(throughput, groupSizes), groupSizes, nullptr);
  model_.reset();  // a task model fitted before has no base margin: refit it
}

std::vector<double> XGBoostCostModel::predict(const std::vector<float>& x, size_t columns) const {
  TESSEL_CHECK(canPredict(), "cost model: predict before any fit");
  TESSEL_CHECK(columns == columns_, "cost model: {} features, the model has {}", columns, columns_);
  std::vector<float> scores;
  if (base_) scores = margins(*base_, x, columns, nullptr);
  if (model_) scores = margins(*model_, x, columns, base_ ? &scores : nullptr);
  return std::vector<double>(scores.begin(), scores.end());
}

}  // namespace tessel::tune::autotvm
