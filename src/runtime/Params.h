/// The parameters file of a deployable module: named tensors (a network's weights) in one
/// binary file, readable by the runtime alone. Layout (little-endian):
///   "TESSELPR" | u32 version (1) | u64 count | count x entry
///   entry: u32 name length | name bytes | u8 dtype code | u8 bits | u16 lanes | u32 ndim |
///          i64 shape[ndim] | u64 byte count | the bytes (row-major)
/// Entries are written in name order so that equal parameters give byte-identical files.
#pragma once
#include <map>
#include <string>

#include "runtime/Tensor.h"

namespace tessel::runtime {

using NamedTensors = std::map<std::string, Tensor>;

/// Writes the tensors (copied to the host if needed). Throws Error naming the path on I/O failure.
void saveParams(const NamedTensors& params, const std::string& path);

/// Reads a parameters file. A truncated or corrupt file raises an Error naming the path, the
/// entry and the byte offset where reading failed.
NamedTensors loadParams(const std::string& path);

/// The same, from bytes already in memory; `origin` names them in errors.
NamedTensors parseParams(const std::string& bytes, const std::string& origin);

}  // namespace tessel::runtime
