/// Reading an ONNX file: the bytes parsed into ONNX's own protobuf message (libonnx's
/// generated ModelProto), checked by ONNX's own checker, and the opset of the default domain
/// read from the model's imports. Everything that is wrong with the file becomes a tessel Error
/// that names the file and says why; nothing here interprets the graph.
#pragma once
#include <onnx/onnx_pb.h>

#include <string>

namespace tessel::graph::onnx_import {

/// The opsets of the default ("" / "ai.onnx") domain the importer knows.
inline constexpr int64_t kMinOpset = 7;
inline constexpr int64_t kMaxOpset = 17;

struct LoadedModel {
  onnx::ModelProto proto;
  int64_t opset = 0;  ///< the version of the default domain imported by the model
};

/// Parses and checks `bytes`; `origin` names them in errors (the file's path).
LoadedModel parseModel(const std::string& bytes, const std::string& origin);
/// Reads the file and parses it.
LoadedModel loadModel(const std::string& path);

}  // namespace tessel::graph::onnx_import
