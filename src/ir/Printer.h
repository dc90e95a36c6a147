/// Readable text of expressions and statements: expressions in the notation of TVM's
/// compute DAG printout (`(a + b)`, `A[i, j]`, `max(x, 0f)`), statements as indented loops.
#pragma once
#include <string>

#include "ir/Stmt.h"

namespace tessel::ir {

std::string toString(const Expr& e);
std::string toString(const Stmt& s, int indent = 0);

}  // namespace tessel::ir
