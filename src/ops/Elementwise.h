/// Element-wise unary operators (tag "elemwise"): activations, clipping, math functions, tests. Each reads one
/// input element and writes one output element of the same shape and dtype, so the default
/// schedule inlines them into their consumer or fuses them as an epilogue.
#pragma once
#include "te/Tensor.h"

namespace tessel::ops {

/// max(x, 0); any numeric dtype.
te::Tensor relu(const te::Tensor& x);
/// min(max(x, lo), hi); any numeric dtype (for integers the bounds must be integers the dtype
/// holds). relu6 is clip(x, 0, 6).
te::Tensor clip(const te::Tensor& x, double lo, double hi);
te::Tensor relu6(const te::Tensor& x);
/// x for x >= 0, alpha * x below; float only.
te::Tensor leakyRelu(const te::Tensor& x, double alpha);
/// The nearest integer, halfway cases away from zero (C's round; what TVM's `round` compiles
/// to on the CPU, which its int8 quantization uses: tvm@v0.18.0:src/target/llvm/intrin_rule_llvm.cc);
/// float only.
te::Tensor round(const te::Tensor& x);
/// 1 / (1 + exp(-x)); float only.
te::Tensor sigmoid(const te::Tensor& x);
te::Tensor tanh(const te::Tensor& x);
/// max(0, min(1, alpha * x + beta)), ONNX's HardSigmoid (defaults alpha 0.2, beta 0.5; torch's
/// Hardsigmoid is alpha 1/6, beta 0.5); float only.
te::Tensor hardSigmoid(const te::Tensor& x, double alpha = 0.2, double beta = 0.5);
/// x * relu6(x + 3) / 6, as torch's Hardswish and ONNX's HardSwish; float only.
te::Tensor hardSwish(const te::Tensor& x);
/// The math functions of transformer exports; float only.
te::Tensor exp(const te::Tensor& x);
te::Tensor sqrt(const te::Tensor& x);
te::Tensor erf(const te::Tensor& x);
/// GELU, x * Phi(x): 0.5 x (1 + erf(x / sqrt(2))), or with `tanhApproximation` 0.5 x (1 +
/// tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (ONNX's Gelu of opset 20, approximate "none" | "tanh";
/// torch's gelu); float only.
te::Tensor gelu(const te::Tensor& x, bool tanhApproximation);
/// Whether each element is NaN: a bool tensor (x != x, which the kernels' compiler keeps: they
/// are built without -ffast-math).
te::Tensor isNan(const te::Tensor& x);
/// Whether each element is infinite (bool): +inf where `positive`, -inf where `negative`
/// (ONNX's IsInf, detect_positive / detect_negative).
te::Tensor isInf(const te::Tensor& x, bool positive = true, bool negative = true);
/// Logical not of a bool tensor.
te::Tensor logicalNot(const te::Tensor& x);

}  // namespace tessel::ops
