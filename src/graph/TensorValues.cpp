#include "graph/TensorValues.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "support/Error.h"

namespace tessel::graph {

namespace {

/// Integers saturate (and NaN becomes 0): a value out of an integer type's range would make
/// the conversion undefined, and hostile models may hold any float.
template <class T>
T toElement(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return 0;
    if (v <= double(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  }
  return static_cast<T>(v);
}

/// Calls f(T{}) with the C++ element type of a numeric dtype.
template <class F>
void withElementType(DataType d, F&& f) {
  if (d == DataType::float32()) f(float{});
  else if (d == DataType::float64()) f(double{});
  else if (d == DataType::int64()) f(int64_t{});
  else if (d == DataType::int32()) f(int32_t{});
  else if (d == DataType::int8()) f(int8_t{});
  else if (d == DataType::uint8() || d == DataType::boolean()) f(uint8_t{});
  else fail("element type {} has no numeric values", d.str());
}

}  // namespace

std::vector<double> tensorValues(const runtime::Tensor& tensor) {
  runtime::Tensor t = tensor.to(runtime::Device::cpu());
  std::vector<double> out;
  withElementType(t.dtype(), [&](auto element) {
    using T = decltype(element);
    const T* p = static_cast<const T*>(t.data());
    out.assign(p, p + t.numel());
  });
  return out;
}

runtime::Tensor valuesToTensor(const std::vector<int64_t>& shape, DataType dtype, const std::vector<double>& values) {
  auto t = runtime::Tensor::empty(shape, dtype);
  TESSEL_CHECK(int64_t(values.size()) == t.numel(), "{} values for a tensor of shape {}", values.size(), runtime::formatShape(shape));
  withElementType(dtype, [&](auto element) {
    using T = decltype(element);
    T* p = static_cast<T*>(t.data());
    for (size_t i = 0; i < values.size(); ++i) p[i] = toElement<T>(values[i]);
  });
  return t;
}

}  // namespace tessel::graph
