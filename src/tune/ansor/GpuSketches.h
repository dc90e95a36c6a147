/// The auto-scheduler's GPU sketch rules (TVM's GPU sketch policy, in one kernel per function):
/// sketches whose loops are bound to blockIdx, vthread and threadIdx, with shared-memory copies
/// of the tiled stages' inputs and reductions shared across threads. The stages are visited
/// from the last to the first as by the CPU rules (Sketches.h); at each, in order:
///
///   add cache read         an input (or padding) read by a tiled stage alone is copied into
///                          shared memory at the stage's outermost reduce tile (at its last
///                          loop of reduce level 0), by all the block's threads together: the
///                          copy's loops fused and split by the block's thread count (a
///                          follow_fused_split of the tiles' thread level), bound to threadIdx.x
///                          (apply and skip the rest; the input is visited again)
///   always inline          every stage that is neither an output, a reduction nor an input is
///                          inlined: a GPU kernel has no whole-call intermediate buffers
///   cross-thread reduction a reduction lacking spatial parallelism (a tiled one with fewer
///                          outputs than its reduction's length, another longer than a warp): its
///                          longest reduce axis split by a hole of P parts, whose inner part is
///                          factored out (rfactor), each part summed by a thread (threadIdx.x,
///                          neighbouring threads on neighbouring elements) in a local
///                          accumulator stored to shared memory, where the reduction adds the
///                          parts up after a barrier. The output its value ends in is fused and
///                          split into blocks of T outputs (a hole, threadIdx.y); the reduction is
///                          computed per output where that output reads it element for element,
///                          else once per block (apply)
///   add cache write        a stage that needs multi-level tiling and has no fusible consumer
///                          accumulates in a "local" cache stage (apply and skip the rest)
///   tiling with fusion     the "SSSRRSRS" tiling (5 spatial levels, 3 reduce levels, ordered S0
///                          S1 S2 R0 R1 S3 R2 S4), the fusible consumer (an output) split the same
///                          way at its outer 3 levels with the stage computed at its thread level;
///                          the consumer's levels are fused and bound to blockIdx.x, vthread and
///                          threadIdx.x, so each thread accumulates its sub-tile in registers
///                          (apply and skip the rest)
///   multi-level tiling     the tiling alone; an output binds its own levels so (apply and skip)
///   skip                   the stage stays as it is
///
/// Once every stage is visited, two finishing rules make the kernel complete:
///
///   bind untiled outputs   an output no rule bound (element-wise, pooling) has its spatial
///                          loops fused and split into blockIdx.x and threadIdx.x (a hole)
///   place the rest         a stage still at the root (a reduction no rule placed, such as
///                          softmax's maximum without the cross-thread rule) is computed in the
///                          output its readers end in, at the innermost loop that holds all its
///                          readers and no deeper than the thread loop
///
/// Each sketch carries the products of its holes that the device bounds (Sketches.h
/// TileProductBound): the threads of a block (at most the block's limit and its dimension's,
/// at least a warp where there are that many elements or parts: fewer leave a warp's lanes
/// idle), a tiled block's virtual threads, and a cross-thread reduction's parts times outputs.
#pragma once
#include <vector>

#include "tune/ansor/Sketches.h"

namespace tessel::tune::ansor {

/// The GPU sketches (options.gpu set, options.tileStructure starting with three S levels).
/// Error naming a stage no rule can place in the kernel (a stage read by two outputs).
std::vector<Sketch> generateGpuSketches(const te::ComputeDAG& dag, const SketchOptions& options);

}  // namespace tessel::tune::ansor
