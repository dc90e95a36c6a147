/// oneDNN's direct convolution as the peer for tessel's conv2d: the same NHWC data and
/// [kh, kw, c_in, c_out] weights, oneDNN free to choose its own weight layout (reordered once,
/// outside the timed region, as a deployment would), run on the calling process's OpenMP
/// threads.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

namespace tessel::bench {

struct Conv2dShape {
  int64_t batch, inChannels, height, width, outChannels, kernel, stride, pad;
  int64_t outHeight() const { return (height + 2 * pad - kernel) / stride + 1; }
  int64_t outWidth() const { return (width + 2 * pad - kernel) / stride + 1; }
  double flops() const {
    return 2.0 * double(batch * outChannels * outHeight() * outWidth()) * double(inChannels * kernel * kernel);
  }
};

/// What a fused convolution computes after the sum over its inputs, as oneDNN's post-ops do it:
/// a per-channel bias, a residual added (oneDNN's sum post-op reads it from the output buffer,
/// as much memory traffic as a separate residual input), then ReLU. tessel's kernels compute
/// these in the convolution's function; timed against the bare convolution, a layer with a
/// residual would pay a whole extra image read that its peer does not.
struct ConvEpilogue {
  bool bias = false, residual = false, relu = false;
};

/// A ready-to-run oneDNN convolution bound to the given buffers (data NHWC, weight HWIO,
/// output NHWC, bias [outChannels] when the epilogue has one); `run()` computes one forward pass.
class OneDnnConv2d {
 public:
  OneDnnConv2d(const Conv2dShape& shape, const float* data, const float* weight, float* output, const ConvEpilogue& epilogue = {},
               const float* bias = nullptr);
  ~OneDnnConv2d();
  void run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::bench
