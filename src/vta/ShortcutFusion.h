/// TVM's fusion of the residual shortcuts into the convolution that adds them, for VTA: in the
/// quantized, packed network a shortcut is an int8 value brought to the accumulator's scale by
/// `cast(int32)` and `left_shift(k)` and added to a convolution's int32 result. Marking that
/// chain `fuse_into_reader` makes operator fusion put it into the adding convolution's group
/// (graph/Fusion.h), where VTA loads the int8 value with ACC_8BIT (16 bytes an element instead
/// of 64) and shifts it on the ALU. The producer's group then ends at its cast to int8: one
/// int8 store instead of four byte planes for the downsampling shortcuts, and no CPU function
/// for the identity shortcuts' cast and shift.
#pragma once
#include "graph/Graph.h"

namespace tessel::vta {

/// The graph with every such chain marked: a cast of an int8 value to int32, then any number
/// of left shifts, each node read only by the next, the last read only by an int32 add of a
/// non-constant operand of the same packed (6-D) shape.
graph::Graph markShortcutsForFusion(const graph::Graph& packed);

}  // namespace tessel::vta
