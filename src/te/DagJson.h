/// A compute DAG as JSON and back. A tuning record carries the DAG it was measured on, so any
/// tool holding only the log (`tessel records best`) can replay a record's steps and refuse
/// one that does not apply, and a record names its computation exactly (TVM's records name a
/// workload by a registered function and its arguments, and fail where it is not registered).
///
///   {"ops": [{"name": "A", "dtype": "float32", "shape": [64, 64]},          // a placeholder
///            {"name": "C", "dtype": "float32", "shape": [64, 64], "tag": "matmul",
///             "axes": ["i", "j"], "reduce_axes": [["k", 64]], "body": EXPR}],
///    "inputs": ["A", "B"], "outputs": ["C"]}
///
/// EXPR: an int64 constant is a bare JSON integer; every other node is an array headed by its
/// kind: ["int", dtype, v], ["float", dtype, v | "inf" | "-inf" | "nan"], ["var", k] (k indexes
/// the op's axes, then its reduce axes), [op, a, b] for the binary operators ("add", "lt", ...),
/// ["not", a], ["select" | "if_then_else", c, t, f], ["cast", dtype, v], ["call", name, args...],
/// ["load", producer, indices...], ["reduce", "sum" | "max" | "min", source, [k...], condition | null].
///
/// Reading checks everything a hostile file could get wrong (types, producers defined before
/// use, index counts, nesting depth) and names the op and the place; the caller compares the
/// result's workload key with the one it expects.
#pragma once
#include <nlohmann/json.hpp>

#include "te/ComputeDAG.h"

namespace tessel::te {

nlohmann::json dagToJson(const ComputeDAG& dag);
ComputeDAG dagFromJson(const nlohmann::json& json);

}  // namespace tessel::te
