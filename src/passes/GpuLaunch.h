/// The launch configuration of a GPU kernel, read from its loop IR: the grid and block
/// dimensions are the extents of the loops bound to blockIdx and threadIdx (a dimension bound
/// by several stages gets the largest extent; the smaller bindings are guarded in the kernel),
/// and the shared memory is the sum of the shared buffers it allocates: declared statically, or
/// (dynamicShared) taken at launch where it exceeds what a block may declare (GpuLimits).
#pragma once
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>

#include "ir/Stmt.h"

namespace tessel::passes {

struct GpuLaunch {
  std::array<int64_t, 3> grid{1, 1, 1};   ///< blocks along x, y, z
  std::array<int64_t, 3> block{1, 1, 1};  ///< threads per block along x, y, z
  int64_t sharedBytes = 0;                ///< shared memory per block
  bool dynamicShared = false;             ///< sharedBytes taken at launch (CUDA dynamic shared memory)

  int64_t threadsPerBlock() const { return block[0] * block[1] * block[2]; }
  /// The launch extent the binding kind stands for (grid[d] for blockIdx, block[d] for threadIdx).
  int64_t extentOf(ir::ForKind kind) const;
  nlohmann::json toJson() const;
  /// Throws Error naming the field for a missing or non-positive dimension.
  static GpuLaunch fromJson(const nlohmann::json& json);
  bool operator==(const GpuLaunch&) const = default;
};

/// The bytes a shared buffer of `bytes` takes in a block: rounded up to 16, since each is 16-byte
/// aligned (declared __align__(16), or carved from dynamic shared memory at 16-byte offsets) for
/// the copies' float4 accesses.
inline int64_t sharedBufferBytes(int64_t bytes) { return (bytes + 15) / 16 * 16; }

/// Reads the launch of a kernel body. Throws Error when a bound loop has a non-constant extent
/// or starts anywhere but 0, naming the loop variable and its binding.
GpuLaunch gpuLaunchOf(const ir::Stmt& body);

}  // namespace tessel::passes
