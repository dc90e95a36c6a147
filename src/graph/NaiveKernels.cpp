#include "graph/NaiveKernels.h"

#include <array>
#include <cmath>

#include "ops/Winograd.h"
#include "support/Error.h"

namespace tessel::graph {

namespace {

std::array<int64_t, 2> pair(const Attrs& attrs, const char* key, int64_t fallback) {
  auto v = attrs.value(key, std::vector<int64_t>{fallback, fallback});
  TESSEL_CHECK(v.size() == 2, "naive kernel: attribute '{}' needs 2 values", key);
  return {v[0], v[1]};
}

/// top, left, bottom, right.
std::array<int64_t, 4> padding(const Attrs& attrs) {
  auto v = attrs.value("padding", std::vector<int64_t>{0, 0, 0, 0});
  if (v.size() == 2) v = {v[0], v[1], v[0], v[1]};
  TESSEL_CHECK(v.size() == 4, "naive kernel: padding needs 2 or 4 values");
  return {v[0], v[1], v[2], v[3]};
}

/// Reads element (n, c, y, x) of an image in either layout.
struct Image {
  const std::vector<double>& v;
  int64_t c, h, w;
  bool nhwc;
  double at(int64_t n, int64_t ch, int64_t y, int64_t x) const {
    return nhwc ? v[size_t(((n * h + y) * w + x) * c + ch)] : v[size_t(((n * c + ch) * h + y) * w + x)];
  }
};

/// conv2d and depthwise conv2d: out[n, k, oy, ox] = sum over the filter window and the input
/// channels of k's group of in[n, c, oy * sh - pt + ky * dh, ox * sw - pl + kx * dw] * w(k, c, ky, kx).
std::vector<double> convolution(const Node& node, const std::vector<double>& data, const TensorType& dataType,
                                const std::vector<double>& weight, const TensorType& weightType) {
  bool nhwc = node.attrs.value("layout", std::string("NCHW")) == "NHWC";
  bool depthwise = node.op == "depthwise_conv2d";
  const auto& ds = dataType.shape;
  const auto& ws = weightType.shape;
  const auto& os = node.type.shape;
  int64_t batch = ds[0], channels = nhwc ? ds[3] : ds[1], height = nhwc ? ds[1] : ds[2], width = nhwc ? ds[2] : ds[3];
  int64_t outChannels = nhwc ? os[3] : os[1], outHeight = nhwc ? os[1] : os[2], outWidth = nhwc ? os[2] : os[3];
  // Weight as (k, c-in-group, ky, kx) whatever its layout.
  int64_t kh, kw, perGroup, groups, multiplier = 1;
  if (depthwise) {
    kh = nhwc ? ws[0] : ws[2];
    kw = nhwc ? ws[1] : ws[3];
    multiplier = nhwc ? ws[3] : ws[1];
    perGroup = 1;
    groups = channels;
  } else {
    kh = nhwc ? ws[0] : ws[2];
    kw = nhwc ? ws[1] : ws[3];
    perGroup = nhwc ? ws[2] : ws[1];
    groups = node.attrs.value("groups", int64_t(1));
  }
  auto weightAt = [&](int64_t k, int64_t c, int64_t ky, int64_t kx) {
    if (depthwise) {  // k = channel * multiplier + m
      int64_t ch = k / multiplier, m = k % multiplier;
      return nhwc ? weight[size_t(((ky * kw + kx) * channels + ch) * multiplier + m)]
                  : weight[size_t(((ch * multiplier + m) * kh + ky) * kw + kx)];
    }
    return nhwc ? weight[size_t(((ky * kw + kx) * perGroup + c) * outChannels + k)]
                : weight[size_t(((k * perGroup + c) * kh + ky) * kw + kx)];
  };
  auto [sh, sw] = pair(node.attrs, "strides", 1);
  auto [dh, dw] = pair(node.attrs, "dilation", 1);
  auto pad = padding(node.attrs);
  Image in{data, channels, height, width, nhwc};
  int64_t outPerGroup = outChannels / groups;
  std::vector<double> out(size_t(batch * outChannels * outHeight * outWidth));
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t k = 0; k < outChannels; ++k) {
      int64_t firstChannel = depthwise ? k / multiplier : (k / outPerGroup) * perGroup;
      for (int64_t oy = 0; oy < outHeight; ++oy)
        for (int64_t ox = 0; ox < outWidth; ++ox) {
          double sum = 0;
          for (int64_t c = 0; c < perGroup; ++c)
            for (int64_t ky = 0; ky < kh; ++ky) {
              int64_t y = oy * sh - pad[0] + ky * dh;
              if (y < 0 || y >= height) continue;
              for (int64_t kx = 0; kx < kw; ++kx) {
                int64_t x = ox * sw - pad[1] + kx * dw;
                if (x < 0 || x >= width) continue;
                sum += in.at(n, firstChannel + c, y, x) * weightAt(k, c, ky, kx);
              }
            }
          size_t o = nhwc ? size_t(((n * outHeight + oy) * outWidth + ox) * outChannels + k)
                          : size_t(((n * outChannels + k) * outHeight + oy) * outWidth + ox);
          out[o] = sum;
        }
    }
  return out;
}

/// conv2d_winograd in NCHW (ops/WinogradNchw.h) with its transformed weight U [alpha, alpha, C,
/// K], tile by tile from the transform matrices: V = B^T d B of each m x m output tile's alpha x
/// alpha input window (zero past the image), M = sum over c of U V per transform point, the
/// outputs A^T M A cropped to the image. In doubles, so the result is the exact convolution with
/// the original weights to rounding: the oracle of the float kernels' Winograd error.
std::vector<double> winogradConvolutionNchw(const Node& node, const std::vector<double>& data, const TensorType& dataType,
                                            const std::vector<double>& transformed, const TensorType& transformedType) {
  const auto& w = ops::winogradMatrices(node.attrs.value("tile_size", 4));
  const auto& ds = dataType.shape;
  const auto& os = node.type.shape;
  int64_t batch = ds[0], channels = ds[1], height = ds[2], width = ds[3];
  int64_t outChannels = transformedType.shape[3], outHeight = os[2], outWidth = os[3];
  int64_t m = w.m, a = w.alpha, points = a * a;
  auto pad = padding(node.attrs);
  std::vector<double> out(size_t(batch * outChannels * outHeight * outWidth));
  size_t pointCount = size_t(points);
  std::vector<double> window(pointCount), rows(pointCount), v(pointCount), sums(pointCount * size_t(outChannels));
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t ty = 0; ty * m < outHeight; ++ty)
      for (int64_t tx = 0; tx * m < outWidth; ++tx) {
        std::fill(sums.begin(), sums.end(), 0.0);
        for (int64_t c = 0; c < channels; ++c) {
          for (int64_t r = 0; r < a; ++r)
            for (int64_t s = 0; s < a; ++s) {
              int64_t y = ty * m + r - pad[0], x = tx * m + s - pad[1];
              bool inside = y >= 0 && y < height && x >= 0 && x < width;
              window[size_t(r * a + s)] = inside ? data[size_t(((n * channels + c) * height + y) * width + x)] : 0.0;
            }
          for (int64_t e = 0; e < a; ++e)  // B^T d, then (B^T d) B
            for (int64_t s = 0; s < a; ++s) {
              double sum = 0;
              for (int64_t r = 0; r < a; ++r) sum += w.BT[size_t(e)][size_t(r)] * window[size_t(r * a + s)];
              rows[size_t(e * a + s)] = sum;
            }
          for (int64_t e = 0; e < a; ++e)
            for (int64_t nu = 0; nu < a; ++nu) {
              double sum = 0;
              for (int64_t s = 0; s < a; ++s) sum += rows[size_t(e * a + s)] * w.BT[size_t(nu)][size_t(s)];
              v[size_t(e * a + nu)] = sum;
            }
          for (int64_t p = 0; p < points; ++p) {
            const double* u = &transformed[size_t((p * channels + c) * outChannels)];
            for (int64_t k = 0; k < outChannels; ++k) sums[size_t(k * points + p)] += u[k] * v[size_t(p)];
          }
        }
        for (int64_t k = 0; k < outChannels; ++k)
          for (int64_t i = 0; i < m && ty * m + i < outHeight; ++i)
            for (int64_t j = 0; j < m && tx * m + j < outWidth; ++j) {
              double sum = 0;
              for (int64_t e = 0; e < a; ++e)
                for (int64_t nu = 0; nu < a; ++nu)
                  sum += w.AT[size_t(i)][size_t(e)] * sums[size_t(k * points + e * a + nu)] * w.AT[size_t(j)][size_t(nu)];
              out[size_t(((n * outChannels + k) * outHeight + ty * m + i) * outWidth + tx * m + j)] = sum;
            }
      }
  return out;
}

/// dense: out[i, j] = sum_k data[i, k] * weight[j, k].
std::vector<double> dense(const std::vector<double>& data, const TensorType& dataType, const std::vector<double>& weight,
                          const TensorType& weightType) {
  int64_t rows = dataType.shape[0], features = dataType.shape[1], units = weightType.shape[0];
  std::vector<double> out(size_t(rows * units));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < units; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < features; ++k) sum += data[size_t(i * features + k)] * weight[size_t(j * features + k)];
      out[size_t(i * units + j)] = sum;
    }
  return out;
}

/// conv2d_blocked: out[bo, k, oy, ox, bi, ki] = sum over the input channel blocks, the filter
/// window and the channels of a block of data[bo, co, oy * sh - pt + ky, ox * sw - pl + kx, bi, ci]
/// * weight[k, co, ky, kx, ki, ci].
std::vector<double> blockedConvolution(const Node& node, const std::vector<double>& data, const TensorType& dataType,
                                       const std::vector<double>& weight, const TensorType& weightType) {
  const auto& d = dataType.shape;    // [N / b, C / c, H, W, b, c]
  const auto& w = weightType.shape;  // [K / o, C / c, KH, KW, o, c]
  const auto& o = node.type.shape;   // [N / b, K / o, OH, OW, b, o]
  auto [sh, sw] = pair(node.attrs, "strides", 1);
  auto pad = padding(node.attrs);
  int64_t height = d[2], width = d[3], batchBlock = d[4], channelBlock = d[5];
  int64_t channelBlocks = d[1], kh = w[2], kw = w[3], outBlock = w[4];
  auto dataAt = [&](int64_t bo, int64_t co, int64_t y, int64_t x, int64_t bi, int64_t ci) {
    return data[size_t(((((bo * channelBlocks + co) * height + y) * width + x) * batchBlock + bi) * channelBlock + ci)];
  };
  auto weightAt = [&](int64_t k, int64_t co, int64_t ky, int64_t kx, int64_t ki, int64_t ci) {
    return weight[size_t(((((k * channelBlocks + co) * kh + ky) * kw + kx) * outBlock + ki) * channelBlock + ci)];
  };
  std::vector<double> out(size_t(o[0] * o[1] * o[2] * o[3] * o[4] * o[5]));
  size_t at = 0;
  for (int64_t bo = 0; bo < o[0]; ++bo)
    for (int64_t k = 0; k < o[1]; ++k)
      for (int64_t oy = 0; oy < o[2]; ++oy)
        for (int64_t ox = 0; ox < o[3]; ++ox)
          for (int64_t bi = 0; bi < o[4]; ++bi)
            for (int64_t ki = 0; ki < o[5]; ++ki) {
              double sum = 0;
              for (int64_t co = 0; co < channelBlocks; ++co)
                for (int64_t ky = 0; ky < kh; ++ky) {
                  int64_t y = oy * sh - pad[0] + ky;
                  if (y < 0 || y >= height) continue;
                  for (int64_t kx = 0; kx < kw; ++kx) {
                    int64_t x = ox * sw - pad[1] + kx;
                    if (x < 0 || x >= width) continue;
                    for (int64_t ci = 0; ci < channelBlock; ++ci)
                      sum += dataAt(bo, co, y, x, bi, ci) * weightAt(k, co, ky, kx, ki, ci);
                  }
                }
              out[at++] = sum;
            }
  return out;
}

/// dense_blocked: out[bo, m, bi, mi] = sum over the input channel blocks and the channels of a
/// block of data[bo, c, bi, ci] * weight[m, c, mi, ci].
std::vector<double> blockedDense(const std::vector<double>& data, const TensorType& dataType, const std::vector<double>& weight,
                                 const TensorType& weightType) {
  const auto& d = dataType.shape;    // [N / b, C / c, b, c]
  const auto& w = weightType.shape;  // [M / o, C / c, o, c]
  int64_t channelBlocks = d[1], batchBlock = d[2], channelBlock = d[3], outBlock = w[2];
  std::vector<double> out(size_t(d[0] * w[0] * batchBlock * outBlock));
  size_t at = 0;
  for (int64_t bo = 0; bo < d[0]; ++bo)
    for (int64_t m = 0; m < w[0]; ++m)
      for (int64_t bi = 0; bi < batchBlock; ++bi)
        for (int64_t mi = 0; mi < outBlock; ++mi) {
          double sum = 0;
          for (int64_t c = 0; c < channelBlocks; ++c)
            for (int64_t ci = 0; ci < channelBlock; ++ci)
              sum += data[size_t(((bo * channelBlocks + c) * batchBlock + bi) * channelBlock + ci)] *
                     weight[size_t(((m * channelBlocks + c) * outBlock + mi) * channelBlock + ci)];
          out[at++] = sum;
        }
  return out;
}

/// sum, mean, max and min over the node's axes (all of them when none are given): each input
/// element added into the output element of its kept coordinates (the reduced ones are dropped,
/// or kept as extents of 1: either way they do not move the output's flat index).
std::vector<double> reduction(const Node& node, const std::vector<double>& in, const TensorType& inType) {
  const auto& shape = inType.shape;
  const size_t rank = shape.size();
  std::vector<int> axes = node.attrs.value("axis", std::vector<int>{});
  std::vector<bool> reduced(rank, axes.empty());
  for (int a : axes) reduced[size_t(a < 0 ? a + int(rank) : a)] = true;
  // The output's stride of each input axis: 0 for a reduced one.
  std::vector<int64_t> stride(rank, 0);
  int64_t step = 1, count = 1;
  for (size_t d = rank; d-- > 0;) {
    if (reduced[d]) {
      count *= shape[d];
      continue;
    }
    stride[d] = step;
    step *= shape[d];
  }
  const bool isMax = node.op == "max", isMin = node.op == "min";
  std::vector<double> out(size_t(step), isMax ? -HUGE_VAL : isMin ? HUGE_VAL : 0.0);
  std::vector<int64_t> coord(rank, 0);
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d) o += coord[d] * stride[d];
    double& acc = out[size_t(o)];
    double v = in[i];
    if (isMax) acc = v > acc ? v : acc;
    else if (isMin) acc = v < acc ? v : acc;
    else acc += v;
    for (size_t d = rank; d-- > 0;) {
      if (++coord[d] < shape[d]) break;
      coord[d] = 0;
    }
  }
  if (node.op == "mean")
    for (double& v : out) v /= double(count);
  return out;
}

/// Floats, and 8-bit integers: their products summed in double stay exact (below 2^53) for
/// any reduction shorter than 2^38 terms, so the int32 accumulation is reproduced exactly.
bool naiveOperand(DataType t) {
  return t == DataType::float32() || t == DataType::float64() || t == DataType::int8() || t == DataType::uint8();
}

}  // namespace

std::optional<std::vector<double>> evaluateNaively(const Node& node, const std::vector<const std::vector<double>*>& inputs,
                                                   const std::vector<TensorType>& inputTypes) {
  // Reductions of floats (an integer mean truncates as C does: its expression is interpreted).
  if ((node.op == "sum" || node.op == "mean" || node.op == "max" || node.op == "min") && inputs.size() == 1 &&
      inputTypes[0].dtype.isFloat())
    return reduction(node, *inputs[0], inputTypes[0]);
  bool supported = inputs.size() == 2;
  for (const auto& t : inputTypes) supported = supported && naiveOperand(t.dtype);
  if (!supported) return std::nullopt;
  if (node.op == "conv2d_blocked" && node.type.shape.size() == 6)
    return blockedConvolution(node, *inputs[0], inputTypes[0], *inputs[1], inputTypes[1]);
  if (node.op == "dense_blocked" && node.type.shape.size() == 4)
    return blockedDense(*inputs[0], inputTypes[0], *inputs[1], inputTypes[1]);
  if ((node.op == "conv2d" || node.op == "depthwise_conv2d") && node.type.shape.size() == 4)
    return convolution(node, *inputs[0], inputTypes[0], *inputs[1], inputTypes[1]);
  if (node.op == "conv2d_winograd" && node.attrs.value("layout", std::string("NCHW")) == "NCHW" && node.type.shape.size() == 4)
    return winogradConvolutionNchw(node, *inputs[0], inputTypes[0], *inputs[1], inputTypes[1]);
  if (node.op == "dense" && node.type.shape.size() == 2 && inputTypes[0].shape.size() == 2)
    return dense(*inputs[0], inputTypes[0], *inputs[1], inputTypes[1]);
  return std::nullopt;
}

}  // namespace tessel::graph
