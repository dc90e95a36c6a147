/// The GPU lowering's tensorize pass: a loop nest under a `tensorize` pragma naming a warp
/// tensor-core intrinsic (schedule::TensorizeStep, ir::WarpMmaKind) becomes one ir::WarpMmaNode,
/// after the pass has proved that the nest is the product the instruction computes. Runs after
/// the first simplification, before unrolling.
#pragma once
#include "ir/Stmt.h"

namespace tessel::passes {

/// Replaces every tensorized nest. The nest must be, under a threadIdx.x loop of 32 lanes and
/// no guard: a reduction loop of a multiple of 8 steps around the spatial loops of the thread's
/// sub-tile (extents of one dropped; two left, each even), whose one statement adds the product
/// of two shared-memory operands to a local accumulator, every index linear in the loops; and
/// lane l = 4g + t must read the rows operand g sub-tiles of rows and the columns operand t
/// sub-tiles of columns past lane 0, as the warp's tile of 8 x 4 threads does, or (interleaved)
/// one row and one column past it with the lane's rows 8 apart and its columns 4. Throws Error
/// naming the accumulator and the condition that fails.
ir::Stmt tensorizeWarpMma(const ir::Stmt& s);

}  // namespace tessel::passes
