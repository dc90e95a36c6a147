/// Test support: small ONNX models written by the tests themselves, through ONNX's own protobuf
/// messages (libonnx-dev), for the cases no committed model shows: a ConstantOfShape of 2^29
/// elements, a broadcast of two vectors into a large matrix, a Pad of 2^20 on each side. The
/// interface carries no ONNX type, so a test includes it without ONNX's headers.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessel::testsupport {

/// A tensor of the model: a graph input or output (a float32 type of `shape`; -1 leaves an
/// extent unknown), or an initializer (its values, float32 or int64).
struct OnnxValue {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> floats;  ///< an initializer's values when float32
  std::vector<int64_t> ints;  ///< an initializer's values when int64
  bool int64 = false;
  /// An initializer whose data is outside the model: its external_data entries (location,
  /// offset, length) as written, and no values inside; the test writes the file itself.
  std::map<std::string, std::string> external = {};
};

/// A graph input of float32 `shape` (-1 leaves an extent unknown, 0 is written as 0).
inline OnnxValue onnxInput(const std::string& name, std::vector<int64_t> shape) {
  OnnxValue v;
  v.name = name;
  v.shape = std::move(shape);
  return v;
}
/// A float32 graph output of `rank` unknown extents (the importer infers them).
inline OnnxValue onnxOutput(const std::string& name, size_t rank) { return onnxInput(name, std::vector<int64_t>(rank, -1)); }
/// Initializers of float32 and int64 values.
inline OnnxValue onnxFloats(const std::string& name, std::vector<int64_t> shape, std::vector<float> values) {
  OnnxValue v = onnxInput(name, std::move(shape));
  v.floats = std::move(values);
  return v;
}
inline OnnxValue onnxInt64s(const std::string& name, std::vector<int64_t> shape, std::vector<int64_t> values) {
  OnnxValue v = onnxInput(name, std::move(shape));
  v.ints = std::move(values);
  v.int64 = true;
  return v;
}

struct OnnxNode {
  std::string op, name;
  std::vector<std::string> inputs, outputs;
  std::map<std::string, std::vector<int64_t>> intLists;  ///< attributes of type INTS
  std::map<std::string, int64_t> ints = {};               ///< attributes of type INT
  std::map<std::string, std::string> strings = {};        ///< attributes of type STRING
  std::map<std::string, float> reals = {};                ///< attributes of type FLOAT
};

/// The serialized model (IR version `irVersion`, opset `opset` of the default domain).
std::string onnxModelBytes(const std::vector<OnnxNode>& nodes, const std::vector<OnnxValue>& inputs,
                           const std::vector<OnnxValue>& outputs, const std::vector<OnnxValue>& initializers, int64_t opset = 13,
                           int64_t irVersion = 7);

}  // namespace tessel::testsupport
