// The XGBoost cost model on a learnable landscape: it ranks held-out configs (Spearman > 0.8)
// with either loss, treats failures as zero throughput, and a base model fitted on other data
// predicts before the task has its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include "SyntheticLandscape.h"
#include "support/Error.h"
#include "tune/autotvm/FeatureCache.h"
#include "tune/autotvm/XGBoostCostModel.h"

using namespace tessel;
using namespace tessel::tune::autotvm;

namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {  // ties share their mean rank
    size_t j = i;
    while (j < order.size() && v[order[j]] == v[order[i]]) ++j;
    for (size_t k = i; k < j; ++k) r[order[k]] = double(i + j - 1) / 2.0;
    i = j;
  }
  return r;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / double(ra.size());
  double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / double(rb.size());
  double num = 0, da = 0, db = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    num += (ra[i] - ma) * (rb[i] - mb);
    da += (ra[i] - ma) * (ra[i] - ma);
    db += (rb[i] - mb) * (rb[i] - mb);
  }
  return num / std::sqrt(da * db);
}

std::vector<uint64_t> sampleConfigs(uint64_t size, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> pick(0, size - 1);
  std::set<uint64_t> out;
  while (out.size() < count) out.insert(pick(rng));
  return {out.begin(), out.end()};
}

}  // namespace

TEST(XGBoostCostModel, RanksHeldOutConfigs) {
  TuningTaskPtr task = synthetic::resnetConv2dTask();
  FeatureCache features(task, FeatureType::Knob, 1);
  std::vector<uint64_t> all = sampleConfigs(task->space->size(), 600, 3);
  std::vector<uint64_t> train(all.begin(), all.begin() + 300), test(all.begin() + 300, all.end());
  std::vector<double> y, truth;
  for (uint64_t i : train) y.push_back(synthetic::conv2dLandscape(*task, i));
  for (uint64_t i : test) truth.push_back(synthetic::conv2dLandscape(*task, i));
  for (LossType loss : {LossType::Rank, LossType::Regression}) {
    XGBoostOptions options;
    options.loss = loss;
    XGBoostCostModel model(options);
    model.fit(features.matrix(train), features.length(), y);
    double rho = spearman(model.predict(features.matrix(test), features.length()), truth);
    std::printf("%s: Spearman %.3f on 300 held-out configs\n", loss == LossType::Rank ? "rank" : "reg", rho);
    EXPECT_GT(rho, 0.8);
  }
}

TEST(XGBoostCostModel, FailedTrialsCountAsZero) {
  // One feature; the rows with x > 5 "failed" (infinite or zero throughput reported).
  std::vector<float> x;
  std::vector<double> y;
  for (int i = 0; i < 10; ++i) {
    x.push_back(float(i));
    y.push_back(i > 5 ? (i % 2 ? 0.0 : std::numeric_limits<double>::infinity()) : double(i + 1));
  }
  XGBoostOptions options;
  options.loss = LossType::Regression;
  XGBoostCostModel model(options);
  model.fit(x, 1, y);
  std::vector<double> p = model.predict({5.f, 8.f}, 1);
  EXPECT_GT(p[0], p[1]);
}

TEST(XGBoostCostModel, BaseModelPredictsAndThenServesAsMargin) {
  std::vector<float> x;
  std::vector<double> y;
  for (int i = 0; i < 40; ++i) {
    x.push_back(float(i % 20));
    y.push_back(double(i % 20) * (i < 20 ? 1.0 : 10.0));  // two tasks, the same order, different scales
  }
  XGBoostCostModel model;
  EXPECT_FALSE(model.canPredict());
  EXPECT_THROW(model.predict({1.f}, 1), Error);
  model.fitBase(x, 1, y, {20, 20});
  ASSERT_TRUE(model.canPredict());
  std::vector<double> p = model.predict({2.f, 15.f}, 1);
  EXPECT_LT(p[0], p[1]);
  // The task's own data (a few points, same trend) refines without losing the base's order.
  model.fit({1.f, 4.f, 9.f, 16.f}, 1, {1, 4, 9, 16});
  p = model.predict({2.f, 15.f}, 1);
  EXPECT_LT(p[0], p[1]);
  EXPECT_THROW(model.fit({1.f, 2.f}, 2, {1.0}), Error);  // columns differ from the base model's
}

TEST(XGBoostCostModel, InvalidLoss) {
  EXPECT_THROW(parseLossType("pairwise"), Error);
}
