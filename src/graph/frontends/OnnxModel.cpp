#include "graph/frontends/OnnxModel.h"

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <set>

#include "graph/frontends/OnnxImporter.h"
#include "support/Error.h"
#include "support/Files.h"

namespace tessel::graph::onnx_import {

namespace {

/// protobuf refuses messages of 2 GiB and more; ONNX keeps larger weights in external files.
constexpr FileKind kOnnxFile{"ONNX model", uint64_t(std::numeric_limits<int>::max())};

int64_t defaultDomainOpset(const onnx::ModelProto& model, const std::string& origin) {
  int64_t opset = -1;
  for (const auto& import : model.opset_import())
    if (import.domain().empty() || import.domain() == "ai.onnx") {
      TESSEL_CHECK(opset < 0, "{}: the model imports the default ONNX domain twice", origin);
      opset = import.version();
    }
  TESSEL_CHECK(opset >= 0, "{}: the model imports no opset of the default ONNX domain", origin);
  TESSEL_CHECK(opset >= kMinOpset && opset <= kMaxOpset, "{}: opset {} is not supported (tessel reads opsets {} to {})",
               origin, opset, kMinOpset, kMaxOpset);
  return opset;
}

/// Whether the attribute holds the value its declared type names (ONNX's IR.md: exactly the
/// field of its type is set; repeated fields may be empty).
bool holdsItsType(const onnx::AttributeProto& a) {
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::FLOAT: return a.has_f();
    case A::INT: return a.has_i();
    case A::STRING: return a.has_s();
    case A::TENSOR: return a.has_t();
    case A::GRAPH: return a.has_g();
    case A::SPARSE_TENSOR: return a.has_sparse_tensor();
    case A::TYPE_PROTO: return a.has_tp();
    case A::FLOATS:
    case A::INTS:
    case A::STRINGS:
    case A::TENSORS:
    case A::GRAPHS:
    case A::SPARSE_TENSORS:
    case A::TYPE_PROTOS: return true;
    default: return false;
  }
}

void checkAttributes(const NodeView& node, const onnx::NodeProto& proto) {
  std::set<std::string> names;
  for (const auto& a : proto.attribute()) {
    if (a.name().empty()) node.error("has an attribute without a name");
    if (!names.insert(a.name()).second) node.error(fmt::format("attribute '{}' is given twice", a.name()));
    if (a.type() == onnx::AttributeProto::UNDEFINED) node.error(fmt::format("attribute '{}' has no type", a.name()));
    if (!holdsItsType(a))
      node.error(fmt::format("attribute '{}' is declared {} but holds no such value", a.name(),
                             onnx::AttributeProto::AttributeType_Name(a.type())));
  }
}

/// The graph's names: each value defined once (inputs, initializers, node outputs), every
/// value read after its definition (the nodes in topological order), the outputs defined.
void checkGraph(const onnx::GraphProto& g, int64_t opset) {
  TESSEL_CHECK(g.sparse_initializer_size() == 0, "sparse initializers are not supported (initializer '{}')",
               g.sparse_initializer(0).values().name());
  std::set<std::string> defined;
  for (const auto& init : g.initializer()) {
    TESSEL_CHECK(!init.name().empty(), "an initializer has no name");
    TESSEL_CHECK(defined.insert(init.name()).second, "initializer '{}' is defined twice", init.name());
  }
  std::set<std::string> inputs;
  for (const auto& input : g.input()) {
    TESSEL_CHECK(!input.name().empty(), "a graph input has no name");
    TESSEL_CHECK(inputs.insert(input.name()).second, "graph input '{}' is listed twice", input.name());
    defined.insert(input.name());  // may also be an initializer: before IR version 4 those were listed as inputs
  }
  for (const auto& proto : g.node()) {
    NodeView node(proto, opset);
    checkAttributes(node, proto);
    for (const auto& input : proto.input())
      if (!input.empty() && !defined.count(input))
        node.error(fmt::format("input '{}' is not defined before the node (the nodes are not in topological order, or the "
                               "graph has a cycle)",
                               input));
    for (const auto& output : proto.output())
      if (!output.empty() && !defined.insert(output).second)
        node.error(fmt::format("output '{}' is already defined (ONNX values are assigned once)", output));
  }
  for (const auto& output : g.output())
    TESSEL_CHECK(defined.count(output.name()), "graph output '{}' is not computed by any node, nor an input or initializer",
                 output.name());
}

void checkModel(LoadedModel& model, const std::string& origin) {
  const onnx::ModelProto& m = model.proto;
  TESSEL_CHECK(m.has_graph(), "{}: the ONNX model has no graph", origin);
  TESSEL_CHECK(m.has_ir_version(), "{}: the ONNX model has no IR version", origin);
  TESSEL_CHECK(m.ir_version() >= kMinIrVersion && m.ir_version() <= kMaxIrVersion,
               "{}: IR version {} is not supported (tessel reads IR versions {} to {})", origin, m.ir_version(), kMinIrVersion,
               kMaxIrVersion);
  model.opset = defaultDomainOpset(m, origin);
  try {
    checkGraph(m.graph(), model.opset);
  } catch (const Error& e) {
    throw e.withContext(origin);
  }
}

const char* kNotOnnx =
    "not an ONNX model (the protobuf message does not parse: the file is truncated, damaged or of another kind)";

}  // namespace

LoadedModel parseModel(const std::string& bytes, const std::string& origin) {
  LoadedModel model;
  TESSEL_CHECK(bytes.size() <= size_t(std::numeric_limits<int>::max()), "{}: {} bytes is too large for a protobuf message",
               origin, bytes.size());
  // A truncated or damaged file usually fails here: protobuf checks the wire format.
  TESSEL_CHECK(model.proto.ParseFromArray(bytes.data(), int(bytes.size())), "{}: {}", origin, kNotOnnx);
  checkModel(model, origin);
  return model;
}

LoadedModel loadModel(const std::string& path) {
  checkReadableFile(path, kOnnxFile);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  TESSEL_CHECK(fd >= 0, "cannot read {} {}: {}", kOnnxFile.name, path, std::strerror(errno));
  LoadedModel model;
  bool parsed = false;
  {
    google::protobuf::io::FileInputStream stream(fd);
    stream.SetCloseOnDelete(true);
    parsed = model.proto.ParseFromZeroCopyStream(&stream);
    TESSEL_CHECK(stream.GetErrno() == 0, "cannot read {} {}: {}", kOnnxFile.name, path, std::strerror(stream.GetErrno()));
  }
  TESSEL_CHECK(parsed, "{}: {}", path, kNotOnnx);
  checkModel(model, path);
  std::filesystem::path directory = std::filesystem::path(path).parent_path();
  model.directory = directory.empty() ? std::filesystem::path(".") : directory;
  return model;
}

}  // namespace tessel::graph::onnx_import
