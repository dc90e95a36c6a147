/// The network operators of the graph IR: names, attributes and fusion patterns, each mapped
/// onto its compute definition in ops/. Attributes are JSON, named as Relay names them:
///   conv2d, depthwise_conv2d: strides [2], padding [top, left, bottom, right], dilation [2],
///     groups, layout "NCHW"|"NHWC", out_dtype;   conv2d_transpose: + output_padding
///   conv2d_packed (data NHWC, weight packed by pack_conv_weight): as conv2d (one group);
///     pack_conv_weight (HWIO weight): block
///   conv2d_blocked (data NCHW{b}n{c}c, weight OIHW{o}o{i}i, as graph_pack makes them): strides,
///     padding, out_dtype
///   conv2d_winograd (data NHWC or NCHW, weight transformed by winograd_weight_transform):
///     padding, tile_size 2|4, layout "NHWC"|"NCHW";   winograd_weight_transform (3x3 weight):
///     tile_size, kernel_layout "HWIO" (the default, NHWC's) | "OIHW" (NCHW's)
///   dense (weight [M, K]), matmul, batch_matmul ([..., M, K] x [..., K, N], batch axes
///     broadcast): out_dtype;  layer_norm (data, scale[, bias]): axis, epsilon;
///   take (data, indices: run-time indices, clamped): axis;  broadcast_to: shape;  tile: reps;   dense_blocked (data NC{b}n{c}c, weight
///     OI{o}o{i}i, VTA's dense_packed layouts): out_dtype
///   bias_add: axis;   batch_norm (data, gamma, beta, mean, var): axis, epsilon
///   add, subtract, multiply, divide, maximum, minimum (numpy broadcasting)
///   power, equal, less, less_equal, greater, greater_equal (bool), logical_and, logical_or;
///     where (condition, a, b: the three broadcast)
///   relu, relu6, sigmoid, tanh, hard_swish, round, exp, sqrt, erf, is_nan (bool), logical_not;
///     is_inf (bool): detect_positive, detect_negative;  gelu: approximate "none"|"tanh";  clip: min, max;  hard_sigmoid: alpha, beta;
///     leaky_relu: alpha
///   max_pool2d, avg_pool2d: kernel [2], strides, padding, dilation, ceil_mode,
///     count_include_pad, layout;   global_avg_pool2d, global_max_pool2d: layout
///   sum, mean, max, min (reductions): axis [any number; none: every axis], keepdims
///   softmax: axis;  concatenate: axis;  reshape: shape;  flatten;  transpose: axes;
///   strided_slice: begin, step, shape (one value per dimension);  pad: before, after, value;  resize2d: size [2], method "nearest"|"bilinear",
///     coordinate_mode "align_corners"|"half_pixel"|"pytorch_half_pixel"|"asymmetric", layout
///   cast: dtype;  right_shift, left_shift: bits
#pragma once
#include "graph/OpRegistry.h"
#include "ops/Conv2d.h"

namespace tessel::graph {

/// Registers every operator above (idempotent; the graph constructors call it).
void registerStandardOps();

/// The attributes of a conv2d-like node (`op` names it in errors), checked as its compute does.
ops::Conv2dAttrs readConv2dAttrs(const std::string& op, const Attrs& attrs);

/// The layout of the convolution whose weight a winograd_weight_transform node reads, from its
/// kernel_layout (HWIO: NHWC, OIHW: NCHW); Error naming any other value.
ops::Layout winogradWeightLayout(const Attrs& attrs);

}  // namespace tessel::graph
