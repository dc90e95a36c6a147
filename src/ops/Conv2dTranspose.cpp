#include "ops/Conv2dTranspose.h"

#include "ops/Conv2d.h"
#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

Tensor conv2dTranspose(const Tensor& data, const Tensor& weight, const Conv2dTransposeAttrs& attrs) {
  const std::string op = "conv2d_transpose";
  checkDataAndWeight(op, data, 4, weight, 4);
  const auto& d = data.shape();
  const auto& w = weight.shape();
  int64_t groups = attrs.groups;
  TESSEL_CHECK(groups >= 1, "{}: groups must be at least 1, got {}", op, groups);
  TESSEL_CHECK(w[0] == d[1], "{}: channel mismatch: data has {} channels but weight {} ([C_in, C_out/groups, KH, KW]) has {}", op,
               d[1], shapeString(w), w[0]);
  TESSEL_CHECK(d[1] % groups == 0, "{}: groups {} does not divide the {} input channels", op, groups, d[1]);
  int64_t inPerGroup = d[1] / groups, outPerGroup = w[1], outChannels = w[1] * groups;
  int64_t kernel[2] = {w[2], w[3]}, in[2] = {d[2], d[3]}, out[2], before[2];
  for (int k = 0; k < 2; ++k) {
    const char* dim = k == 0 ? "height" : "width";
    int64_t s = attrs.strides[size_t(k)], dil = attrs.dilation[size_t(k)], op0 = attrs.outputPadding[size_t(k)];
    int64_t pa = attrs.padding[size_t(k)], pb = attrs.padding[size_t(k + 2)];
    TESSEL_CHECK(s >= 1 && dil >= 1, "{}: stride and dilation of the {} must be at least 1, got {} and {}", op, dim, s, dil);
    TESSEL_CHECK(pa >= 0 && pb >= 0, "{}: padding of the {} must not be negative, got {} and {}", op, dim, pa, pb);
    TESSEL_CHECK(op0 >= 0 && (op0 < s || op0 < dil),
                 "{}: output padding {} of the {} must be smaller than the stride ({}) or the dilation ({})", op, op0, dim, s, dil);
    out[k] = (in[k] - 1) * s - pa - pb + dil * (kernel[k] - 1) + op0 + 1;
    TESSEL_CHECK(out[k] >= 1, "{}: output {} {} is not positive (input {}, kernel {}, stride {}, padding {} + {})", op, dim, out[k],
                 in[k], kernel[k], s, pa, pb);
    // Where input row 0 lands in the dilated, padded input that the flipped kernel slides over.
    before[k] = dil * (kernel[k] - 1) - pa;
  }
  DataType outDtype = attrs.outDtype.value_or(defaultAccumulatorType(data.dtype()));
  int64_t dh = attrs.dilation[0], dw = attrs.dilation[1];
  // data_dilate_pad[n, c, h, w] = data[n, c, (h - before) / s, ...] where that divides evenly and
  // lies inside the input, else 0. Its extent covers every row the kernel reads.
  Tensor dilated = te::compute(
      {d[0], d[1], out[0] + dh * (kernel[0] - 1), out[1] + dw * (kernel[1] - 1)},
      [&](const std::vector<Var>& i) {
        Expr cond;
        std::vector<Expr> idx{i[0], i[1]};
        for (int k = 0; k < 2; ++k) {
          Expr shifted = Expr(i[size_t(2 + k)]) - Expr(before[k]);
          int64_t s = attrs.strides[size_t(k)];
          Expr c = shifted >= Expr(int64_t(0)) && shifted < Expr((in[k] - 1) * s + 1);
          if (s > 1) c = c && ir::floormod(shifted, Expr(s)) == Expr(int64_t(0));
          cond = cond.defined() ? (cond && c) : c;
          idx.push_back(s > 1 ? ir::floordiv(shifted, Expr(s)) : shifted);
        }
        return ir::ifThenElse(cond, data(idx), ir::makeConst(data.dtype(), 0));
      },
      "data_dilate_pad", "injective,pad", {"i0", "i1", "i2", "i3"});
  auto rc = te::reduceAxis(inPerGroup, "rc"), ry = te::reduceAxis(kernel[0], "ry"), rx = te::reduceAxis(kernel[1], "rx");
  return te::compute(
      {d[0], outChannels, out[0], out[1]},
      [&](const std::vector<Var>& i) {
        Expr c = groups == 1 ? Expr(rc.var) : ir::floordiv(i[1], Expr(outPerGroup)) * Expr(inPerGroup) + rc.var;
        Expr o = groups == 1 ? Expr(i[1]) : ir::floormod(i[1], Expr(outPerGroup));
        Expr x = dilated(i[0], c, Expr(i[2]) + scaled(ry.var, dh), Expr(i[3]) + scaled(rx.var, dw));
        Expr f = weight(c, o, Expr(kernel[0] - 1) - Expr(ry.var), Expr(kernel[1] - 1) - Expr(rx.var));
        return te::sum(multiplyAs(outDtype, x, f), {rc, ry, rx});
      },
      "conv2d_transpose_nchw", "conv2d_transpose_nchw", {"b", "c", "h", "w"});
}

}  // namespace tessel::ops
