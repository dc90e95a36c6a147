#include "vta/Disassembler.h"

#include <fmt/format.h>

namespace tessel::vta {

namespace {

std::string dependencyText(const DependencyFlags& flags) {
  std::string text;
  auto add = [&text](bool set, const char* name) {
    if (!set) return;
    text += text.empty() ? "  | " : " ";
    text += name;
  };
  add(flags.popPrevious, "pop_prev");
  add(flags.popNext, "pop_next");
  add(flags.pushPrevious, "push_prev");
  add(flags.pushNext, "push_next");
  return text;
}

std::string loopText(const Instruction& in) {
  std::string text = fmt::format("uop[{},{}) out {} in {}  acc+{}/+{} {}+{}/+{}", in.microOpBegin,
                                 in.microOpEnd, in.iterationsOuter, in.iterationsInner,
                                 in.destinationFactorOuter, in.destinationFactorInner,
                                 in.opcode == Opcode::Gemm ? "inp" : "src", in.sourceFactorOuter,
                                 in.sourceFactorInner);
  if (in.opcode == Opcode::Gemm)
    text += fmt::format(" wgt+{}/+{}", in.weightFactorOuter, in.weightFactorInner);
  return text;
}

}  // namespace

std::string disassemble(const Instruction& in) {
  std::string body;
  switch (in.opcode) {
    case Opcode::Load:
    case Opcode::Store: {
      if (in.xSize == 0) {
        body = fmt::format("{:<7} {:<8} (nop)", opcodeName(in.opcode), memoryTypeName(in.memoryType));
        break;
      }
      body = fmt::format("{:<7} {:<8} sram {} dram {}  {}x{} stride {}", opcodeName(in.opcode),
                         memoryTypeName(in.memoryType), in.sramBase, in.dramBase, in.ySize,
                         in.xSize, in.xStride);
      if (in.yPadBefore || in.yPadAfter || in.xPadBefore || in.xPadAfter)
        body += fmt::format("  pad y {}/{} x {}/{}", in.yPadBefore, in.yPadAfter, in.xPadBefore,
                            in.xPadAfter);
      break;
    }
    case Opcode::Gemm:
      body = fmt::format("GEMM    {}{}", in.resetAccumulator ? "reset " : "", loopText(in));
      break;
    case Opcode::Alu:
      body = fmt::format("ALU     {:<3} {} {}", aluOpcodeName(in.aluOpcode),
                         in.useImmediate ? fmt::format("imm {}", in.immediate) : "acc",
                         loopText(in));
      break;
    case Opcode::Finish:
      body = "FINISH";
      break;
  }
  return body + dependencyText(in.dependencies);
}

std::string disassemble(const MicroOp& microOp) {
  return fmt::format("uop acc {} src {} wgt {}", microOp.destination, microOp.source,
                     microOp.weight);
}

std::string disassemble(std::span<const Instruction> instructions) {
  std::string text;
  for (size_t index = 0; index < instructions.size(); ++index)
    text += fmt::format("{:>5}  {}\n", index, disassemble(instructions[index]));
  return text;
}

}  // namespace tessel::vta
