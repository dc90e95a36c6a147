/// Turns a scheduled State into one loop-IR function: every stage's loops in its leaf order,
/// attached stages inside the loop they are computed at (with their local buffers), guards
/// where a loop may run past its tensor's bounds (non-divisible splits), reductions split
/// into an init nest and an update, and tensor reads flattened into buffer loads.
/// Further passes (passes/) clean this up; codegen (codegen/) prints it.
#pragma once
#include <string>
#include <vector>

#include "ir/Stmt.h"
#include "schedule/State.h"

namespace tessel::schedule {

struct LoopNestFunction {
  std::string name;
  std::vector<ir::Buffer> args;  ///< inputs, then outputs, as in the DAG
  int numOutputs = 0;            ///< the last numOutputs args are written, the others only read
  ir::Stmt body;
};

LoopNestFunction buildLoopNest(const State& state, const std::string& name);

}  // namespace tessel::schedule
