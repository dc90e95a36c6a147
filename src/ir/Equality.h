/// Structural equality of expressions: same shape, same constants, same variables (by
/// identity), same buffers (by identity). The simplifier uses it to collect like terms.
#pragma once
#include "ir/Expr.h"

namespace tessel::ir {

bool structurallyEqual(const Expr& a, const Expr& b);

}  // namespace tessel::ir
