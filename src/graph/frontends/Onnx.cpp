#include "graph/frontends/Onnx.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <set>
#include <string_view>

#include "graph/Operators.h"
#include "graph/frontends/OnnxImporter.h"
#include "graph/frontends/OnnxModel.h"
#include "graph/frontends/OnnxTensor.h"
#include "support/Error.h"

namespace tessel::graph {

namespace {

using namespace onnx_import;

/// Inputs beyond 2^32 elements are refused: no network input is that large, and a damaged
/// extent must not make shape computations overflow further on.
void checkInputSize(const std::string& name, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    TESSEL_CHECK(d > 0 && d <= (int64_t(1) << 32) / n, "input '{}': the shape {} is too large", name, runtime::formatShape(shape));
    n *= d;
  }
}

/// The shape of graph input `input`: the model's, with --input-shape's extents where given.
std::vector<int64_t> inputShape(const onnx::ValueInfoProto& input, const OnnxImportOptions& options) {
  const std::string& name = input.name();
  const auto& dims = input.type().tensor_type().shape().dim();
  auto given = options.inputShapes.find(name);
  if (given != options.inputShapes.end()) {
    const auto& shape = given->second;
    if (input.type().tensor_type().has_shape())
      TESSEL_CHECK(int(shape.size()) == dims.size(), "--input-shape {}: {} dimensions given, the model's input has {}", name,
                   shape.size(), dims.size());
    for (size_t i = 0; i < shape.size(); ++i) {
      TESSEL_CHECK(shape[i] > 0, "--input-shape {}: dimension {} is {}, it must be positive", name, i, shape[i]);
      if (int(i) < dims.size() && dims[int(i)].has_dim_value())
        TESSEL_CHECK(dims[int(i)].dim_value() == shape[i], "--input-shape {}: dimension {} is {} in the model, {} given", name,
                     i, dims[int(i)].dim_value(), shape[i]);
    }
    checkInputSize(name, shape);
    return shape;
  }
  TESSEL_CHECK(input.type().tensor_type().has_shape(), "input '{}' has no shape in the model: give --input-shape {}:D0,D1,...",
               name, name);
  std::vector<int64_t> shape;
  for (int i = 0; i < dims.size(); ++i) {
    if (dims[i].has_dim_value() && dims[i].dim_value() > 0) {
      shape.push_back(dims[i].dim_value());
      continue;
    }
    if (dims[i].has_dim_value())
      fail("input '{}': dimension {} is {} in the model; tessel compiles inputs whose extents are positive", name, i,
           dims[i].dim_value());
    std::string symbol = dims[i].has_dim_param() ? fmt::format("symbolic ('{}')", dims[i].dim_param()) : "unknown";
    fail("input '{}': dimension {} is {}: give its shape with --input-shape {}:D0,D1,...", name, i, symbol, name);
  }
  checkInputSize(name, shape);
  return shape;
}

void addInputs(const onnx::GraphProto& g, Importer& importer, const OnnxImportOptions& options) {
  std::set<std::string> initializers;
  for (const auto& init : g.initializer()) initializers.insert(init.name());
  std::set<std::string> inputNames;
  for (const auto& input : g.input()) {
    inputNames.insert(input.name());
    // Before IR version 4 initializers were listed as inputs too; they stay constants.
    if (initializers.count(input.name())) continue;
    TESSEL_CHECK(input.type().has_tensor_type(), "input '{}' is not a tensor", input.name());
    DataType dtype = dtypeOf(input.type().tensor_type().elem_type(), fmt::format("input '{}'", input.name()));
    TensorType type{inputShape(input, options), dtype};
    importer.define(input.name(), importer.fromNode(importer.graph().addInput(input.name(), type)));
  }
  for (const auto& [name, shape] : options.inputShapes)
    TESSEL_CHECK(inputNames.count(name) && !initializers.count(name), "--input-shape {}: the model has no input '{}'", name,
                 name);
}

/// Each initializer's data is released from the message once it is a tensor: a model's weights
/// are held once, not twice.
void addInitializers(onnx::GraphProto& g, Importer& importer) {
  for (auto& init : *g.mutable_initializer()) {
    std::string what = fmt::format("initializer '{}'", init.name());
    runtime::Tensor value = tensorFromProto(init, what, importer.externalData());
    onnx::TensorProto nameOnly;
    nameOnly.set_name(init.name());
    init.Swap(&nameOnly);
    // An initializer also listed as an input declares its shape twice: they must agree.
    for (const auto& input : g.input()) {
      if (input.name() != init.name() || !input.type().tensor_type().has_shape()) continue;
      const auto& dims = input.type().tensor_type().shape().dim();
      bool same = dims.size() == value.ndim();
      for (int i = 0; same && i < dims.size(); ++i)
        same = !dims[i].has_dim_value() || dims[i].dim_value() == value.shape()[size_t(i)];
      TESSEL_CHECK(same, "{}: its data has shape {}, but the graph input of that name declares another shape", what,
                   runtime::formatShape(value.shape()));
    }
    importer.define(init.name(), Importer::fromConstant(std::move(value)));
  }
}

void convertNode(const onnx::NodeProto& proto, int64_t opset, Importer& importer) {
  NodeView node(proto, opset);
  if (!proto.domain().empty() && proto.domain() != "ai.onnx")
    node.error(fmt::format("operators of domain '{}' are not supported", proto.domain()));
  const auto& table = converters();
  auto it = table.find(proto.op_type());
  if (it == table.end()) {
    std::vector<std::string> known;
    for (const auto& [name, _] : table) known.push_back(name);
    node.error(fmt::format("operator '{}' is not supported (supported: {})", proto.op_type(), fmt::join(known, ", ")));
  }
  std::vector<Value> outputs;
  try {
    outputs = it->second(importer, node);
  } catch (const Error& e) {
    // Every error names its node (most converters' own do already: they start with the label).
    if (std::string_view(e.what()).starts_with(node.label())) throw;
    throw e.withContext(node.label());
  }
  node.checkAttributesRead();
  for (size_t i = 0; i < node.outputCount(); ++i) {
    const std::string& name = node.output(i);
    if (name.empty()) continue;
    TESSEL_CHECK(!importer.isDefined(name), "{}: output '{}' is already defined (ONNX values are assigned once)", node.label(),
                 name);
    if (i < outputs.size()) importer.define(name, std::move(outputs[i]));
    else importer.markUnsupported(name, fmt::format("output {} of {}", i, node.label()));
  }
}

void markOutputs(const onnx::GraphProto& g, Importer& importer) {
  TESSEL_CHECK(g.output_size() > 0, "the graph has no outputs");
  for (const auto& output : g.output()) {
    onnx::NodeProto reader;
    reader.set_op_type("output");
    reader.add_output(output.name());
    reader.add_input(output.name());
    NodeView view(reader, 0);
    const Value& v = importer.input(view, 0);
    TESSEL_CHECK(v.node >= 0 && importer.graph().node(v.node).kind == NodeKind::Op,
                 "graph output '{}' is a constant or an input: there is nothing to compute", output.name());
    importer.graph().markOutput(v.node);
  }
}

Graph importGraph(LoadedModel& model, const OnnxImportOptions& options) {
  registerStandardOps();
  Graph graph;
  ExternalData external(model.directory);
  Importer importer(graph, external);
  onnx::GraphProto& g = *model.proto.mutable_graph();
  addInitializers(g, importer);
  addInputs(g, importer, options);
  for (const auto& node : g.node()) convertNode(node, model.opset, importer);
  markOutputs(g, importer);
  return graph;
}

}  // namespace

Graph importOnnxBytes(const std::string& bytes, const std::string& origin, const OnnxImportOptions& options) {
  LoadedModel model = parseModel(bytes, origin);
  try {
    return importGraph(model, options);
  } catch (const Error& e) {
    throw e.withContext(origin);
  }
}

Graph importOnnx(const std::string& path, const OnnxImportOptions& options) {
  LoadedModel model = loadModel(path);
  try {
    return importGraph(model, options);
  } catch (const Error& e) {
    throw e.withContext(path);
  }
}

bool isOnnxModelPath(const std::string& model) {
  if (model.size() > 5 && model.compare(model.size() - 5, 5, ".onnx") == 0) return true;
  std::error_code ec;
  return std::filesystem::is_regular_file(model, ec);
}

std::pair<std::string, std::vector<int64_t>> parseInputShape(const std::string& text) {
  size_t colon = text.rfind(':');
  TESSEL_CHECK(colon != std::string::npos && colon > 0 && colon + 1 < text.size(),
               "--input-shape '{}': expected NAME:D0,D1,... such as data:1,3,224,224", text);
  std::vector<int64_t> shape;
  std::string dims = text.substr(colon + 1);
  size_t start = 0;
  while (start <= dims.size()) {
    size_t comma = dims.find(',', start);
    std::string item = dims.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t used = 0;
    int64_t d = 0;
    try {
      d = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    TESSEL_CHECK(!item.empty() && used == item.size() && d > 0 && d <= (int64_t(1) << 31),
                 "--input-shape '{}': '{}' is not a positive dimension", text, item);
    shape.push_back(d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return {text.substr(0, colon), shape};
}

}  // namespace tessel::graph
