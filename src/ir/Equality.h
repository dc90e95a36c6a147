/// Structural equality of expressions: same shape, same constants, same variables (by
/// identity), same buffers (by identity). The simplifier uses both to collect like terms.
#pragma once
#include "ir/Expr.h"

namespace tessel::ir {

bool structurallyEqual(const Expr& a, const Expr& b);

/// A hash consistent with structurallyEqual: equal expressions hash equally (variables and
/// buffers by identity). Linear in the expression's size.
uint64_t structuralHash(const Expr& e);

}  // namespace tessel::ir
