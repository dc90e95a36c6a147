/// Matrix products with a constant right operand packed by column blocks, the CPU form of the
/// projections of a transformer (ONNX MatMul with a weight, Gemm, torch's Linear): B [K, N]
/// stored as [N / block, K, block], so that a register tile of `block` columns reads its
/// weights as one contiguous stream of K x block values. Unpacked, consecutive k of one tile
/// lie N floats apart: BERT's 768 x 3072 feed-forward weight touched a new 12 KiB-strided
/// line per load and ran at half the speed of its 768 x 768 projections (2-core Xeon).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "te/Tensor.h"

namespace tessel::ops {

/// A [..., M, K] times the packed B [N / block, K, block] -> [..., M, N] (any number of leading
/// axes, which the weight does not have: a stack of rows sharing one weight). Tag
/// "matmul_packed"; its register tile runs along the last two output axes.
te::Tensor matmulPacked(const te::Tensor& a, const te::Tensor& packedWeight, std::optional<DataType> outDtype = std::nullopt);

/// The packed weight [N / block, K, block] of B [K, N], as a tensor expression (tag
/// "injective": the interpreter's) and in C++ (constant folding of a network's weights).
te::Tensor packMatmulWeight(const te::Tensor& weight, int64_t block);
std::vector<float> packMatmulWeight(const std::vector<float>& kn, int64_t k, int64_t n, int64_t block);

/// The block the default rules pack a K x N weight by, for a product over `rows` rows on a
/// machine whose vectors hold `lanes` floats (0: not packed). A matmul is a stride-1 1x1
/// convolution over `rows` pixels, so the convolutions' rule (ops::defaultPackBlock) applies.
int64_t defaultMatmulPackBlock(int64_t k, int64_t n, int64_t rows, int64_t lanes, int64_t vectorRegisters);

}  // namespace tessel::ops
