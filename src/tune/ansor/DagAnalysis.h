/// What the auto-scheduler's sketch rules ask about a stage of a schedule State (TVM's
/// ComputeDAG access analysis, asked of the current stages so that stages added by
/// cache_write or rfactor are analysed like the others):
///
///   strictly inlinable  element-wise, not an output, no expensive math, and either at most
///                       one arithmetic operation on values (padding, a cast, a bias) or read
///                       without reuse: inlining it into its readers costs nothing, so every
///                       sketch inlines it (a Winograd transform inlined into its GEMM would
///                       be recomputed for every output channel)
///   data reuse          an input read without one of the stage's non-unit spatial axes in its
///                       indices: every iteration of that axis reads the same elements again,
///                       which tiling can keep in cache or registers
///   multi-level tiling  a reduction with data reuse, or two inputs with data reuse
///   fusible consumer    the stage's only reader reads it element for element (same shape,
///                       indices exactly its own axes): its loops can take the stage's tiles
///   rfactor             a reduction with little spatial parallelism beside a long reduction
#pragma once
#include <optional>
#include <string>

#include "schedule/State.h"

namespace tessel::tune::ansor {

bool isStrictlyInlinable(const schedule::State& state, const std::string& stage);

/// Whether `consumer` (with its inlined producers) reads each element of `producer` more than
/// once: at a read whose indices miss one of the consumer's loops, spatial or reduce, of more
/// than one iteration.
bool readsWithReuse(const schedule::State& state, const std::string& consumer, const std::string& producer);

/// How many inputs of the stage (read through inlined stages) miss a non-unit spatial axis.
int reusedInputCount(const schedule::State& state, const std::string& stage);

bool needsMultiLevelTiling(const schedule::State& state, const std::string& stage);

/// The consumer that can be fused into the stage's tiles, if there is one.
std::optional<std::string> fusibleConsumer(const schedule::State& state, const std::string& stage);

/// fusibleConsumer, where the consumer may also read an axis of extent 1 at the constant 0, as
/// a broadcast reads its operand's unit axes (an NCHW convolution's bias add, the layout of GPU
/// builds). The GPU rules use it; the CPU rules keep the exact match, so their sketches stay.
std::optional<std::string> fusibleConsumerOrBroadcast(const schedule::State& state, const std::string& stage);

/// True when factoring the reduction gives parallelism the spatial axes lack: the reduction
/// is longer than the spatial extent and the spatial extent is below 16 iterations per core.
bool needsRfactor(const schedule::State& state, const std::string& stage, int cores);

}  // namespace tessel::tune::ansor
