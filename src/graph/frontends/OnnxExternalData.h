/// The weights an ONNX model keeps outside its file (ONNX's docs/ExternalData.md): a tensor
/// whose data_location is EXTERNAL names, in its external_data entries, a `location` relative to
/// the model's folder, an `offset` into that file and a `length` (the rest of the file when
/// absent). PyTorch's exporters write large models so (`model.onnx.data` beside `model.onnx`).
///
/// Each tensor's bytes are read straight into the tensor tessel keeps, so that a model's weights
/// are held once. What cannot be right is an error naming the tensor: a location that is
/// absolute or leaves the model's folder (also through a symbolic link), a file that is missing
/// or too short for the tensor, a length that is not the tensor's size.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace tessel::graph::onnx_import {

class ExternalData {
 public:
  /// `directory`: the model file's folder; empty for a model given as bytes, whose tensors
  /// then may not have external data.
  explicit ExternalData(std::filesystem::path directory) : directory_(std::move(directory)) {}
  ~ExternalData();
  ExternalData(const ExternalData&) = delete;
  ExternalData& operator=(const ExternalData&) = delete;

  struct OpenFile {
    int fd = -1;
    uint64_t size = 0;
  };
  /// Where an external tensor's bytes are.
  struct Extent {
    const OpenFile* file = nullptr;
    std::string location;
    uint64_t offset = 0;
  };

  /// Checks that the external tensor's `bytes` bytes are there (before the caller allocates
  /// them: a damaged shape may claim terabytes); `what` names the tensor ("initializer 'w'").
  Extent locate(const onnx::TensorProto& proto, const std::string& what, uint64_t bytes);
  /// Reads them into `out`.
  static void read(const Extent& extent, const std::string& what, char* out, uint64_t bytes);

 private:
  /// The file of `location`, opened once for all the tensors in it.
  const OpenFile& open(const std::string& location, const std::string& what);

  std::filesystem::path directory_;
  std::map<std::string, OpenFile> files_;
};

}  // namespace tessel::graph::onnx_import
