#include "graph/frontends/OnnxTensor.h"

#include <cstring>

#include "support/Error.h"

namespace tessel::graph::onnx_import {

namespace {

using Proto = onnx::TensorProto;

/// Copies a typed repeated field into the tensor element by element, converting as ONNX's
/// encoding says (int8/uint8/bool travel in int32_data).
template <class Target, class Field>
void copyField(runtime::Tensor& t, const Field& field) {
  Target* out = t.dataAs<Target>();
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Target>(field.Get(i));
}

int64_t elementCount(const onnx::TensorProto& proto, const std::string& what) {
  int64_t count = 1;
  for (int64_t d : proto.dims()) {
    TESSEL_CHECK(d >= 0, "{}: negative dimension {} in its shape", what, d);
    // 2^40 elements is far beyond a protobuf message: a larger product is a damaged shape.
    TESSEL_CHECK(d == 0 || count <= (int64_t(1) << 40) / d, "{}: the shape has too many elements", what);
    count *= d;
  }
  return count;
}

}  // namespace

DataType dtypeOf(int32_t onnxType, const std::string& what) {
  switch (onnxType) {
    case Proto::FLOAT: return DataType::float32();
    case Proto::DOUBLE: return DataType::float64();
    case Proto::INT64: return DataType::int64();
    case Proto::INT32: return DataType::int32();
    case Proto::INT8: return DataType::int8();
    case Proto::UINT8: return DataType::uint8();
    case Proto::BOOL: return DataType::boolean();
    default: fail("{}: element type {} is not supported", what, onnxTypeName(onnxType));
  }
}

std::string onnxTypeName(int32_t onnxType) {
  if (Proto::DataType_IsValid(onnxType)) return Proto::DataType_Name(Proto::DataType(onnxType));
  return std::to_string(onnxType);
}

runtime::Tensor tensorFromProto(const onnx::TensorProto& proto, const std::string& what, ExternalData& external) {
  TESSEL_CHECK(!proto.has_segment(), "{}: segmented tensors are not supported", what);
  DataType dtype = dtypeOf(proto.data_type(), what);
  int64_t count = elementCount(proto, what);
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  size_t bytes = size_t(count) * size_t(dtype.storageBytes());
  // The data must be there before anything is allocated: a damaged shape can claim terabytes.
  if (proto.data_location() == Proto::EXTERNAL) {
    ExternalData::Extent extent = external.locate(proto, what, bytes);
    auto t = runtime::Tensor::empty(shape, dtype);
    ExternalData::read(extent, what, static_cast<char*>(t.data()), bytes);
    return t;
  }
  if (proto.has_raw_data()) {
    TESSEL_CHECK(proto.raw_data().size() == bytes, "{}: {} bytes of raw data for shape {} of {} ({} bytes expected)", what,
                 proto.raw_data().size(), runtime::formatShape(shape), dtype.str(), bytes);
  } else {
    int64_t given = 0;
    switch (proto.data_type()) {
      case Proto::FLOAT: given = proto.float_data_size(); break;
      case Proto::DOUBLE: given = proto.double_data_size(); break;
      case Proto::INT64: given = proto.int64_data_size(); break;
      default: given = proto.int32_data_size(); break;  // int32, int8, uint8 and bool travel in int32_data
    }
    TESSEL_CHECK(given == count, "{}: {} values for shape {} ({} expected)", what, given, runtime::formatShape(shape), count);
  }
  auto t = runtime::Tensor::empty(shape, dtype);
  if (proto.has_raw_data()) {
    if (bytes) std::memcpy(t.data(), proto.raw_data().data(), bytes);
    return t;
  }
  switch (proto.data_type()) {
    case Proto::FLOAT: copyField<float>(t, proto.float_data()); break;
    case Proto::DOUBLE: copyField<double>(t, proto.double_data()); break;
    case Proto::INT64: copyField<int64_t>(t, proto.int64_data()); break;
    case Proto::INT32: copyField<int32_t>(t, proto.int32_data()); break;
    case Proto::INT8: copyField<int8_t>(t, proto.int32_data()); break;
    case Proto::UINT8: copyField<uint8_t>(t, proto.int32_data()); break;
    case Proto::BOOL: copyField<uint8_t>(t, proto.int32_data()); break;
    default: fail("{}: element type {} is not supported", what, onnxTypeName(proto.data_type()));
  }
  return t;
}

}  // namespace tessel::graph::onnx_import
