// Invalid attributes and shapes: every operator raises a tessel::Error whose message names the
// operator and the problem, never a crash or a silently wrong DAG.
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "ops/BatchNorm.h"
#include "ops/Broadcast.h"
#include "ops/Conv2d.h"
#include "ops/Conv2dTranspose.h"
#include "ops/Dense.h"
#include "ops/Elementwise.h"
#include "ops/Pooling.h"
#include "ops/Quantize.h"
#include "ops/Resize.h"
#include "ops/Softmax.h"
#include "ops/Transform.h"

using namespace tessel;
using namespace tessel::ops;
using testsupport::errorOf;
using testsupport::expectContains;

namespace {

te::Tensor input(std::vector<int64_t> shape, DataType dtype = DataType::float32()) {
  return te::placeholder(std::move(shape), dtype, "x");
}

}  // namespace

TEST(OpErrors, Conv2d) {
  auto x = input({1, 8, 10, 10});
  Conv2dAttrs a;
  auto e = errorOf([&] { conv2d(x, input({4, 3, 3, 3}), a); });
  expectContains(e, "conv2d: channel mismatch");
  expectContains(e, "8 channels");
  a.groups = 3;
  expectContains(errorOf([&] { conv2d(x, input({6, 2, 3, 3}), a); }), "groups 3 does not divide the 8 input channels");
  a.groups = 2;
  expectContains(errorOf([&] { conv2d(x, input({5, 4, 3, 3}), a); }), "groups 2 does not divide the 5 output channels");
  a.groups = 0;
  expectContains(errorOf([&] { conv2d(x, input({4, 8, 3, 3}), a); }), "groups must be at least 1");
  a.groups = 1;
  a.strides = {0, 1};
  expectContains(errorOf([&] { conv2d(x, input({4, 8, 3, 3}), a); }), "conv2d: stride height must be at least 1");
  a.strides = {1, 1};
  a.padding = {0, -1, 0, 0};
  expectContains(errorOf([&] { conv2d(x, input({4, 8, 3, 3}), a); }), "must not be negative");
  a.padding = {0, 0, 0, 0};
  a.dilation = {5, 1};
  expectContains(errorOf([&] { conv2d(x, input({4, 8, 3, 3}), a); }), "larger than the padded input");
  a.dilation = {1, 1};
  expectContains(errorOf([&] { conv2d(input({8, 10, 10}), input({4, 8, 3, 3}), a); }), "conv2d: data must be 4-D, got shape [8, 10, 10]");
  expectContains(errorOf([&] { conv2d(x, input({4, 8, 3, 3}, DataType::int8()), a); }), "data is float32 but weight is int8");
  a.layout = Layout::NHWC;  // x read as 10 channels; the HWIO weight expects 8
  expectContains(errorOf([&] { conv2d(x, input({3, 3, 8, 4}), a); }), "HWIO");
}

TEST(OpErrors, DepthwiseAndTransposedConvolution) {
  auto x = input({1, 8, 10, 10});
  Conv2dAttrs a;
  expectContains(errorOf([&] { depthwiseConv2d(x, input({4, 1, 3, 3}), a); }), "depthwise_conv2d: channel mismatch");
  a.groups = 4;
  expectContains(errorOf([&] { depthwiseConv2d(x, input({8, 1, 3, 3}), a); }), "groups 4 contradicts");
  Conv2dTransposeAttrs t;
  expectContains(errorOf([&] { conv2dTranspose(x, input({4, 2, 3, 3}), t); }), "conv2d_transpose: channel mismatch");
  t.strides = {2, 2};
  t.outputPadding = {2, 0};
  expectContains(errorOf([&] { conv2dTranspose(x, input({8, 2, 3, 3}), t); }), "output padding 2 of the height must be smaller");
  t.outputPadding = {0, 0};
  t.groups = 3;
  expectContains(errorOf([&] { conv2dTranspose(x, input({8, 2, 3, 3}), t); }), "groups 3 does not divide");
  t.groups = 1;
  t.padding = {20, 0, 20, 0};
  expectContains(errorOf([&] { conv2dTranspose(x, input({8, 2, 3, 3}), t); }), "is not positive");
}

TEST(OpErrors, DenseMatmulAndBroadcasting) {
  expectContains(errorOf([&] { dense(input({2, 5}), input({3, 4})); }), "dense: reduction mismatch");
  expectContains(errorOf([&] { dense(input({2, 5, 1}), input({3, 5})); }), "dense: data must be 2-D");
  expectContains(errorOf([&] { matmul(input({2, 5}), input({4, 3})); }), "matmul: reduction mismatch");
  auto e = errorOf([&] { add(input({2, 3}), input({4, 3, 2})); });
  expectContains(e, "add: shapes [2, 3] and [4, 3, 2] cannot be broadcast");
  expectContains(errorOf([&] { multiply(input({2}), input({2}, DataType::int32())); }), "multiply: operand dtypes differ");
  expectContains(errorOf([&] { biasAdd(input({2, 3, 4}), input({4}), 1); }), "bias_add: bias must be 1-D with 3 elements");
  expectContains(errorOf([&] { biasAdd(input({2, 3}), input({3}), 2); }), "bias_add: axis 2 is out of range");
  auto c = input({3});
  expectContains(errorOf([&] { batchNorm(input({1, 4, 2, 2}), c, c, c, c); }), "batch_norm: gamma must be 1-D with 4 elements");
}

TEST(OpErrors, ElementwiseAndIntegerOps) {
  auto ints = input({4}, DataType::int32());
  expectContains(errorOf([&] { sigmoid(ints); }), "sigmoid: needs a float tensor, got int32");
  expectContains(errorOf([&] { hardSwish(ints); }), "hard_swish: needs a float tensor");
  expectContains(errorOf([&] { clip(input({4}), 2, 1); }), "clip: lower bound 2 is above the upper bound 1");
  expectContains(errorOf([&] { clip(input({4}, DataType::int8()), -200, 100); }), "do not fit int8");
  expectContains(errorOf([&] { clip(ints, 0.5, 3); }), "must be integers");
  expectContains(errorOf([&] { rightShift(input({4}), 2); }), "right_shift: needs an integer tensor");
  expectContains(errorOf([&] { rightShift(ints, 32); }), "shift of 32 bits out of range for int32");
  expectContains(errorOf([&] { cast(ints, DataType::float32(4)); }), "cast: cannot cast to float32x4");
}

TEST(OpErrors, PoolingSoftmaxResize) {
  auto x = input({1, 2, 6, 6});
  Pool2dAttrs p;
  p.kernel = {7, 3};
  expectContains(errorOf([&] { maxPool2d(x, p); }), "max_pool2d: the height window");
  p.kernel = {3, 3};
  p.strides = {1, 0};
  expectContains(errorOf([&] { avgPool2d(x, p); }), "avg_pool2d: stride width must be at least 1");
  p.strides = {1, 1};
  p.padding = {3, 0, 0, 0};
  expectContains(errorOf([&] { avgPool2d(x, p); }), "must be smaller than the kernel");
  p.padding = {0, 0, 0, 0};
  p.dilation = {2, 2};
  expectContains(errorOf([&] { avgPool2d(x, p); }), "avg_pool2d: dilation 2x2 is not supported");
  expectContains(errorOf([&] { globalAvgPool2d(input({2, 3}), Layout::NCHW); }), "global_avg_pool2d: data must be 4-D");
  expectContains(errorOf([&] { adaptiveAvgPool2d(x, {0, 7}, Layout::NCHW); }), "adaptive_avg_pool2d: output size 0x7 must be positive");
  expectContains(errorOf([&] { adaptiveAvgPool2d(input({2, 3}), {7, 7}, Layout::NCHW); }), "adaptive_avg_pool2d: data must be 4-D");
  expectContains(errorOf([&] { softmax(x, 4); }), "softmax: axis 4 is out of range for a 4-D tensor");
  expectContains(errorOf([&] { softmax(input({3}, DataType::int32())); }), "softmax: needs a float tensor");
  Resize2dAttrs r;
  expectContains(errorOf([&] { resize2d(x, r); }), "resize2d: output size 0x0 must be positive");
  r.outHeight = r.outWidth = 4;
  r.method = ResizeMethod::Bilinear;
  expectContains(errorOf([&] { resize2d(input({1, 1, 2, 2}, DataType::int8()), r); }), "bilinear interpolation needs a float tensor");
  expectContains(errorOf([&] { parseLayout("NWHC"); }), "unknown layout 'NWHC'");
}

TEST(OpErrors, Transforms) {
  auto x = input({2, 3, 4});
  expectContains(errorOf([&] { reshape(x, {5, -1}); }), "reshape: cannot infer the -1");
  expectContains(errorOf([&] { reshape(x, {-1, -1}); }), "more than one -1");
  expectContains(errorOf([&] { reshape(x, {4, 5}); }), "has 24 elements but the new shape [4, 5] has 20");
  expectContains(errorOf([&] { transpose(x, {0, 1}); }), "transpose: 2 axes (0, 1) for a 3-D tensor");
  expectContains(errorOf([&] { transpose(x, {0, 1, 1}); }), "axis 1 appears twice");
  expectContains(errorOf([&] { concatenate({x, input({2, 3, 5})}, 1); }), "they differ in dimension 2");
  expectContains(errorOf([&] { concatenate({x, input({2, 3})}, 0); }), "input 1 is 2-D but input 0 is 3-D");
  expectContains(errorOf([&] { concatenate({}, 0); }), "concatenate: no inputs");
  PadAttrs p;
  p.before = {0, 0};
  p.after = {0, 0, 0};
  expectContains(errorOf([&] { pad(x, p); }), "pad: 2 and 3 widths for a 3-D tensor");
  p.before = {0, -1, 0};
  expectContains(errorOf([&] { pad(x, p); }), "negative width");
  expectContains(errorOf([&] { stridedSlice(x, {0, 0}, {1, 1}, {2, 3}); }), "strided_slice: begin, step and shape need 3 values");
  expectContains(errorOf([&] { stridedSlice(x, {0, 3, 0}, {1, 1, 1}, {2, 1, 4}); }),
                 "dimension 1 of [2, 3, 4]: begin 3, step 1, 1 elements is not a slice");
  expectContains(errorOf([&] { stridedSlice(x, {0, 1, 0}, {1, 1, 1}, {2, 3, 4}); }), "reads past the end");
  expectContains(errorOf([&] { stridedSlice(x, {0, 0, 1}, {1, 1, -1}, {2, 3, 3}); }), "reads past the end");
}
