/// Host-side evaluation of the ONNX operators that compute on constants during import: the
/// shape arithmetic of exported models (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) and
/// data movement on initializers. Values are runtime tensors of any element type; movement
/// copies elements as bytes, arithmetic works on int64 and float32 (what shape computations
/// and weights use).
#pragma once
#include <functional>
#include <vector>

#include "runtime/Tensor.h"

namespace tessel::graph::onnx_import {

/// The elements of an integer tensor (int64 or int32) as int64; Error naming `what` otherwise.
std::vector<int64_t> intValues(const runtime::Tensor& t, const std::string& what);
/// The elements of a float or integer tensor as doubles.
std::vector<double> numericValues(const runtime::Tensor& t, const std::string& what);
/// A 1-D int64 tensor.
runtime::Tensor int64Tensor(const std::vector<int64_t>& values);
/// A tensor of `shape` and `dtype` (float32, float64 or an integer type) from doubles.
runtime::Tensor tensorFromValues(const std::vector<int64_t>& shape, DataType dtype, const std::vector<double>& values);

/// The same elements under another shape of equal size.
runtime::Tensor reshaped(const runtime::Tensor& t, const std::vector<int64_t>& shape);
/// out[index] = t[source(index)] for every index of `shape` (source returns a flat index of t).
runtime::Tensor moved(const runtime::Tensor& t, const std::vector<int64_t>& shape,
                      const std::function<int64_t(const std::vector<int64_t>&)>& source);
/// numpy transpose with an explicit permutation.
runtime::Tensor transposed(const runtime::Tensor& t, const std::vector<int64_t>& perm);
/// Concatenation along `axis` (tensors of one dtype and rank, equal other extents).
runtime::Tensor concatenated(const std::vector<runtime::Tensor>& parts, int axis);
/// The elements converted to `dtype` (float <-> integer as C++ casts them, truncating toward 0).
runtime::Tensor converted(const runtime::Tensor& t, DataType dtype);
/// Elementwise `op` with numpy broadcasting on two tensors of one dtype.
runtime::Tensor broadcastArithmetic(const runtime::Tensor& a, const runtime::Tensor& b,
                                    const std::function<double(double, double)>& op, const std::string& what);

/// Row-major strides of a shape and the product of its extents (an Error past 2^40).
std::vector<int64_t> stridesOf(const std::vector<int64_t>& shape);
int64_t elementsOf(const std::vector<int64_t>& shape);

/// Constants computed during import (ConstantOfShape, shape arithmetic, a folded Gather) are
/// bounded by budgets::kComputedTensorElements, checked on the shape before any memory is
/// allocated for them: a hostile shape must not exhaust memory.
void checkConstantSize(const std::vector<int64_t>& shape);
/// A tensor of `shape` and `dtype` with every element `value` (ConstantOfShape).
runtime::Tensor filledTensor(const std::vector<int64_t>& shape, DataType dtype, double value);

}  // namespace tessel::graph::onnx_import
