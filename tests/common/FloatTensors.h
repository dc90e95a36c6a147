/// Test support: float32 tensors from values written in a test, and their values back, for
/// tests that state inputs and expected outputs by hand.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "runtime/Tensor.h"

namespace tessel::testsupport {

/// A float32 tensor of `shape` holding `values` (as many as the shape has elements).
inline runtime::Tensor floatTensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  auto t = runtime::Tensor::empty(std::move(shape), DataType::float32());
  EXPECT_EQ(size_t(t.numel()), values.size());
  std::memcpy(t.data(), values.data(), std::min(values.size(), size_t(t.numel())) * sizeof(float));
  return t;
}

/// The largest difference of two float32 tensors of one shape, relative to the reference's
/// largest magnitude (a network's outputs span orders of magnitude; elementwise ratios would
/// weigh the near-zero ones).
inline double relativeDifference(const runtime::Tensor& got, const runtime::Tensor& want) {
  EXPECT_EQ(got.numel(), want.numel());
  double scale = 1e-30, worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) scale = std::max(scale, double(std::fabs(want.dataAs<float>()[i])));
  for (int64_t i = 0; i < std::min(got.numel(), want.numel()); ++i)
    worst = std::max(worst, std::fabs(double(got.dataAs<float>()[i]) - want.dataAs<float>()[i]) / scale);
  return worst;
}

/// The values of a float32 tensor.
inline std::vector<float> floatValues(const runtime::Tensor& t) { return {t.dataAs<float>(), t.dataAs<float>() + t.numel()}; }

}  // namespace tessel::testsupport
