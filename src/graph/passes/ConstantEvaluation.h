/// Evaluating operators on constants at compile time, for constant folding and for the passes
/// that rewrite weights (batch-norm simplification, scale folding, layout conversion). Data
/// movement (transpose, reshape, flatten) and float32 broadcast arithmetic run natively: they
/// touch every weight of a network, tens of millions of elements. Any other operator goes
/// through the reference interpreter, exact but slow, which is fine for the small tensors such
/// operators see.
#pragma once
#include <vector>

#include "graph/Graph.h"

namespace tessel::graph {

/// The value of `op` with `attrs` applied to constant `inputs` (type `result`, as inferred).
runtime::Tensor evaluateOnConstants(const std::string& op, const Attrs& attrs, const std::vector<runtime::Tensor>& inputs,
                                    const TensorType& result);

/// out dimension k = x's dimension axes[k].
runtime::Tensor transposeTensor(const runtime::Tensor& x, const std::vector<int>& axes);

}  // namespace tessel::graph
