/// Reading an ONNX file: the bytes parsed into ONNX's own protobuf message (libonnx's
/// generated ModelProto), the structure checked by tessel itself, and the opset of the default
/// domain read from the model's imports. Everything that is wrong with the file becomes a tessel
/// Error that names the file and says why; nothing here interprets the operators.
///
/// Why tessel checks the structure itself: ONNX's checker refuses every model newer than the
/// library it ships in (Debian's libonnx 1.12 knows IR version 8 and opset 17; PyTorch 2.x writes
/// IR version 10 and opsets up to 21), and the operators' schemas are the importer's business:
/// each converter checks the inputs and attributes it reads, naming the node.
#pragma once
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>

namespace tessel::graph::onnx_import {

/// The IR versions (the file format: ONNX's docs/IR.md, "IR version") the importer reads: 3 is
/// ONNX 1.0's, 10 what ONNX 1.16 and PyTorch 2.x write. Newer fields an old file lacks are
/// optional, and the fields a newer file adds (float8 and int4 element types, function
/// overloads) are refused where they are used.
inline constexpr int64_t kMinIrVersion = 3;
inline constexpr int64_t kMaxIrVersion = 10;
/// The opsets of the default ("" / "ai.onnx") domain the importer knows (ONNX's
/// docs/Changelog.md: each operator's meaning per version is read by its converter).
inline constexpr int64_t kMinOpset = 7;
inline constexpr int64_t kMaxOpset = 21;

struct LoadedModel {
  onnx::ModelProto proto;
  int64_t opset = 0;  ///< the version of the default domain imported by the model
  /// The folder external tensor data is read from (the model file's); empty for a model given
  /// as bytes, which then may not have external data.
  std::filesystem::path directory;
};

/// Parses and checks `bytes`; `origin` names them in errors (the file's path).
LoadedModel parseModel(const std::string& bytes, const std::string& origin);
/// Reads the file and parses it straight from the file (no copy of its bytes in memory: a
/// model with its weights inside is held once, by the message).
LoadedModel loadModel(const std::string& path);

}  // namespace tessel::graph::onnx_import
