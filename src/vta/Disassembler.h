/// Prints VTA instructions and micro-ops as readable text, one instruction a line, e.g.
///   `   3  GEMM    uop[0,16) out 4 in 2  acc+4/+1 inp+0/+16 wgt+1/+0  | pop_prev push_prev`
/// Used by `tessel vta run --disassemble`, by error messages and when debugging a compiler.
#pragma once
#include <span>
#include <string>

#include "vta/InstructionSet.h"

namespace tessel::vta {

/// One instruction without its index.
std::string disassemble(const Instruction& instruction);
std::string disassemble(const MicroOp& microOp);
/// A whole stream, one numbered line per instruction.
std::string disassemble(std::span<const Instruction> instructions);

}  // namespace tessel::vta
