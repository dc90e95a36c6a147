/// Test support: an evaluator of lowered loop IR. It runs a `passes::LoweredFunction` directly
/// on tensors, with the semantics of the C++ the CPU code generator (codegen/CSource.cpp)
/// prints for it: C's truncating `/` and `%` beside the floor forms, integers wrapped to their
/// width, float32 computed in float, every loop kind run as a serial loop, vector code lane by
/// lane with a vector store's value computed before its stores.
///
/// Why: checking that lowering computes the right numbers used to take a C++ compiler run per
/// schedule, seconds each; a test of thousands of schedules (the auto-scheduler's random
/// states) could only compile a sample. The evaluator checks all of them, and checks more than
/// the compiled kernel can: every load and store is bounds-checked, a read of a local buffer
/// or output element not yet written, a division by zero and a float-to-integer cast out of
/// range are Errors naming the function, the buffer and the index.
///
/// The function is compiled once into a tree of nodes (LoopIrNodes.h), so that it can run
/// many times, from several threads at once, at a few nanoseconds per node.
#pragma once
#include <memory>
#include <vector>

#include "passes/Lower.h"
#include "runtime/Tensor.h"

namespace tessel::kernelcheck {

class LoopIrEvaluator {
 public:
  /// Throws an Error on IR it cannot run: an unknown node or type, an unbound variable, a
  /// buffer neither an argument nor allocated around its use.
  explicit LoopIrEvaluator(const passes::LoweredFunction& function);
  ~LoopIrEvaluator();
  LoopIrEvaluator(LoopIrEvaluator&&) noexcept;

  /// Runs the function on one tensor per argument (its dtype and element count). The inputs
  /// count as written; outputs and local buffers only where the function has written them.
  void run(const std::vector<runtime::Tensor>& args) const;

 private:
  struct Program;
  std::unique_ptr<Program> program_;
};

}  // namespace tessel::kernelcheck
