/// Images as network inputs for `tessel classify`: PNG and JPEG decoded (stb_image, Debian's
/// libstb), resized to the network's input (stb_image_resize) and normalized per channel into
/// an NCHW or NHWC float tensor, as seed 004 prepares its cat picture.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/Tensor.h"

namespace tessel::cli {

struct RgbImage {
  int width = 0, height = 0;
  /// Row-major, 3 bytes (R, G, B) per pixel: the decoder's own buffer (one copy of the pixels).
  std::shared_ptr<const uint8_t> pixels;
};

/// Decodes a PNG or JPEG file (grey and alpha become RGB). Error naming the file when it is
/// not an image, is damaged or is cut short, or when its header declares more pixels than
/// budgets::kDecodedImagePixels (checked before the decoder allocates).
RgbImage decodeImage(const std::string& path);

struct Normalization {
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};  ///< ImageNet's, on values in [0, 1]
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};
};

/// The image resized to the input's height and width and normalized, (pixel / 255 - mean) /
/// std per channel, as a float32 tensor of `inputShape`: [1, 3, H, W] or [1, H, W, 3].
runtime::Tensor imageTensor(const RgbImage& image, const std::vector<int64_t>& inputShape, const Normalization& n);

}  // namespace tessel::cli
