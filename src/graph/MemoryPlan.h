/// Storage planning for the graph executor: each activation tensor is live from the call that
/// writes it to the last call that reads it; tensors whose lives do not overlap share one
/// buffer. Graph inputs and outputs keep buffers of their own (the application writes and
/// reads them between runs).
#pragma once
#include <cstddef>
#include <vector>

namespace tessel::graph {

struct PlannedTensor {
  size_t bytes = 0;
  int firstCall = 0;  ///< the call that writes it (-1: written before the first call, an input)
  int lastCall = 0;   ///< the last call that reads it (INT_MAX: must survive the run, an output)
};

struct MemoryPlan {
  std::vector<size_t> storageBytes;  ///< one entry per buffer
  std::vector<int> storageOf;        ///< per tensor
  size_t plannedBytes() const;
  size_t naiveBytes = 0;             ///< one buffer per tensor
};

/// Best fit: a tensor takes the smallest free buffer that holds it, else the largest free
/// buffer grown to its size, else a new buffer.
MemoryPlan planMemory(const std::vector<PlannedTensor>& tensors);

}  // namespace tessel::graph
