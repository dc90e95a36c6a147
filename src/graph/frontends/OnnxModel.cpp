#include "graph/frontends/OnnxModel.h"

#include <onnx/checker.h>

#include <cctype>
#include <limits>

#include "support/Error.h"
#include "support/Files.h"

namespace tessel::graph::onnx_import {

namespace {

/// protobuf refuses messages of 2 GiB and more; ONNX keeps larger weights in external files.
constexpr FileKind kOnnxFile{"ONNX model", uint64_t(std::numeric_limits<int>::max())};

int64_t defaultDomainOpset(const onnx::ModelProto& model, const std::string& origin) {
  int64_t opset = -1;
  for (const auto& import : model.opset_import())
    if (import.domain().empty() || import.domain() == "ai.onnx") opset = import.version();
  TESSEL_CHECK(opset >= 0, "{}: the model imports no opset of the default ONNX domain", origin);
  TESSEL_CHECK(opset >= kMinOpset && opset <= kMaxOpset, "{}: opset {} is not supported (tessel reads opsets {} to {})",
               origin, opset, kMinOpset, kMaxOpset);
  return opset;
}

/// The checker's message on one line (it spreads node dumps over several): tessel's errors are
/// one line each.
std::string oneLine(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool space = std::isspace(static_cast<unsigned char>(c));
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

LoadedModel parseModel(const std::string& bytes, const std::string& origin) {
  LoadedModel model;
  TESSEL_CHECK(bytes.size() <= size_t(std::numeric_limits<int>::max()), "{}: {} bytes is too large for a protobuf message",
               origin, bytes.size());
  // A truncated or damaged file usually fails here: protobuf checks the wire format.
  TESSEL_CHECK(model.proto.ParseFromArray(bytes.data(), int(bytes.size())),
               "{}: not an ONNX model (the protobuf message does not parse: the file is truncated, damaged or of "
               "another kind)",
               origin);
  TESSEL_CHECK(model.proto.has_graph(), "{}: the ONNX model has no graph", origin);
  // The checker validates what parsing cannot: the IR version, every node against its operator
  // schema (attribute types, input counts), topological order, unique and defined names.
  try {
    onnx::checker::check_model(model.proto);
  } catch (const onnx::checker::ValidationError& e) {
    fail("{}: the ONNX checker rejects the model: {}", origin, oneLine(e.what()));
  } catch (const std::exception& e) {
    fail("{}: the ONNX checker failed on the model: {}", origin, oneLine(e.what()));
  }
  model.opset = defaultDomainOpset(model.proto, origin);
  return model;
}

LoadedModel loadModel(const std::string& path) { return parseModel(readFile(path, kOnnxFile), path); }

}  // namespace tessel::graph::onnx_import
