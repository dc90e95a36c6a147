/// The epilogue of a packed convolution as accumulator operations: what the ALU does to the
/// int32 sums of a `conv2d_blocked` before they are stored, read from the operators that
/// operator fusion put after it (bias and residual adds, relu, clip, shifts, the final cast to
/// int8). TVM's VTA schedule maps the same operators the same way
/// (tvm@v0.18.0:vta/python/vta/transform.py, InjectALUIntrin).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "graph/Fusion.h"
#include "vta/InstructionSet.h"

namespace tessel::vta {

/// acc = op(acc, immediate) or acc = op(acc, operand) lane-wise, over the output tile.
struct AluStep {
  AluOpcode opcode = AluOpcode::Add;
  std::optional<int32_t> immediate;
  /// Without an immediate: the graph node loaded into the accumulator beside the tile, a
  /// per-channel constant [C/c, 1, 1, 1, c] or an image of the output's shape.
  int operand = -1;
  bool perChannel = false;   ///< the operand has one accumulator element per channel block
  bool operandInt8 = false;  ///< loaded with ACC_8BIT (sign-extended int8)
  /// Bits the operand is shifted left by once loaded (an ALU SHR by minus that on the operand's
  /// accumulators): a residual shortcut fused into the group, `left_shift(cast(x, int32), k)`
  /// of an int8 `x` (vta/ShortcutFusion.h).
  int operandShiftLeft = 0;
};

/// A fused group with a conv2d_blocked (or dense_blocked) node, split into the GEMM and its epilogue.
struct PackedConvolution {
  int convolution = -1;  ///< the conv2d_blocked node
  int data = -1, weight = -1;
  std::vector<AluStep> epilogue;
  /// Bytes of each stored value: 1 when the group ends in a cast to int8 (the STORE's
  /// truncation); 4 when its result is int32, which leaves as four byte planes (a STORE keeps
  /// the low 8 bits, so the low byte is stored, the accumulator shifted right by 8, the next
  /// byte stored, ...) that the host puts back together (`joinBytePlanes`).
  int storedBytes = 4;
};

/// The group as a convolution and ALU steps; Error naming the node the ALU cannot compute
/// (such a group stays on the CPU). Besides the chain from the convolution, the group may hold
/// shortcut chains fused into it (nodes marked `fuse_into_reader`: a cast of an int8 value to
/// int32 and left shifts), each read by one add of the chain. `op` names the GEMM node the
/// group starts with: conv2d_blocked, or dense_blocked (whose epilogue is read the same way).
PackedConvolution describePackedConvolution(const graph::Graph& graph, const graph::FusedGroup& group,
                                            const std::string& op = "conv2d_blocked");

/// The group's `op` node, or -1 when it has none (a group for the CPU).
int packedConvolutionOf(const graph::Graph& graph, const graph::FusedGroup& group, const std::string& op = "conv2d_blocked");

}  // namespace tessel::vta
