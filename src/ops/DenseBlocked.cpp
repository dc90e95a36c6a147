#include "ops/DenseBlocked.h"

#include "ops/Conv2d.h"
#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using te::Tensor;
using te::Var;

Tensor denseBlocked(const Tensor& data, const Tensor& weight, std::optional<DataType> outDtype) {
  const std::string op = "dense_blocked";
  checkDataAndWeight(op, data, 4, weight, 4);
  TESSEL_CHECK(data.dtype().isFloat() || data.dtype().isIntegral(), "{}: unsupported dtype {}", op, data.dtype().str());
  const auto& d = data.shape();    // [N / b, C / c, b, c]
  const auto& w = weight.shape();  // [M / o, C / i, o, i]
  TESSEL_CHECK(d[1] == w[1] && d[3] == w[3], "{}: data {} has {} channel blocks of {} but weight {} expects {} blocks of {}", op,
               shapeString(d), d[1], d[3], shapeString(w), w[1], w[3]);
  DataType type = outDtype.value_or(defaultAccumulatorType(data.dtype()));
  TESSEL_CHECK(type.isScalar() && (type.isFloat() || type.isIntegral()), "{}: unsupported output dtype {}", op, type.str());
  auto ko = te::reduceAxis(d[1], "ko"), ki = te::reduceAxis(d[3], "ki");
  return te::compute(
      {d[0], w[0], d[2], w[2]},
      [&](const std::vector<Var>& i) {
        return te::sum(multiplyAs(type, data(i[0], ko.var, i[2], ki.var), weight(i[1], ko.var, i[3], ki.var)), {ko, ki});
      },
      "dense_blocked", "dense_blocked", {"bo", "co", "bi", "ci"});
}

}  // namespace tessel::ops
