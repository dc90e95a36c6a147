#include "common/OnnxModels.h"

#include <onnx/onnx_pb.h>

namespace tessel::testsupport {

namespace {

void describe(onnx::ValueInfoProto& info, const OnnxValue& value) {
  info.set_name(value.name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(value.int64 ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  for (int64_t extent : value.shape) {
    auto* dim = shape->add_dim();
    if (extent >= 0) dim->set_dim_value(extent);
  }
}

}  // namespace

std::string onnxModelBytes(const std::vector<OnnxNode>& nodes, const std::vector<OnnxValue>& inputs,
                           const std::vector<OnnxValue>& outputs, const std::vector<OnnxValue>& initializers, int64_t opset,
                           int64_t irVersion) {
  onnx::ModelProto model;
  model.set_ir_version(irVersion);
  model.set_producer_name("tessel-tests");
  auto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("test");
  for (const OnnxNode& n : nodes) {
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type(n.op);
    node->set_name(n.name);
    for (const auto& i : n.inputs) node->add_input(i);
    for (const auto& o : n.outputs) node->add_output(o);
    for (const auto& [name, values] : n.intLists) {
      onnx::AttributeProto* attribute = node->add_attribute();
      attribute->set_name(name);
      attribute->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : values) attribute->add_ints(v);
    }
    for (const auto& [name, value] : n.ints) {
      onnx::AttributeProto* attribute = node->add_attribute();
      attribute->set_name(name);
      attribute->set_type(onnx::AttributeProto::INT);
      attribute->set_i(value);
    }
    for (const auto& [name, value] : n.reals) {
      onnx::AttributeProto* attribute = node->add_attribute();
      attribute->set_name(name);
      attribute->set_type(onnx::AttributeProto::FLOAT);
      attribute->set_f(value);
    }
    for (const auto& [name, value] : n.strings) {
      onnx::AttributeProto* attribute = node->add_attribute();
      attribute->set_name(name);
      attribute->set_type(onnx::AttributeProto::STRING);
      attribute->set_s(value);
    }
  }
  for (const OnnxValue& v : inputs) describe(*graph->add_input(), v);
  for (const OnnxValue& v : outputs) describe(*graph->add_output(), v);
  for (const OnnxValue& v : initializers) {
    onnx::TensorProto* tensor = graph->add_initializer();
    tensor->set_name(v.name);
    for (int64_t extent : v.shape) tensor->add_dims(extent);
    tensor->set_data_type(v.int64 ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT);
    for (float f : v.floats) tensor->add_float_data(f);
    for (int64_t i : v.ints) tensor->add_int64_data(i);
    if (!v.external.empty()) tensor->set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [key, value] : v.external) {
      auto* entry = tensor->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
  }
  return model.SerializeAsString();
}

}  // namespace tessel::testsupport
