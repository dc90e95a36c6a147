/// The compute DAG of a set of output tensors: every operation they depend on, in
/// topological order, with unique names; who reads whom and at which indices; the FLOP count
/// (TVM's convention: a multiply-add is 2 FLOPs); and the workload key, a structural hash
/// that ignores names, so equal computations in different networks share tuning records.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "te/Tensor.h"

namespace tessel::te {

/// One read of a producer inside a consumer's body.
struct TensorAccess {
  std::string producer;
  std::vector<Expr> indices;
};

class ComputeDAG {
 public:
  ComputeDAG() = default;
  /// Collects the operations the outputs depend on. Placeholders become the kernel's inputs
  /// in the order of `inputs` if given (else in order of first use); outputs follow.
  explicit ComputeDAG(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs = {});
  /// A DAG from its parts as another DAG holds them (ops in topological order, unique names,
  /// reads by name): how a serialized DAG comes back exactly. Checks that every read names an
  /// earlier op, the inputs are exactly the placeholders, and every other op is an output or
  /// read by a later one.
  static ComputeDAG fromParts(std::vector<Operation> ops, std::vector<std::string> inputs, std::vector<std::string> outputs);

  const std::vector<Operation>& ops() const { return ops_; }
  int opIndex(const std::string& name) const;  ///< -1 if absent
  const Operation& op(const std::string& name) const;
  /// The kernel's arguments: inputs then outputs.
  const std::vector<std::string>& inputNames() const { return inputs_; }
  const std::vector<std::string>& outputNames() const { return outputs_; }
  bool isOutput(const std::string& name) const;

  /// Every read of another tensor in op's body.
  static std::vector<TensorAccess> accesses(const OperationNode& op);
  /// Names of the compute ops that read `name`.
  std::vector<std::string> consumers(const std::string& name) const;

  double flopCount() const;
  std::string workloadKey() const;
  /// One line per op, as TVM's auto-scheduler prints a task's compute DAG.
  std::string toString() const;

 private:
  std::vector<Operation> ops_;
  std::vector<std::string> inputs_, outputs_;
};

/// One op as a line: `C(i, j) += (A[i, k]*B[k, j])`, `A = PLACEHOLDER [64, 64]`.
std::string operationToString(const OperationNode& op);
/// The FLOPs of one compute op.
double operationFlops(const OperationNode& op);

}  // namespace tessel::te
