// Structural equality (variables and buffers by identity, everything else by structure), the
// mutator/visitor machinery, substitution and variable-use queries.
#include <gtest/gtest.h>

#include "ir/Equality.h"
#include "ir/Mutator.h"
#include "ir/Printer.h"

using namespace tessel;
using namespace tessel::ir;

namespace {

class EqualityTest : public ::testing::Test {
 protected:
  Var x{"x"}, y{"y"};
  Var f{"f", DataType::float32()};
  Buffer a = makeBuffer("A", DataType::float32(), {16}, BufferNode::Scope::Global);
  Buffer b = makeBuffer("A", DataType::float32(), {16}, BufferNode::Scope::Global);  // same name, other buffer
};

TEST_F(EqualityTest, SameStructureBuiltTwiceIsEqual) {
  EXPECT_TRUE(structurallyEqual(x * Expr(4) + y, x * Expr(4) + y));
  EXPECT_TRUE(structurallyEqual(select(x < y, f, Expr(0.0f)), select(x < y, f, Expr(0.0f))));
  EXPECT_TRUE(structurallyEqual(call(Intrinsic::Exp, {f}), call(Intrinsic::Exp, {f})));
  EXPECT_TRUE(structurallyEqual(ramp(x, Expr(1), 4), ramp(x, Expr(1), 4)));
  EXPECT_TRUE(structurallyEqual(load(a, x), load(a, x)));
}

TEST_F(EqualityTest, VariablesCompareByIdentityNotName) {
  Var other("x");
  EXPECT_TRUE(structurallyEqual(x, x));
  EXPECT_FALSE(structurallyEqual(x, other));
  EXPECT_FALSE(structurallyEqual(x + Expr(1), other + Expr(1)));
}

TEST_F(EqualityTest, ConstantsCompareByValueAndType) {
  EXPECT_TRUE(structurallyEqual(Expr(5), Expr(5)));
  EXPECT_FALSE(structurallyEqual(Expr(5), Expr(6)));
  EXPECT_FALSE(structurallyEqual(Expr(5), intImm(DataType::int32(), 5)));
  EXPECT_FALSE(structurallyEqual(Expr(1.0f), floatImm(DataType::float64(), 1.0)));
  EXPECT_FALSE(structurallyEqual(Expr(1.0f), Expr(2.0f)));
}

TEST_F(EqualityTest, DifferentOperatorsOrOperandsDiffer) {
  EXPECT_FALSE(structurallyEqual(x + y, x - y));
  EXPECT_FALSE(structurallyEqual(x + y, y + x));  // no commutativity: structure, not value
  EXPECT_FALSE(structurallyEqual(floordiv(x, Expr(2)), truncdiv(x, Expr(2))));
  EXPECT_FALSE(structurallyEqual(call(Intrinsic::Exp, {f}), call(Intrinsic::Log, {f})));
  EXPECT_FALSE(structurallyEqual(select(x < y, f, f), ifThenElse(x < y, f, f)));
}

TEST_F(EqualityTest, LanesBuffersAndProducersMatter) {
  EXPECT_FALSE(structurallyEqual(ramp(x, Expr(1), 4), ramp(x, Expr(1), 8)));
  EXPECT_FALSE(structurallyEqual(broadcast(x, 4), broadcast(x, 8)));
  EXPECT_FALSE(structurallyEqual(load(a, x), load(b, x)));
  EXPECT_TRUE(structurallyEqual(producerLoad("A", DataType::float32(), {x}), producerLoad("A", DataType::float32(), {x})));
  EXPECT_FALSE(structurallyEqual(producerLoad("A", DataType::float32(), {x}), producerLoad("B", DataType::float32(), {x})));
}

TEST_F(EqualityTest, ReductionsCompareOpAndAxes) {
  IterVar k{Var("k"), 4}, k2{Var("k"), 4};
  Expr src = producerLoad("A", DataType::float32(), {k.var});
  EXPECT_TRUE(structurallyEqual(reduce(ReduceOp::Sum, src, {k}), reduce(ReduceOp::Sum, src, {k})));
  EXPECT_FALSE(structurallyEqual(reduce(ReduceOp::Sum, src, {k}), reduce(ReduceOp::Max, src, {k})));
  EXPECT_FALSE(structurallyEqual(reduce(ReduceOp::Sum, src, {k}), reduce(ReduceOp::Sum, src, {k2})));
  EXPECT_FALSE(structurallyEqual(reduce(ReduceOp::Sum, src, {k}), reduce(ReduceOp::Sum, src, {k}, k.var < Expr(2))));
}

TEST_F(EqualityTest, UndefinedOnlyEqualsUndefined) {
  EXPECT_TRUE(structurallyEqual(Expr(), Expr()));
  EXPECT_FALSE(structurallyEqual(Expr(), x));
  EXPECT_FALSE(structurallyEqual(x, Expr()));
}

// ---- substitution and variable uses ---------------------------------------------------------

class MutatorTest : public EqualityTest {
 protected:
  Var i{"i"}, z{"z"};
};

TEST_F(MutatorTest, SubstituteReplacesEveryUse) {
  Expr e = x * Expr(4) + x + y;
  EXPECT_EQ(toString(substitute(e, {{x.node(), Expr(3)}})), "(((3*4) + 3) + y)");
  EXPECT_EQ(toString(substitute(e, {{x.node(), y}, {y.node(), x}})), "(((y*4) + y) + x)");
}

TEST_F(MutatorTest, SubstituteDoesNotRecurseIntoReplacements) {
  EXPECT_EQ(toString(substitute(x + Expr(1), {{x.node(), x + Expr(1)}})), "((x + 1) + 1)");
}

TEST_F(MutatorTest, SubstituteSharesUntouchedTrees) {
  Expr e = (x + y) * Expr(2);
  EXPECT_TRUE(substitute(e, {{z.node(), Expr(1)}}).sameAs(e));
  EXPECT_TRUE(substitute(e, {}).sameAs(e));
  Expr partly = select(x < Expr(1), f, f + Expr(1.0f));
  Expr replaced = substitute(partly, {{x.node(), y}});
  auto s = static_cast<const SelectNode*>(replaced.get());
  EXPECT_TRUE(s->trueValue.sameAs(static_cast<const SelectNode*>(partly.get())->trueValue));
}

TEST_F(MutatorTest, SubstituteReachesEveryExpressionKind) {
  IterVar k{Var("k"), 4};
  Expr inner = call(Intrinsic::Exp, {cast(DataType::float32(), x)}) + load(a, floordiv(x, Expr(2)));
  Expr e = reduce(ReduceOp::Sum, select(!(x < k.var), producerLoad("P", DataType::float32(), {x}), inner), {k}, x < Expr(3));
  Expr r = substitute(e, {{x.node(), Expr(7)}});
  EXPECT_FALSE(usesVar(r, x.node())) << toString(r);
  EXPECT_TRUE(usesVar(r, k.var.node()));
  Expr vec = load(a, ramp(x, Expr(1), 4)) + broadcast(cast(DataType::float32(), x), 4);
  EXPECT_FALSE(usesVar(substitute(vec, {{x.node(), Expr(0)}}), x.node()));
}

TEST_F(MutatorTest, SubstituteInStatements) {
  Stmt s = makeFor(i, Expr(0), x, ForKind::Serial,
                   makeIf(i < x, makeStore(a, i + x, Expr(1.0f)), makeStore(a, x, Expr(2.0f))));
  Stmt wrapped = makeAllocate(b, makePragma("k", "v", makeBlock({s, makeStore(b, x, Expr(0.0f))})));
  Stmt r = substitute(wrapped, {{x.node(), Expr(5)}});
  EXPECT_FALSE(usesVar(r, x.node())) << toString(r);
  EXPECT_TRUE(usesVar(r, i.node()));
  EXPECT_TRUE(usesVar(wrapped, x.node()));
}

TEST_F(MutatorTest, SubstitutingAVectorKeepsTheLanesOfCastsAndSelects) {
  // What the vectorizer does: a loop variable becomes a ramp, and every node above it must
  // become a vector of that many lanes.
  Expr r = ramp(Expr(0), Expr(1), 8);
  Expr c = substitute(cast(DataType::float16(), load(a, i)), {{i.node(), r}});
  EXPECT_EQ(c.type().str(), "float16x8") << toString(c);
  Expr s = substitute(select(load(a, i) > Expr(0.5f), Expr(1.0f), Expr(0.0f)), {{i.node(), r}});
  EXPECT_EQ(s.type().str(), "float32x8") << toString(s);
  Expr mixed = substitute(select(i < Expr(4), load(a, Expr(0)), load(a, i)), {{i.node(), r}});
  EXPECT_EQ(mixed.type().str(), "float32x8") << toString(mixed);
}

TEST_F(MutatorTest, UsesVarLooksEverywhere) {
  EXPECT_TRUE(usesVar(x + y, x.node()));
  EXPECT_FALSE(usesVar(y * Expr(2), x.node()));
  EXPECT_TRUE(usesVar(load(a, floordiv(x, Expr(2))), x.node()));
  EXPECT_TRUE(usesVar(makeFor(i, Expr(0), x, ForKind::Serial, makeStore(a, i, Expr(0.0f))), x.node()));
  EXPECT_TRUE(usesVar(makeIf(x < Expr(2), makeStore(a, i, Expr(0.0f))), x.node()));
  EXPECT_FALSE(usesVar(makeStore(a, i, Expr(0.0f)), x.node()));
  EXPECT_TRUE(usesAnyVar(x + y, [&](const VarNode* v) { return v->name == "y"; }));
  EXPECT_FALSE(usesAnyVar(x + Expr(1), [&](const VarNode* v) { return v->name == "y"; }));
}

TEST_F(MutatorTest, AMutatorOverridesOneHook) {
  // Renames every variable read into a fresh one: the rest of the tree is rebuilt around it.
  struct Rename : IRMutator {
    Var to{"renamed"};
    Expr visitVar(const Expr& e, const VarNode* v) override { return v->name == "x" ? Expr(to) : e; }
  } rename;
  Expr r = rename.mutate(min(x, y) + Expr(1));
  EXPECT_EQ(toString(r), "(min(renamed, y) + 1)");
  EXPECT_TRUE(usesVar(r, rename.to.node()));
}

TEST_F(MutatorTest, VisitorSeesChildrenInOrder) {
  std::vector<std::string> seen;
  forEachChild(select(x < y, f, Expr(2.0f)), [&](const Expr& c) { seen.push_back(toString(c)); });
  EXPECT_EQ(seen, (std::vector<std::string>{"(x < y)", "f", "2f"}));
  seen.clear();
  forEachChild(ramp(x, y, 4), [&](const Expr& c) { seen.push_back(toString(c)); });
  EXPECT_EQ(seen, (std::vector<std::string>{"x", "y"}));
}

}  // namespace
