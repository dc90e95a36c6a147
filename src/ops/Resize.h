/// 2-D image resizing in NCHW or NHWC (tag "injective"), as ONNX Resize and TVM's resize2d
/// define it: nearest-neighbour (with ONNX's rounding modes) or bilinear interpolation, with the
/// align_corners, half_pixel, pytorch_half_pixel or asymmetric mapping of output to input
/// coordinates. Source indices are computed in exact integer arithmetic (the coordinate is a
/// ratio of integers), so a kernel and the reference always pick the same pixels.
#pragma once
#include "ops/Layout.h"
#include "te/Tensor.h"

namespace tessel::ops {

enum class ResizeMethod { Nearest, Bilinear };
enum class CoordinateMode { AlignCorners, HalfPixel, PytorchHalfPixel, Asymmetric };
enum class NearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

struct Resize2dAttrs {
  int64_t outHeight = 0, outWidth = 0;
  ResizeMethod method = ResizeMethod::Nearest;
  /// in = (out + 0.5) * in_size / out_size - 0.5 (half_pixel), out * (in_size - 1) / (out_size - 1)
  /// (align_corners), out * in_size / out_size (asymmetric); pytorch_half_pixel is half_pixel
  /// except that an output extent of 1 reads coordinate 0.
  CoordinateMode coordinateMode = CoordinateMode::HalfPixel;
  NearestMode nearestMode = NearestMode::RoundPreferFloor;  ///< ONNX's default
  Layout layout = Layout::NCHW;
};

te::Tensor resize2d(const te::Tensor& data, const Resize2dAttrs& attrs);

}  // namespace tessel::ops
