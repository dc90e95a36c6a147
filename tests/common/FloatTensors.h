/// Test support: float32 tensors from values written in a test, and their values back, for
/// tests that state inputs and expected outputs by hand.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
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

/// The values of a float32 tensor.
inline std::vector<float> floatValues(const runtime::Tensor& t) { return {t.dataAs<float>(), t.dataAs<float>() + t.numel()}; }

}  // namespace tessel::testsupport
