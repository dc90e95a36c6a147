/// A naive interpreter of compute DAGs: evaluates every operation element by element straight
/// from its expression, in double precision (integers exactly, with the dtype's wrap-around),
/// rounding each stored element to its tensor's dtype. Slow and obviously right: the reference
/// every schedule and every generated kernel is checked against.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "te/ComputeDAG.h"

namespace tessel::te {

using TensorValues = std::map<std::string, std::vector<double>>;

/// `inputs` holds every placeholder's elements in row-major order; returns every tensor's.
TensorValues evaluateReference(const ComputeDAG& dag, const TensorValues& inputs);

/// Rounds a value to what a tensor of `type` stores (float32 rounding, integer wrap-around).
double roundToType(double value, DataType type);

}  // namespace tessel::te
