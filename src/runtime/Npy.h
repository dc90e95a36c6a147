/// Reading and writing NumPy .npy files, the exchange format for tensors between tessel and
/// Python (reference outputs, parameters, test inputs). Supported: float16/32/64, int8/16/32/64,
/// uint8/16/32/64 and bool, C order, little-endian. Files are written in format version 1.0;
/// versions 1.0, 2.0 and 3.0 are read.
#pragma once
#include <string>

#include "runtime/Tensor.h"

namespace tessel::runtime {

/// Loads a .npy file into a new CPU tensor. Throws Error naming the file and the problem for a
/// missing or truncated file, a bad header, a Fortran-order array, a big-endian or unknown dtype.
Tensor loadNpy(const std::string& path);
/// The same from the file's bytes; `origin` names them in errors.
Tensor parseNpy(const std::string& bytes, const std::string& origin);

/// Writes a tensor (copied to the host first when it lives on a device) as a .npy file.
void saveNpy(const Tensor& tensor, const std::string& path);

}  // namespace tessel::runtime
