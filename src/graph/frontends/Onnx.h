/// The ONNX frontend: an ONNX model file (IR versions 3 to 10, opsets 7 to 21, the weights
/// inside it or in files beside it: OnnxModel.h, OnnxExternalData.h) becomes a tessel graph. Every node becomes graph operators, initializers and Constant nodes
/// become graph constants, shape arithmetic on constants (Shape, Gather, Slice, Concat, Cast,
/// Unsqueeze, ...) is folded during import. Input shapes come from the model or from the
/// caller (a symbolic dimension without one is an error naming the input and the dimension).
/// An operator, attribute or attribute value the importer does not implement is an error that
/// names the node, the op type and the attribute: never a wrong result.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "graph/Graph.h"

namespace tessel::graph {

struct OnnxImportOptions {
  /// Shapes of graph inputs by name; they override the model's (whose fixed extents must agree).
  std::map<std::string, std::vector<int64_t>> inputShapes;
};

/// Imports the ONNX model in `path`; Error naming the file and what is wrong.
Graph importOnnx(const std::string& path, const OnnxImportOptions& options = {});
/// The same for a model in memory; `origin` names it in errors.
Graph importOnnxBytes(const std::string& bytes, const std::string& origin, const OnnxImportOptions& options = {});

/// Whether a --model argument names an ONNX file: it ends in ".onnx" or is an existing file
/// (zoo names are neither).
bool isOnnxModelPath(const std::string& model);

/// "data:1,3,224,224" as (name, shape); Error saying what is wrong otherwise. The name may
/// itself contain ':' (ONNX names often do): the shape is what follows the last one.
std::pair<std::string, std::vector<int64_t>> parseInputShape(const std::string& text);

}  // namespace tessel::graph
