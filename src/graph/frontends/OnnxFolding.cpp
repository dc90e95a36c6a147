#include "graph/frontends/OnnxFolding.h"

#include "graph/TensorValues.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "support/Error.h"
#include "support/MemoryBudgets.h"

namespace tessel::graph::onnx_import {

namespace {

/// Visits every multi-index of `shape` in row-major order.
void forEachIndex(const std::vector<int64_t>& shape, const std::function<void(const std::vector<int64_t>&)>& visit) {
  if (elementsOf(shape) == 0) return;
  std::vector<int64_t> index(shape.size(), 0);
  while (true) {
    visit(index);
    int d = int(shape.size()) - 1;
    while (d >= 0 && ++index[size_t(d)] == shape[size_t(d)]) index[size_t(d--)] = 0;
    if (d < 0) return;
  }
}

}  // namespace

std::vector<int64_t> stridesOf(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = int(shape.size()) - 2; d >= 0; --d) strides[size_t(d)] = strides[size_t(d) + 1] * shape[size_t(d) + 1];
  return strides;
}

void checkConstantSize(const std::vector<int64_t>& shape) {
  TESSEL_CHECK(budgets::productWithin(shape, budgets::kComputedTensorElements).has_value(),
               "a constant of shape {} is too large to compute while importing (more than {} elements)",
               runtime::formatShape(shape), budgets::kComputedTensorElements);
}

runtime::Tensor filledTensor(const std::vector<int64_t>& shape, DataType dtype, double value) {
  checkConstantSize(shape);
  runtime::Tensor one = valuesToTensor({1}, dtype, {value});
  auto out = runtime::Tensor::empty(shape, dtype);
  size_t bytes = size_t(dtype.storageBytes());
  auto* dst = static_cast<char*>(out.data());
  for (int64_t i = 0; i < out.numel(); ++i) std::memcpy(dst + size_t(i) * bytes, one.data(), bytes);
  return out;
}

int64_t elementsOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    // A hostile shape must not overflow: 2^40 elements is far beyond any model tessel builds.
    TESSEL_CHECK(d >= 0 && (d == 0 || n <= (int64_t(1) << 40) / d), "the shape {} is too large",
                 runtime::formatShape(shape));
    n *= d;
  }
  return n;
}

std::vector<int64_t> intValues(const runtime::Tensor& t, const std::string& what) {
  if (t.dtype() == DataType::int64()) return {t.dataAs<int64_t>(), t.dataAs<int64_t>() + t.numel()};
  if (t.dtype() == DataType::int32()) return {t.dataAs<int32_t>(), t.dataAs<int32_t>() + t.numel()};
  fail("{} must be int64 or int32, got {}", what, t.dtype().str());
}

std::vector<double> numericValues(const runtime::Tensor& t, const std::string& what) {
  try {
    return tensorValues(t);
  } catch (const Error& e) {
    throw e.withContext(what);
  }
}

runtime::Tensor int64Tensor(const std::vector<int64_t>& values) {
  auto t = runtime::Tensor::empty({int64_t(values.size())}, DataType::int64());
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

runtime::Tensor tensorFromValues(const std::vector<int64_t>& shape, DataType dtype, const std::vector<double>& values) {
  checkConstantSize(shape);
  return valuesToTensor(shape, dtype, values);
}

runtime::Tensor reshaped(const runtime::Tensor& t, const std::vector<int64_t>& shape) {
  TESSEL_ICHECK(elementsOf(shape) == t.numel());
  auto out = runtime::Tensor::empty(shape, t.dtype());
  if (t.nbytes()) std::memcpy(out.data(), t.data(), t.nbytes());
  return out;
}

runtime::Tensor moved(const runtime::Tensor& t, const std::vector<int64_t>& shape,
                      const std::function<int64_t(const std::vector<int64_t>&)>& source) {
  checkConstantSize(shape);
  auto out = runtime::Tensor::empty(shape, t.dtype());
  size_t bytes = size_t(t.dtype().storageBytes());
  auto* dst = static_cast<char*>(out.data());
  const auto* src = static_cast<const char*>(t.data());
  int64_t i = 0;
  forEachIndex(shape, [&](const std::vector<int64_t>& index) {
    int64_t from = source(index);
    TESSEL_ICHECK(from >= 0 && from < t.numel());
    std::memcpy(dst + size_t(i++) * bytes, src + size_t(from) * bytes, bytes);
  });
  return out;
}

runtime::Tensor transposed(const runtime::Tensor& t, const std::vector<int64_t>& perm) {
  std::vector<int64_t> shape, inStrides = stridesOf(t.shape());
  for (int64_t p : perm) shape.push_back(t.shape()[size_t(p)]);
  return moved(t, shape, [&](const std::vector<int64_t>& index) {
    int64_t flat = 0;
    for (size_t d = 0; d < perm.size(); ++d) flat += index[d] * inStrides[size_t(perm[d])];
    return flat;
  });
}

runtime::Tensor concatenated(const std::vector<runtime::Tensor>& parts, int axis) {
  TESSEL_ICHECK(!parts.empty());
  std::vector<int64_t> shape = parts[0].shape();
  std::vector<int64_t> offsets;
  shape[size_t(axis)] = 0;
  for (const auto& p : parts) {
    offsets.push_back(shape[size_t(axis)]);
    shape[size_t(axis)] += p.shape()[size_t(axis)];
  }
  checkConstantSize(shape);
  // Each output element comes from the part whose range along the axis holds it.
  auto out = runtime::Tensor::empty(shape, parts[0].dtype());
  size_t bytes = size_t(out.dtype().storageBytes());
  auto* dst = static_cast<char*>(out.data());
  int64_t i = 0;
  forEachIndex(shape, [&](const std::vector<int64_t>& index) {
    size_t part = parts.size() - 1;
    while (offsets[part] > index[size_t(axis)]) --part;
    std::vector<int64_t> local = index;
    local[size_t(axis)] -= offsets[part];
    auto strides = stridesOf(parts[part].shape());
    int64_t flat = 0;
    for (size_t d = 0; d < local.size(); ++d) flat += local[d] * strides[d];
    std::memcpy(dst + size_t(i++) * bytes, static_cast<const char*>(parts[part].data()) + size_t(flat) * bytes, bytes);
  });
  return out;
}

runtime::Tensor converted(const runtime::Tensor& t, DataType dtype) {
  if (t.dtype() == dtype) return t;
  checkConstantSize(t.shape());  // before its values are copied as doubles
  return tensorFromValues(t.shape(), dtype, numericValues(t, "cast"));
}

runtime::Tensor broadcastArithmetic(const runtime::Tensor& a, const runtime::Tensor& b,
                                    const std::function<double(double, double)>& op, const std::string& what) {
  TESSEL_CHECK(a.dtype() == b.dtype(), "{}: operands of different types {} and {}", what, a.dtype().str(), b.dtype().str());
  size_t rank = std::max(a.shape().size(), b.shape().size());
  auto aligned = [&](const std::vector<int64_t>& s) {
    std::vector<int64_t> out(rank - s.size(), 1);
    out.insert(out.end(), s.begin(), s.end());
    return out;
  };
  std::vector<int64_t> sa = aligned(a.shape()), sb = aligned(b.shape()), shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    TESSEL_CHECK(sa[d] == sb[d] || sa[d] == 1 || sb[d] == 1, "{}: shapes {} and {} do not broadcast", what,
                 runtime::formatShape(a.shape()), runtime::formatShape(b.shape()));
    shape[d] = sa[d] == 1 ? sb[d] : sa[d];
  }
  // Before anything is allocated: a broadcast makes a small pair of operands a large result.
  checkConstantSize(shape);
  auto va = numericValues(a, what), vb = numericValues(b, what);
  auto stA = stridesOf(sa), stB = stridesOf(sb);
  std::vector<double> out;
  out.reserve(size_t(elementsOf(shape)));
  forEachIndex(shape, [&](const std::vector<int64_t>& index) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < rank; ++d) {
      if (sa[d] != 1) ia += index[d] * stA[d];
      if (sb[d] != 1) ib += index[d] * stB[d];
    }
    out.push_back(op(va[size_t(ia)], vb[size_t(ib)]));
  });
  return tensorFromValues(shape, a.dtype(), out);
}

}  // namespace tessel::graph::onnx_import
