#include "ops/Transform.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cmath>
#include <numeric>
#include <set>

#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

namespace {

int64_t product(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<int64_t>());
}

/// Reads x at the element with row-major position `flat`.
Expr readFlat(const Tensor& x, Expr flat) {
  const auto& s = x.shape();
  std::vector<Expr> idx(s.size());
  int64_t stride = 1;
  for (int d = int(s.size()) - 1; d >= 0; --d) {
    Expr q = stride == 1 ? flat : ir::floordiv(flat, Expr(stride));
    idx[size_t(d)] = d == 0 ? q : ir::floormod(q, Expr(s[size_t(d)]));
    stride *= s[size_t(d)];
  }
  return x(idx);
}

}  // namespace

Tensor reshape(const Tensor& x, const std::vector<int64_t>& newShape) {
  std::vector<int64_t> shape = newShape;
  int inferred = -1;
  int64_t known = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      TESSEL_CHECK(inferred < 0, "reshape: more than one -1 in the new shape {}", shapeString(newShape));
      inferred = int(d);
    } else {
      TESSEL_CHECK(shape[d] > 0, "reshape: extent {} in the new shape {} (only positive extents or one -1)", shape[d],
                   shapeString(newShape));
      known *= shape[d];
    }
  }
  int64_t total = product(x.shape());
  if (inferred >= 0) {
    TESSEL_CHECK(total % known == 0, "reshape: cannot infer the -1 of {} from {} elements ({})", shapeString(newShape), total,
                 shapeString(x.shape()));
    shape[size_t(inferred)] = total / known;
  }
  TESSEL_CHECK(product(shape) == total, "reshape: {} has {} elements but the new shape {} has {}", shapeString(x.shape()), total,
               shapeString(shape), product(shape));
  TESSEL_CHECK(!shape.empty(), "reshape: the new shape is empty");
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        Expr flat(int64_t(0));
        int64_t stride = 1;
        for (int d = int(shape.size()) - 1; d >= 0; --d) {
          flat = flat + Expr(i[size_t(d)]) * Expr(stride);
          stride *= shape[size_t(d)];
        }
        return readFlat(x, flat);
      },
      "T_reshape", "injective", axisNames("ax", int(shape.size())));
}

Tensor flatten(const Tensor& x) {
  TESSEL_CHECK(x.ndim() >= 1, "flatten: needs at least a 1-D tensor");
  int64_t rest = x.ndim() == 1 ? 1 : product(std::vector<int64_t>(x.shape().begin() + 1, x.shape().end()));
  std::vector<int64_t> shape{x.shape()[0], rest};
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) { return readFlat(x, Expr(i[0]) * Expr(rest) + Expr(i[1])); }, "T_flatten", "injective",
      axisNames("ax", 2));
}

Tensor transpose(const Tensor& x, std::vector<int> axes) {
  int rank = x.ndim();
  if (axes.empty())
    for (int d = rank - 1; d >= 0; --d) axes.push_back(d);
  TESSEL_CHECK(int(axes.size()) == rank, "transpose: {} axes ({}) for a {}-D tensor", axes.size(), fmt::join(axes, ", "), rank);
  std::set<int> seen;
  for (auto& a : axes) {
    a = normalizeAxis("transpose", a, rank);
    TESSEL_CHECK(seen.insert(a).second, "transpose: axis {} appears twice in ({})", a, fmt::join(axes, ", "));
  }
  std::vector<int64_t> shape;
  for (int a : axes) shape.push_back(x.shape()[size_t(a)]);
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx(static_cast<size_t>(rank));
        for (int k = 0; k < rank; ++k) idx[size_t(axes[size_t(k)])] = i[size_t(k)];
        return x(idx);
      },
      "T_transpose", "injective", axisNames("ax", rank));
}

Tensor stridedSlice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& step,
                    const std::vector<int64_t>& shape) {
  int rank = x.ndim();
  TESSEL_CHECK(int(begin.size()) == rank && int(step.size()) == rank && int(shape.size()) == rank,
               "strided_slice: begin, step and shape need {} values each for {}, got {}, {} and {}", rank,
               shapeString(x.shape()), begin.size(), step.size(), shape.size());
  for (int d = 0; d < rank; ++d) {
    int64_t extent = x.shape()[size_t(d)], first = begin[size_t(d)], count = shape[size_t(d)], s = step[size_t(d)];
    TESSEL_CHECK(count >= 1 && s != 0 && first >= 0 && first < extent,
                 "strided_slice: dimension {} of {}: begin {}, step {}, {} elements is not a slice", d, shapeString(x.shape()),
                 first, s, count);
    // The last index read, first + (count - 1) * step, must stay inside: count is at most the extent.
    TESSEL_CHECK(count <= extent && first + (count - 1) * s >= 0 && first + (count - 1) * s < extent,
                 "strided_slice: dimension {} of {}: begin {}, step {}, {} elements reads past the end", d,
                 shapeString(x.shape()), first, s, count);
  }
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx;
        for (int d = 0; d < rank; ++d) idx.push_back(Expr(begin[size_t(d)]) + scaled(i[size_t(d)], step[size_t(d)]));
        return x(idx);
      },
      "T_strided_slice", "injective", axisNames("ax", rank));
}

Tensor take(const Tensor& data, const Tensor& indices, int axis) {
  TESSEL_CHECK(indices.dtype() == DataType::int64() || indices.dtype() == DataType::int32(),
               "take: indices must be int32 or int64, got {} ('{}')", indices.dtype().str(), indices.name());
  const int rank = data.ndim();
  const auto a = size_t(normalizeAxis("take", axis, rank));
  const int64_t extent = data.shape()[a];
  TESSEL_CHECK(extent > 0, "take: axis {} of {} is empty", axis, shapeString(data.shape()));
  std::vector<int64_t> shape(data.shape().begin(), data.shape().begin() + long(a));
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), data.shape().begin() + long(a) + 1, data.shape().end());
  const size_t indexRank = indices.shape().size();
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> at(i.begin() + long(a), i.begin() + long(a + indexRank));
        Expr index = ir::cast(DataType::int64(), indices(at));
        index = ir::select(index < Expr(int64_t(0)), index + Expr(extent), index);
        index = ir::min(ir::max(index, Expr(int64_t(0))), Expr(extent - 1));
        std::vector<Expr> idx(i.begin(), i.begin() + long(a));
        idx.push_back(index);
        idx.insert(idx.end(), i.begin() + long(a + indexRank), i.end());
        return data(idx);
      },
      "T_take", "injective", axisNames("ax", int(shape.size())));
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& repeats) {
  TESSEL_CHECK(repeats.size() == size_t(x.ndim()), "tile: {} repeats for {}", repeats.size(), shapeString(x.shape()));
  std::vector<int64_t> shape;
  for (size_t d = 0; d < repeats.size(); ++d) {
    TESSEL_CHECK(repeats[d] >= 1, "tile: repeat {} of axis {} is not positive", repeats[d], d);
    shape.push_back(x.shape()[d] * repeats[d]);
  }
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx;
        for (size_t d = 0; d < i.size(); ++d)
          idx.push_back(repeats[d] == 1 ? Expr(i[d]) : ir::floormod(Expr(i[d]), Expr(x.shape()[d])));
        return x(idx);
      },
      "T_tile", "injective", axisNames("ax", int(shape.size())));
}

Tensor concatenate(const std::vector<Tensor>& inputs, int axis) {
  TESSEL_CHECK(!inputs.empty(), "concatenate: no inputs");
  const Tensor& first = inputs[0];
  int rank = first.ndim();
  int a = normalizeAxis("concatenate", axis, rank);
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& t = inputs[k];
    TESSEL_CHECK(t.dtype() == first.dtype(), "concatenate: input {} is {} but input 0 is {}", k, t.dtype().str(),
                 first.dtype().str());
    TESSEL_CHECK(t.ndim() == rank, "concatenate: input {} is {}-D but input 0 is {}-D", k, t.ndim(), rank);
    for (int d = 0; d < rank; ++d)
      TESSEL_CHECK(d == a || t.shape()[size_t(d)] == first.shape()[size_t(d)],
                   "concatenate: input {} has shape {}, input 0 {}: they differ in dimension {}, not only in the axis {}", k,
                   shapeString(t.shape()), shapeString(first.shape()), d, a);
    offsets.push_back(total);
    total += t.shape()[size_t(a)];
  }
  std::vector<int64_t> shape = first.shape();
  shape[size_t(a)] = total;
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        auto read = [&](size_t k) {
          std::vector<Expr> idx(i.begin(), i.end());
          idx[size_t(a)] = Expr(i[size_t(a)]) - Expr(offsets[k]);
          return inputs[k](idx);
        };
        // Nested if_then_else from the last input: only the taken branch reads its input.
        Expr value = read(inputs.size() - 1);
        for (size_t k = inputs.size() - 1; k-- > 0;) value = ir::ifThenElse(Expr(i[size_t(a)]) < Expr(offsets[k + 1]), read(k), value);
        return value;
      },
      "T_concat", "injective", axisNames("ax", rank));
}

Tensor pad(const Tensor& x, const PadAttrs& attrs, const std::string& name) {
  int rank = x.ndim();
  TESSEL_CHECK(int(attrs.before.size()) == rank && int(attrs.after.size()) == rank,
               "pad: {} and {} widths for a {}-D tensor (one before and one after each dimension)", attrs.before.size(),
               attrs.after.size(), rank);
  for (int d = 0; d < rank; ++d)
    TESSEL_CHECK(attrs.before[size_t(d)] >= 0 && attrs.after[size_t(d)] >= 0,
                 "pad: negative width {} / {} in dimension {} (cropping is not padding)", attrs.before[size_t(d)],
                 attrs.after[size_t(d)], d);
  if (x.dtype().isIntegral())
    TESSEL_CHECK(attrs.value == std::floor(attrs.value), "pad: value {} for an {} tensor must be an integer", attrs.value,
                 x.dtype().str());
  std::vector<int64_t> shape(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) shape[size_t(d)] = x.shape()[size_t(d)] + attrs.before[size_t(d)] + attrs.after[size_t(d)];
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        Expr inside;
        std::vector<Expr> idx;
        for (int d = 0; d < rank; ++d) {
          int64_t b = attrs.before[size_t(d)], e = attrs.after[size_t(d)];
          idx.push_back(b ? Expr(i[size_t(d)]) - Expr(b) : Expr(i[size_t(d)]));
          auto add = [&](Expr c) { inside = inside.defined() ? (inside && c) : c; };
          if (b) add(Expr(i[size_t(d)]) >= Expr(b));
          if (e) add(Expr(i[size_t(d)]) < Expr(x.shape()[size_t(d)] + b));
        }
        if (!inside.defined()) return x(idx);
        return ir::ifThenElse(inside, x(idx), ir::makeConst(x.dtype(), attrs.value));
      },
      name, "injective,pad", axisNames("i", rank));
}

Tensor padImage(const Tensor& x, int heightAxis, int widthAxis, const std::array<int64_t, 4>& padding, double value,
                const std::string& name) {
  if (padding == std::array<int64_t, 4>{0, 0, 0, 0}) return x;
  PadAttrs attrs;
  attrs.before.assign(size_t(x.ndim()), 0);
  attrs.after.assign(size_t(x.ndim()), 0);
  attrs.before[size_t(heightAxis)] = padding[0];
  attrs.before[size_t(widthAxis)] = padding[1];
  attrs.after[size_t(heightAxis)] = padding[2];
  attrs.after[size_t(widthAxis)] = padding[3];
  attrs.value = value;
  return pad(x, attrs, name);
}

}  // namespace tessel::ops
