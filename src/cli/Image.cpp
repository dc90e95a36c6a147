#include "cli/Image.h"

#include <stb_image.h>
#include <stb_image_resize.h>

#include <memory>

#include "support/Error.h"
#include "support/Files.h"
#include "support/MemoryBudgets.h"

namespace tessel::cli {

namespace {

constexpr FileKind kImageFile{"image", uint64_t(256) << 20};

bool startsWith(const std::string& bytes, std::initializer_list<uint8_t> magic) {
  if (bytes.size() < magic.size()) return false;
  size_t i = 0;
  for (uint8_t b : magic)
    if (uint8_t(bytes[i++]) != b) return false;
  return true;
}

/// stb decodes what it has of a file cut short (the missing rows grey), so the end is checked
/// here: a JPEG ends with its end-of-image marker, a PNG with its IEND chunk.
void checkComplete(const std::string& bytes, const std::string& path) {
  if (startsWith(bytes, {0xFF, 0xD8})) {
    size_t end = bytes.rfind("\xFF\xD9");
    TESSEL_CHECK(end != std::string::npos && end + 2 + 64 >= bytes.size(),
                 "{}: the JPEG image is truncated (it has no end-of-image marker)", path);
  } else if (startsWith(bytes, {0x89, 'P', 'N', 'G'})) {
    TESSEL_CHECK(bytes.size() >= 12 && bytes.compare(bytes.size() - 8, 4, "IEND") == 0,
                 "{}: the PNG image is truncated (it does not end with an IEND chunk)", path);
  } else {
    fail("{}: not a PNG or JPEG image", path);
  }
}

}  // namespace

RgbImage decodeImage(const std::string& path) {
  std::string bytes = readFile(path, kImageFile);
  checkComplete(bytes, path);
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  int width = 0, height = 0, channels = 0;
  // The header's size is checked before the decoder allocates anything.
  if (stbi_info_from_memory(data, int(bytes.size()), &width, &height, &channels) == 1) {
    TESSEL_CHECK(budgets::productWithin({width, height}, budgets::kDecodedImagePixels).has_value(),
                 "{}: the image is {}x{} pixels, more than classify decodes ({} pixels); scale it down first", path, width, height,
                 budgets::kDecodedImagePixels);
  }
  stbi_uc* pixels = stbi_load_from_memory(data, int(bytes.size()), &width, &height, &channels, 3);
  if (!pixels) {
    // Debian builds stb without its (terse) failure strings; say what is known.
    const char* reason = stbi_failure_reason();
    fail("{}: the image cannot be decoded: {}", path, reason && *reason ? reason : "its data is damaged");
  }
  RgbImage image;
  image.width = width;
  image.height = height;
  image.pixels = std::shared_ptr<const uint8_t>(pixels, stbi_image_free);  // the decoder's buffer, not a copy
  return image;
}

runtime::Tensor imageTensor(const RgbImage& image, const std::vector<int64_t>& shape, const Normalization& n) {
  bool nchw = shape.size() == 4 && shape[1] == 3;
  bool nhwc = shape.size() == 4 && shape[3] == 3;
  TESSEL_CHECK(shape.size() == 4 && shape[0] == 1 && (nchw || nhwc),
               "the module's input is {}: classify needs one RGB image, [1, 3, H, W] or [1, H, W, 3]",
               runtime::formatShape(shape));
  int height = int(nchw ? shape[2] : shape[1]), width = int(nchw ? shape[3] : shape[2]);
  std::vector<uint8_t> resized(size_t(width) * size_t(height) * 3);
  TESSEL_CHECK(stbir_resize_uint8(image.pixels.get(), image.width, image.height, 0, resized.data(), width, height, 0, 3) == 1,
               "resizing the image from {}x{} to {}x{} failed", image.width, image.height, width, height);
  auto t = runtime::Tensor::empty(shape, DataType::float32());
  float* out = t.dataAs<float>();
  size_t plane = size_t(width) * size_t(height);
  for (size_t p = 0; p < plane; ++p)
    for (size_t c = 0; c < 3; ++c) {
      float v = (float(resized[3 * p + c]) / 255.0f - n.mean[c]) / n.std[c];
      out[nchw ? c * plane + p : 3 * p + c] = v;
    }
  return t;
}

}  // namespace tessel::cli
