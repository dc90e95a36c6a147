/// The memory budgets: every size tessel computes from its input (a model's constants, the
/// tensors constant folding computes, a module's planned activation buffers, a decoded image)
/// is checked against one of these before memory is touched, so that a small hostile file ends
/// with an error naming what is too large instead of gigabytes of allocation. One constant per
/// budget, here; the checks multiply extents without overflowing.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel::budgets {

/// Elements of one tensor tessel computes while it compiles: an ONNX constant (ConstantOfShape,
/// shape arithmetic, a folded Gather) and a constant of the graph's folding. 2^28 elements (1 GiB
/// of float32) is beyond any weight of a network.
inline constexpr int64_t kComputedTensorElements = int64_t(1) << 28;

/// Bytes of one activation buffer of a module's plan: `compile` refuses a plan with a larger one,
/// naming its node, and the runtime refuses to allocate it. 2^40 (1 TiB) is beyond any
/// network's activation; a larger number is a damaged or hostile shape.
inline constexpr int64_t kActivationBufferBytes = int64_t(1) << 40;

/// Pixels of an image `classify` decodes: its header's width x height, checked before the
/// decoder allocates (stb's PNG decoder holds the inflated rows beside the pixels). 2^25 pixels
/// (a 33-megapixel photograph) decode in a few hundred MiB.
inline constexpr int64_t kDecodedImagePixels = int64_t(1) << 25;

/// The product of `factors` when every factor is non-negative and the product is at most
/// `limit`; nullopt otherwise (a product past `limit` is never computed, so it cannot overflow).
std::optional<int64_t> productWithin(const std::vector<int64_t>& factors, int64_t limit);

/// "1073741824 bytes (1.0 GiB)", "4096 bytes" (under a MiB): a byte count for messages.
std::string byteCount(uint64_t bytes);

}  // namespace tessel::budgets
