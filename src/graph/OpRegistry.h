/// The operator registry of the graph IR. An operator is known by name; its definition says
/// how to compute it as a tensor expression from its inputs and attributes, and how it may be
/// fused (TVM's fusion patterns). Type inference needs nothing else: building the expression
/// on placeholders of the input types gives the output type, and every check the compute
/// definition makes (shapes, attributes) becomes a type error at graph construction.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "te/Tensor.h"

namespace tessel::graph {

/// Node attributes: a JSON object, so that graphs print and serialize without per-op code.
using Attrs = nlohmann::json;

/// How an operator combines with its neighbours in operator fusion, from the most to the least
/// fusable (the order matters: fusion compares patterns).
enum class OpPattern {
  ElemWise,         ///< out[i] = f(in[i]): relu, add of equal shapes
  Broadcast,        ///< elementwise with broadcasting: bias add, add with a [C, 1, 1] operand
  Injective,        ///< each output element reads input elements by index arithmetic: reshape, pad, transpose
  CommReduce,       ///< a reduction: global pooling, softmax's sums
  OutEWiseFusable,  ///< a heavy op whose output may absorb an elementwise epilogue: conv2d, dense
  Opaque,           ///< fused with nothing
};
const char* patternName(OpPattern p);

struct OpDef {
  std::string name;
  OpPattern pattern = OpPattern::Opaque;
  size_t minInputs = 1, maxInputs = 1;
  /// The computation on tensor expressions; throws Error on invalid inputs or attributes.
  std::function<te::Tensor(const std::vector<te::Tensor>& inputs, const Attrs& attrs)> compute;
};

/// Registers (or replaces) an operator definition.
void registerOp(OpDef def);
/// The definition of `name`; Error listing the known operators if there is none.
const OpDef& lookupOp(const std::string& name);
bool isRegisteredOp(const std::string& name);
std::vector<std::string> registeredOpNames();

}  // namespace tessel::graph
