/// What the tiled GPU schedules of the tuning templates share (ops/GpuConv2dTiles.h,
/// GpuDepthwiseTiles.h, GpuDenseTiles.h): the anchor they tile, the image output split into
/// [blocks, threads, per thread] along channels, rows and columns with its bindings and unroll
/// pragmas, the injective stages inlined (padding computed as the input is read, the epilogue
/// as the output is stored), and the shared memory a block of the result takes.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ops/OpTraits.h"
#include "ops/ScheduleRecorder.h"
#include "schedule/State.h"
#include "schedule/Steps.h"
#include "te/ComputeDAG.h"

namespace tessel::ops {

/// The function's anchor when it is of `kind` and its output, or the output of its element-wise
/// epilogue (same shape), is the function's one output. Error starting with `schedule` and
/// naming what does not fit (`kindName`: what the anchor should be, e.g. "a direct NCHW conv2d").
const te::OperationNode& gpuTileAnchor(const te::ComputeDAG& dag, OpKind kind, const char* schedule, const char* kindName);

/// Where an image's channels, rows and columns are among its four axes.
struct ImageAxes {
  int channels = 1, rows = 2, columns = 3;
};
inline constexpr ImageAxes kNchwAxes{1, 2, 3};
inline constexpr ImageAxes kNhwcAxes{3, 1, 2};

/// The producers an anchor reads: the input (through its padding, if any) and the weights, told
/// apart by one index: the weights' index at `weightPosition` is the anchor's output axis
/// `outputAxis` (the defaults: the first index is axis 1, as an OIHW convolution's output
/// channel or a dense layer's output feature; an NHWC convolution's HWIO weights: 3 and 3).
/// Error starting with `schedule` otherwise.
std::pair<std::string, std::string> dataAndWeights(const te::OperationNode& anchor, const char* schedule, size_t weightPosition = 0,
                                                   size_t outputAxis = 1);

/// An image output's tile: [blocks, threads, per thread] of the channels, rows and columns (the
/// product of each covers its axis; the blocks part may round up), and the unroll pragmas.
struct GpuImageTile {
  std::array<int64_t, 3> f{}, y{}, x{};
  int64_t autoUnrollMaxStep = 0;  ///< auto_unroll_max_step on the block's loops (0: none)
  bool unrollExplicit = true;     ///< unroll in the IR (else `#pragma unroll` for the device compiler)

  int64_t tileThreads() const { return f[1] * y[1] * x[1]; }
  int64_t outputsPerThread() const { return f[2] * y[2] * x[2]; }
};

/// Error starting with `schedule` when `parts` ([blocks, threads, per thread] of tile_`what`)
/// has a part below 1 or does not cover `extent`.
void checkTileCovers(const char* schedule, const char* what, const std::array<int64_t, 3>& parts, int64_t extent);

/// The output's loops split by the tile: [n x f blocks, y blocks, x blocks, f threads, y
/// threads, x threads, the thread's sub-tile], the blocks bound (z, y, x) and the unroll
/// pragmas on the outermost loop. The thread loops are left for the caller to bind. Returns
/// the loops, outermost first. `axes`: where the output's channels, rows and columns are.
std::vector<std::string> tileImageOutput(Recorder& rec, const std::string& out, const GpuImageTile& tile,
                                         const ImageAxes& axes = kNchwAxes);

/// `shared` (a shared-memory copy read by `reader`) computed at `at` of the reader, its window
/// copied by the block's threads together, in element order with thread x fastest, so that
/// neighbouring threads read neighbouring addresses; `lanes` consecutive elements per thread
/// and access (a vectorized loop: one wide load where the window's rows are multiples of it).
void copyCooperatively(Recorder& rec, const std::string& shared, const std::string& reader, const std::string& at,
                       const std::array<int64_t, 3>& threadsZYX, int64_t lanes = 1);

/// auto_unroll_max_step and unroll_explicit as pragmas on `loop` of `stage`.
void addUnrollPragmas(Recorder& rec, const std::string& stage, const std::string& loop, int64_t autoUnrollMaxStep,
                      bool unrollExplicit);

/// The stage holding a thread's sums of the anchor, in registers: a local copy of the anchor when
/// it is the function's output `out`, else the anchor itself, computed per thread where the
/// epilogue reads it. Must come before other steps on the stages.
std::string perThreadAccumulator(Recorder& rec, const std::string& out, const std::string& anchor);

/// Every injective stage of the DAG that is not an output computed inline in its readers.
void inlineInjectiveStages(Recorder& rec, const te::ComputeDAG& dag);

/// A tiled schedule's steps with the state they make (the one they were recorded on: no replay
/// needed, which a cost model extracting features of thousands of configs would otherwise pay).
struct GpuTileSchedule {
  std::vector<schedule::StepPtr> steps;
  schedule::State state;
};

/// Bytes of shared memory a block of the state's kernel takes: each shared stage's region (its
/// root extents after bound inference) times its element size, rounded up to 16 bytes
/// (passes::sharedBufferBytes), as lowering allocates it.
int64_t sharedMemoryBytes(const schedule::State& state);

}  // namespace tessel::ops
