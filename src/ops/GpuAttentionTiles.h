/// The GPU schedule of a fused attention block (graph pass fuse_attention): the context product
/// softmax(scale(Q Kᵀ) [masked]) V as one function. A block takes `rows` query rows of one head;
/// their scores (a row of keys each) are computed once into shared memory by all its threads;
/// each thread then owns one query row and a few of the context's columns, computes its row's
/// softmax statistics (the max, the sum of exponentials) from the shared scores, and sums its
/// columns over the keys with the probabilities computed as it reads them. Three kernels (scores,
/// softmax, context) become one, and the probabilities never go to device memory.
#pragma once
#include <optional>
#include <string>

#include "ops/GpuTiles.h"
#include "te/ComputeDAG.h"

namespace tessel::ops {

/// The stages and extents of a fused attention DAG.
struct GpuAttentionShape {
  std::string scores, maximum, expSum, context;  ///< the four reductions, in stage order
  std::string query, key, value;                 ///< the stages the products read them from
  int64_t stack = 1;                             ///< batch x heads
  int64_t rows = 0, keys = 0, depth = 0, columns = 0;
};

/// The shape when the DAG is a fused attention block: exactly four reductions (a batched
/// product, the softmax's max and sum of exponentials over its last axis, a batched product over
/// the keys that is the function's one output), everything else injective; nullopt otherwise.
std::optional<GpuAttentionShape> gpuAttentionShapeOf(const te::ComputeDAG& dag);

/// A block's query rows and each thread's context columns.
struct GpuAttentionTile {
  int64_t rows = 16;            ///< query rows per block
  int64_t columnsPerThread = 4;  ///< context columns per thread (the rest of a row's are threads)
};

/// The tile for a shape on a device with `multiprocessors` and `maxThreadsPerBlock`: the rows per
/// block that give every multiprocessor blocks, the columns per thread that keep the threads of a
/// block within the limit.
GpuAttentionTile defaultGpuAttentionTile(const GpuAttentionShape& shape, int64_t multiprocessors, int64_t maxThreadsPerBlock);

/// The schedule; Error when the tile does not divide the shape or the threads exceed the limit.
GpuTileSchedule gpuAttentionTiles(const te::ComputeDAG& dag, const GpuAttentionShape& shape, const GpuAttentionTile& tile);

}  // namespace tessel::ops
