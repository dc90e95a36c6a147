// The loop-IR passes on hand-built statements (exact results) and through the lowering driver
// on real schedules: loop partitioning, unrolling, vectorization, register promotion.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

#include "ir/Mutator.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ops/Conv2d.h"
#include "ops/Examples.h"
#include "ops/Schedules.h"
#include "passes/LinearGuard.h"
#include "passes/Lower.h"
#include "passes/Passes.h"
#include "schedule/State.h"
#include "schedule/Steps.h"

using namespace tessel;
using namespace tessel::ir;
using namespace tessel::passes;

namespace {

struct Counts {
  int ifs = 0, loops = 0, stores = 0, rampStores = 0, broadcasts = 0, allocations = 0;
  std::vector<ForKind> kinds;
};

Counts count(const Stmt& s) {
  struct Counter : IRVisitor {
    Counts c;
    void visit(const Expr& e) override {
      if (e.defined() && e.as<BroadcastNode>()) ++c.broadcasts;
      IRVisitor::visit(e);
    }
    void visit(const Stmt& x) override {
      if (!x.defined()) return;
      if (x.as<IfThenElseNode>()) ++c.ifs;
      if (auto f = x.as<ForNode>()) {
        ++c.loops;
        c.kinds.push_back(f->forKind);
      }
      if (auto st = x.as<StoreNode>()) {
        ++c.stores;
        if (st->index.as<RampNode>()) ++c.rampStores;
      }
      if (x.as<AllocateNode>()) ++c.allocations;
      IRVisitor::visit(x);
    }
  } counter;
  counter.visit(s);
  return counter.c;
}

/// The first loop (outermost first) over a variable of this name.
Stmt findLoop(const Stmt& s, const std::string& name) {
  struct Finder : IRVisitor {
    std::string name;
    Stmt found;
    void visit(const Stmt& x) override {
      if (found.defined() || !x.defined()) return;
      if (auto f = x.as<ForNode>(); f && f->var.name() == name) found = x;
      else IRVisitor::visit(x);
    }
    using IRVisitor::visit;
  } finder;
  finder.name = name;
  finder.visit(s);
  return finder.found;
}

/// The stores a loop nest with constant bounds performs, each printed with its index and value
/// after the loop variables are replaced by their values: what two forms of one nest must share.
std::multiset<std::string> executedStores(const Stmt& s) {
  std::multiset<std::string> stores;
  VarMap values;
  std::function<void(const Stmt&)> run = [&](const Stmt& x) {
    if (!x.defined()) return;
    if (auto f = x.as<ForNode>()) {
      // The simplified bounds are held: asConstInt points into the expression it reads.
      const Expr minExpr = simplify(substitute(f->min, values)), extentExpr = simplify(substitute(f->extent, values));
      const int64_t *min = asConstInt(minExpr), *extent = asConstInt(extentExpr);
      ASSERT_TRUE(min && extent) << toString(x);
      for (int64_t v = *min; v < *min + *extent; ++v) {
        values[f->var.node()] = Expr(v);
        run(f->body);
      }
      values.erase(f->var.node());
    } else if (auto b = x.as<BlockNode>()) {
      for (const Stmt& y : b->stmts) run(y);
    } else if (auto i = x.as<IfThenElseNode>()) {
      const Expr condition = simplify(substitute(i->condition, values));
      const int64_t* holds = asConstInt(condition);
      ASSERT_TRUE(holds) << toString(i->condition);
      run(*holds ? i->thenCase : i->elseCase);
    } else if (auto st = x.as<StoreNode>()) {
      stores.insert(toString(simplify(substitute(makeStore(st->buffer, st->index, st->value), values))));
    } else {
      FAIL() << "not a loop nest of stores: " << toString(x);
    }
  };
  run(s);
  return stores;
}

class PassTest : public ::testing::Test {
 protected:
  Buffer in = makeBuffer("A", DataType::float32(), {64}, BufferNode::Scope::Global);
  Buffer out = makeBuffer("B", DataType::float32(), {64}, BufferNode::Scope::Global);
  Var o{"o"}, i{"i"}, j{"j"};

  Stmt loop(const Var& v, int64_t extent, Stmt body, ForKind kind = ForKind::Serial) {
    return makeFor(v, Expr(0), Expr(extent), kind, body);
  }
};

template <class T, class... Args>
schedule::StepPtr step(Args&&... args) {
  return std::make_shared<T>(std::forward<Args>(args)...);
}

// ---- guarded-loop tightening ---------------------------------------------------------------

TEST_F(PassTest, AGuardedLoopRunsOnlyWhereItsGuardCanHold) {
  // for o in 0..4: for i in 0..8: if (o >= 1 && o*8 + i < 20): B[o*8 + i] = 1; the guard on o
  // sits inside the i loop (before hoisting); o runs over 1..2 (o = 3 would need i < -4).
  Expr index = o * Expr(8) + i;
  Stmt s = loop(o, 4, loop(i, 8, makeIf((o >= Expr(1)) && (index < Expr(20)), makeStore(out, index, Expr(1.0f)))));
  EXPECT_EQ(toString(simplify(tightenGuardedLoops(s))),
            "for o in range(1, 3):\n"
            "  for i in range(8):\n"
            "    if (((o*8) + i) < 20):\n"
            "      B[((o*8) + i)] = 1f\n");
  // A guard that never holds removes the loop; a negative coefficient bounds from above.
  Stmt never = loop(i, 8, makeIf(i >= Expr(8), makeStore(out, i, Expr(1.0f))));
  EXPECT_EQ(toString(tightenGuardedLoops(never)), "");
  Stmt downward = loop(i, 8, makeIf(Expr(5) - i > Expr(2), makeStore(out, i, Expr(1.0f))));
  EXPECT_EQ(toString(simplify(tightenGuardedLoops(downward))),
            "for i in range(3):\n"
            "  B[i] = 1f\n");
}

TEST_F(PassTest, TighteningLeavesLoopsWithOtherStatementsOrElseBranchesAlone) {
  Stmt mixed = loop(i, 8, makeBlock({makeIf(i >= Expr(2), makeStore(out, i, Expr(1.0f))), makeStore(out, i + Expr(8), Expr(2.0f))}));
  EXPECT_TRUE(tightenGuardedLoops(mixed).sameAs(mixed));
  Stmt withElse = loop(i, 8, makeIf(i >= Expr(2), makeStore(out, i, Expr(1.0f)), makeStore(out, i, Expr(0.0f))));
  EXPECT_TRUE(tightenGuardedLoops(withElse).sameAs(withElse));
  Stmt vectorized = loop(i, 8, makeIf(i >= Expr(2), makeStore(out, i, Expr(1.0f))), ForKind::Vectorized);
  EXPECT_TRUE(tightenGuardedLoops(vectorized).sameAs(vectorized));
  // A guard whose other terms are unbounded (a loop of unknown extent) tells nothing.
  Var n{"n"};
  Stmt unknown = loop(i, 8, makeFor(j, Expr(0), n, ForKind::Serial, makeIf(i + j >= Expr(4), makeStore(out, i, Expr(1.0f)))));
  EXPECT_TRUE(tightenGuardedLoops(unknown).sameAs(unknown));
}

// ---- loop partitioning --------------------------------------------------------------------

TEST_F(PassTest, PartitionDropsTheGuardFromTheMainRange) {
  // for o in 0..5, i in 0..8: if o*8 + i < 37: B[o*8 + i] = A[o*8 + i]
  Expr index = o * Expr(8) + i;
  Stmt s = loop(o, 5, loop(i, 8, makeIf(index < Expr(37), makeStore(out, index, load(in, index)))));
  Stmt r = simplify(partitionLoops(simplify(s)));
  EXPECT_EQ(toString(r),
            "for o in range(4):\n"
            "  for i in range(8):\n"
            "    B[((o*8) + i)] = A[((o*8) + i)]\n"
            "for i in range(5):\n"
            "  B[(i + 32)] = A[(i + 32)]\n");
}

TEST_F(PassTest, PartitionHandlesLowerBoundsToo) {
  // Padding-like guard on both sides: 1 <= o*4 + i - 2 < 16 for o in 0..5, i in 0..4.
  Expr x = o * Expr(4) + i - Expr(2);
  Stmt s = loop(o, 5, loop(i, 4, makeIf((x >= Expr(1)) && (x < Expr(16)), makeStore(out, o * Expr(4) + i, Expr(1.0f)))));
  Stmt r = simplify(partitionLoops(simplify(s)));
  auto block = r.as<BlockNode>();
  ASSERT_NE(block, nullptr) << toString(r);
  ASSERT_EQ(block->stmts.size(), 3u) << toString(r);
  // The middle piece, o in [1, 4), needs no guard; the first and last keep theirs.
  auto mid = block->stmts[1].as<ForNode>();
  ASSERT_NE(mid, nullptr) << toString(r);
  EXPECT_TRUE(isConstInt(mid->min, 1));
  EXPECT_TRUE(isConstInt(mid->extent, 3));
  EXPECT_EQ(count(block->stmts[1]).ifs, 0) << toString(r);
  // Inside them, the inner loop is partitioned once more: no guard is left at all.
  EXPECT_EQ(toString(block->stmts[0]), "B[3] = 1f\n");
  EXPECT_EQ(toString(block->stmts[2]), "for i in range(2):\n  B[(i + 16)] = 1f\n");
}

TEST_F(PassTest, PartitionDropsATailThatNeverRuns) {
  // o = 4 gives x in [14, 17]: never below 14, so that piece disappears.
  Expr x = o * Expr(4) + i - Expr(2);
  Stmt s = loop(o, 5, loop(i, 4, makeIf((x >= Expr(1)) && (x < Expr(14)), makeStore(out, o * Expr(4) + i, Expr(1.0f)))));
  Stmt r = simplify(partitionLoops(simplify(s)));
  EXPECT_EQ(toString(r),
            "B[3] = 1f\n"
            "for o in range(1, 4):\n"
            "  for i in range(4):\n"
            "    B[((o*4) + i)] = 1f\n");
}

TEST_F(PassTest, PartitionLeavesUnguardedAndAlwaysFailingLoopsAlone) {
  Stmt plain = loop(o, 4, makeStore(out, o, Expr(1.0f)));
  EXPECT_TRUE(partitionLoops(plain).sameAs(plain));
  // A guard on something other than a loop variable gives nothing to split at.
  Var n("n");
  Stmt other = loop(o, 4, makeIf(n < Expr(3), makeStore(out, o, Expr(1.0f))));
  EXPECT_EQ(toString(partitionLoops(other)), toString(other));
}

TEST_F(PassTest, PartitionKeepsVectorizedLoopsWhole) {
  Stmt s = loop(i, 8, makeIf(i < Expr(5), makeStore(out, i, Expr(1.0f))), ForKind::Vectorized);
  EXPECT_TRUE(partitionLoops(s).sameAs(s));
}

TEST(LoweredPartition, NonDivisibleSplitHasAGuardFreeVectorMainBody) {
  auto state = schedule::replay(ops::matmul(30, 37, 11), {
      step<schedule::SplitStep>("C", "j", std::vector<int64_t>{8}),
      step<schedule::AnnotateStep>("C", "j.1", schedule::Annotation::Vectorize),
  });
  Stmt body = lower(state, "kernel").body;
  // The main part: the 4 full tiles of 8 columns, as vector code without guards.
  Stmt main = findLoop(body, "j.0");
  ASSERT_TRUE(main.defined()) << toString(body);
  EXPECT_EQ(count(main).ifs, 0) << toString(body);
  EXPECT_GT(count(main).rampStores, 0) << toString(body);
  // The tail (columns 32..36) keeps its guards and runs scalar.
  Stmt tail = findLoop(body, "j.1");
  ASSERT_TRUE(tail.defined()) << toString(body);
  EXPECT_GT(count(tail).ifs, 0);
  EXPECT_EQ(count(tail).rampStores, 0);
}

TEST_F(PassTest, PartitionGoesOneLevelDeepInsideABoundaryRange) {
  // o + i + j >= 2 over 3 x 3 x 3: o in [0, 1] is a boundary range; inside it i splits again
  // (i = 2 is guard-free), but the loop over j inside i in [0, 1] keeps its guard.
  Stmt s = loop(o, 3, loop(i, 3, loop(j, 3, makeIf(o + i + j >= Expr(2), makeStore(out, o * Expr(9) + i * Expr(3) + j, Expr(1.0f))))));
  Stmt r = simplify(partitionLoops(simplify(s)));
  EXPECT_EQ(toString(r),
            "for o in range(2):\n"
            "  for i in range(2):\n"
            "    for j in range(3):\n"
            "      if (((o + i) + j) >= 2):\n"
            "        B[(((o*9) + (i*3)) + j)] = 1f\n"
            "  for j in range(3):\n"
            "    B[(((o*9) + j) + 6)] = 1f\n"
            "for i in range(3):\n"
            "  for j in range(3):\n"
            "    B[(((i*3) + j) + 18)] = 1f\n");
}

TEST_F(PassTest, PartitionSplitsTheInnerLoopsOfAWideBoundaryRange) {
  // o + i >= 2 over 4 x 4: the boundary range o in [0, 1] has two iterations; inside it, the
  // loop over i is split (not o again).
  Stmt s = loop(o, 4, loop(i, 4, makeIf(o + i >= Expr(2), makeStore(out, o * Expr(4) + i, Expr(1.0f)))));
  EXPECT_EQ(toString(simplify(partitionLoops(simplify(s)))),
            "for o in range(2):\n"
            "  for i in range(2):\n"
            "    if ((o + i) >= 2):\n"
            "      B[((o*4) + i)] = 1f\n"
            "  for i in range(2, 4):\n"
            "    B[((o*4) + i)] = 1f\n"
            "for o in range(2, 4):\n"
            "  for i in range(4):\n"
            "    B[((o*4) + i)] = 1f\n");
}

TEST_F(PassTest, AShortLoopWithNoGuardFreeIterationStillSplitsAtItsGuards) {
  // A 7-pixel row in two tiles of 4 under padding on both sides, 3 taps: x = o*4 + i < 7
  // (the ragged tile), x + j >= 1 (left padding), x + j < 8 (right padding). o = 0 meets the
  // left padding, o = 1 the right one and the tail: no iteration holds every guard throughout.
  Expr x = o * Expr(4) + i;
  Stmt s = loop(o, 2, loop(i, 4, loop(j, 3, makeIf((x < Expr(7)) && (x + j >= Expr(1)) && (x + j < Expr(8)),
                                                   makeStore(out, x, load(out, x) + load(in, x + j))))));
  Stmt r = simplify(partitionLoops(simplify(s)));
  // Each tile is a piece of its own with only the guards of its own border, and the loops
  // inside it split as a main range's do: the first tile's pixel 0 skips the left padding's
  // tap, the last tile's first two pixels run without a test.
  EXPECT_EQ(toString(r),
            "for j in range(1, 3):\n"
            "  B[0] = (B[0] + A[j])\n"
            "for i in range(1, 4):\n"
            "  for j in range(3):\n"
            "    B[i] = (B[i] + A[(i + j)])\n"
            "for i in range(2):\n"
            "  for j in range(3):\n"
            "    B[(i + 4)] = (B[(i + 4)] + A[((i + j) + 4)])\n"
            "for i in range(2, 4):\n"
            "  if (i < 3):\n"
            "    B[(i + 4)] = (B[(i + 4)] + A[(i + 4)])\n"
            "  for j in range(1, 3):\n"
            "    if ((i < 3) && ((i + j) < 4)):\n"
            "      B[(i + 4)] = (B[(i + 4)] + A[((i + j) + 4)])\n");
  // The same stores as the guarded loop: every (x, j) with 0 <= x < 7 and 1 <= x + j < 8.
  std::multiset<std::string> before = executedStores(s), after = executedStores(r);
  EXPECT_EQ(before.size(), 7u * 3 - 2);
  EXPECT_EQ(after, before);
}

// ---- padded taps ------------------------------------------------------------------------------

TEST_F(PassTest, PaddedTapBecomesAGuardedUpdate) {
  // B[0] += (i >= 1 ? A[i - 1] : 0) * A[i]  ->  if (i >= 1) B[0] += A[i - 1] * A[i]
  Expr padded = ifThenElse(i >= Expr(1), load(in, i - Expr(1)), Expr(0.0f));
  Stmt s = loop(i, 8, makeStore(out, Expr(0), load(out, Expr(0)) + padded * load(in, i)));
  Stmt r = guardPaddedTaps(s);
  EXPECT_EQ(toString(r), "for i in range(8):\n  if (i >= 1):\n    B[0] = (B[0] + (A[(i - 1)]*A[i]))\n");
  // Partitioned, the first tap is gone and the rest runs without a test.
  EXPECT_EQ(toString(simplify(partitionLoops(simplify(r)))), "for i in range(1, 8):\n  B[0] = (B[0] + (A[(i - 1)]*A[i]))\n");
  // The padded read on either side of the product or of the sum, under a cast.
  Stmt sum = loop(i, 8, makeStore(out, Expr(0), cast(DataType::float32(), padded) + load(out, Expr(0))));
  EXPECT_EQ(count(guardPaddedTaps(sum)).ifs, 1);
  Stmt product = loop(i, 8, makeStore(out, Expr(0), load(out, Expr(0)) + load(in, i) * padded));
  EXPECT_EQ(count(guardPaddedTaps(product)).ifs, 1);
}

TEST_F(PassTest, OnlyZeroPaddedAccumulationsAreGuarded) {
  Expr padded = ifThenElse(i >= Expr(1), load(in, i - Expr(1)), Expr(0.0f));
  // Another padding value (a max pool's -inf, a constant 1) must still be added.
  Expr one = ifThenElse(i >= Expr(1), load(in, i - Expr(1)), Expr(1.0f));
  Stmt nonZero = loop(i, 8, makeStore(out, Expr(0), load(out, Expr(0)) + one * load(in, i)));
  EXPECT_TRUE(guardPaddedTaps(nonZero).sameAs(nonZero));
  // Not an update of the element it reads: the store must happen even on the padding.
  Stmt copy = loop(i, 8, makeStore(out, i, load(out, Expr(0)) + padded));
  EXPECT_TRUE(guardPaddedTaps(copy).sameAs(copy));
  // A condition that differs between the lanes of a vectorized loop stays a select.
  Stmt lanes = loop(i, 8, makeStore(out, i, load(out, i) + padded), ForKind::Vectorized);
  EXPECT_TRUE(guardPaddedTaps(lanes).sameAs(lanes));
  // A lane-invariant one becomes a guard.
  Expr rowPadded = ifThenElse(o >= Expr(1), load(in, i), Expr(0.0f));
  Stmt invariant = loop(o, 2, loop(i, 8, makeStore(out, i, load(out, i) + rowPadded), ForKind::Vectorized));
  EXPECT_EQ(count(guardPaddedTaps(invariant)).ifs, 1);
  // A condition on unrolled or parallel loops only: no loop to partition, it stays a select.
  for (ForKind kind : {ForKind::Unrolled, ForKind::Parallel}) {
    Stmt unrolled = loop(o, 2, loop(i, 8, makeStore(out, i, load(out, i) + rowPadded), ForKind::Vectorized), kind);
    EXPECT_TRUE(guardPaddedTaps(unrolled).sameAs(unrolled)) << forKindName(kind);
  }
}

TEST_F(PassTest, GuardsSharedByAWholeLoopBodyMoveInFrontOfIt) {
  // for i { if (o >= 1 && i < 3) B[i] = 1; if (o >= 1) B[i + 8] = 2 }
  Stmt s = loop(o, 2, loop(i, 4, makeBlock({makeIf((o >= Expr(1)) && (i < Expr(3)), makeStore(out, i, Expr(1.0f))),
                                            makeIf(o >= Expr(1), makeStore(out, i + Expr(8), Expr(2.0f)))})));
  EXPECT_EQ(toString(hoistInvariantGuards(s)),
            "for o in range(2):\n"
            "  if (o >= 1):\n"
            "    for i in range(4):\n"
            "      if (i < 3):\n"
            "        B[i] = 1f\n"
            "      B[(i + 8)] = 2f\n");
  // Not hoisted: a test on the loop's own variable, a test that reads memory, a body with an
  // unguarded statement.
  Stmt own = loop(i, 4, makeIf(i < Expr(3), makeStore(out, i, Expr(1.0f))));
  EXPECT_TRUE(hoistInvariantGuards(own).sameAs(own));
  Stmt reads = loop(i, 4, makeIf(load(in, Expr(0)) > Expr(0.0f), makeStore(out, i, Expr(1.0f))));
  EXPECT_TRUE(hoistInvariantGuards(reads).sameAs(reads));
  Stmt mixed = loop(i, 4, makeBlock({makeIf(o >= Expr(1), makeStore(out, i, Expr(1.0f))), makeStore(out, i + Expr(8), Expr(2.0f))}));
  EXPECT_TRUE(hoistInvariantGuards(mixed).sameAs(mixed));
  // Consecutive statements whose shared test reads what the first writes keep their own tests.
  Expr positive = load(out, Expr(0)) > Expr(0.0f);
  Stmt writes = makeBlock({makeIf(positive, makeStore(out, Expr(0), Expr(-1.0f))), makeIf(positive, makeStore(out, Expr(1), Expr(1.0f)))});
  EXPECT_TRUE(hoistInvariantGuards(writes).sameAs(writes));
}

TEST_F(PassTest, ConsecutiveStatementsSharingATestAreGuardedOnce) {
  // An unrolled window: if (o >= 1 && i >= 1) s0; if (o >= 1) s1; if (o >= 1) s2; then a
  // statement with another test, then an unguarded one.
  Stmt s = makeBlock({makeIf((o >= Expr(1)) && (i >= Expr(1)), makeStore(out, Expr(0), Expr(1.0f))),
                      makeIf(o >= Expr(1), makeStore(out, Expr(1), Expr(1.0f))),
                      makeIf(o >= Expr(1), makeStore(out, Expr(2), Expr(1.0f))),
                      makeIf(o < Expr(3), makeStore(out, Expr(3), Expr(1.0f))),
                      makeStore(out, Expr(4), Expr(1.0f))});
  EXPECT_EQ(toString(hoistInvariantGuards(s)),
            "if (o >= 1):\n"
            "  if (i >= 1):\n"
            "    B[0] = 1f\n"
            "  B[1] = 1f\n"
            "  B[2] = 1f\n"
            "if (o < 3):\n"
            "  B[3] = 1f\n"
            "B[4] = 1f\n");
}

TEST(LoweredPaddedTaps, InlinePaddedConvolutionSkipsThePaddingWithoutSelects) {
  // A 3x3 convolution on a 7x7 image, padding inlined: the lowered code reads no padded value
  // through a select; the border rows' taps are guarded once per kernel row instead.
  auto data = te::placeholder({1, 7, 7, 32}, DataType::float32(), "data");
  auto weight = te::placeholder({2, 3, 3, 32, 16}, DataType::float32(), "weight");
  ops::Conv2dAttrs attrs;
  attrs.layout = ops::Layout::NHWC;
  attrs.padding = {1, 1, 1, 1};
  te::ComputeDAG dag({ops::conv2dPacked(data, weight, attrs)}, {data, weight});
  ops::CpuScheduleOptions options;
  options.allowFallback = false;
  ops::AnchorTile tile;
  tile.lanes = 16;  // one block of the packed weight
  tile.vectors = 1;
  tile.rows = 7;
  tile.inlinePadding = 1;
  options.anchorTile = tile;
  Stmt body = lower(schedule::replay(dag, ops::defaultCpuSchedule(dag, options)), "conv").body;
  struct Selects : IRVisitor {
    int found = 0;
    void visit(const Expr& e) override {
      if (e.defined() && (e.kind() == ExprKind::Select || e.kind() == ExprKind::IfThenElse)) ++found;
      IRVisitor::visit(e);
    }
    using IRVisitor::visit;
  } selects;
  selects.visit(body);
  EXPECT_EQ(selects.found, 0) << toString(body);
  EXPECT_GT(count(body).ifs, 0) << toString(body);
}

// ---- unrolling ----------------------------------------------------------------------------

TEST_F(PassTest, UnrollReplicatesTheBody) {
  Stmt s = loop(i, 4, makeStore(out, i * Expr(2), load(in, i)), ForKind::Unrolled);
  EXPECT_EQ(toString(simplify(unrollLoops(s))),
            "B[0] = A[0]\n"
            "B[2] = A[1]\n"
            "B[4] = A[2]\n"
            "B[6] = A[3]\n");
}

TEST_F(PassTest, UnrollStartsAtTheLoopMin) {
  Stmt s = makeFor(i, Expr(3), Expr(2), ForKind::Unrolled, makeStore(out, i, Expr(1.0f)));
  EXPECT_EQ(toString(simplify(unrollLoops(s))), "B[3] = 1f\nB[4] = 1f\n");
}

TEST_F(PassTest, UnrollLeavesOtherLoopsAlone) {
  Stmt serial = loop(i, 4, makeStore(out, i, Expr(1.0f)));
  EXPECT_EQ(count(unrollLoops(serial)).loops, 1);
  Stmt parallel = loop(i, 4, makeStore(out, i, Expr(1.0f)), ForKind::Parallel);
  EXPECT_EQ(count(unrollLoops(parallel)).loops, 1);
  Stmt huge = loop(i, 1000, makeStore(out, Expr(0), Expr(1.0f)), ForKind::Unrolled);
  EXPECT_EQ(count(unrollLoops(huge)).loops, 1);
  // An allocation inside would be duplicated: the loop stays.
  Buffer t = makeBuffer("T", DataType::float32(), {2}, BufferNode::Scope::Local);
  Stmt withAlloc = loop(i, 2, makeAllocate(t, makeStore(t, Expr(0), Expr(1.0f))), ForKind::Unrolled);
  EXPECT_EQ(count(unrollLoops(withAlloc)).loops, 1);
  // A parallel loop inside would become one parallel region per copy (the schedule fuzzer's
  // matmul with 16 unrolled rows around a parallel loop: 9,000 lines gcc did not compile in
  // 120 s): the loop stays, explicit or automatic.
  Stmt aroundParallel = loop(i, 4, loop(j, 4, makeStore(out, i * Expr(4) + j, Expr(1.0f)), ForKind::Parallel), ForKind::Unrolled);
  EXPECT_EQ(count(unrollLoops(aroundParallel)).loops, 2);
  Stmt autoAroundParallel = loop(i, 4, loop(j, 4, makeStore(out, i * Expr(4) + j, Expr(1.0f)), ForKind::Parallel));
  EXPECT_EQ(count(unrollLoops(makePragma("auto_unroll_max_step", "64", autoAroundParallel))).loops, 2);
}

TEST_F(PassTest, AutoUnrollUnrollsNestsWithinTheStepLimit) {
  Stmt nest = loop(i, 4, loop(j, 4, makeStore(out, i * Expr(4) + j, Expr(1.0f))));
  Stmt all = unrollLoops(makePragma("auto_unroll_max_step", "16", nest));
  EXPECT_EQ(count(all).loops, 0) << toString(all);
  EXPECT_EQ(count(all).stores, 16);
  // With a limit of 8 only the inner loop (4 steps) fits.
  Stmt inner = unrollLoops(makePragma("auto_unroll_max_step", "8", nest));
  EXPECT_EQ(count(inner).loops, 1) << toString(inner);
  EXPECT_EQ(count(inner).stores, 4);
  // The pragma is consumed; a limit of 0 unrolls nothing.
  EXPECT_EQ(toString(unrollLoops(makePragma("auto_unroll_max_step", "0", nest))), toString(nest));
  // Other pragmas are kept for code generation.
  Stmt kept = unrollLoops(makePragma("note", "x", nest));
  ASSERT_NE(kept.as<PragmaNode>(), nullptr);
}

TEST_F(PassTest, UnrollExplicitZeroLeavesTheChosenLoopsToTheDeviceCompiler) {
  Stmt nest = loop(i, 4, loop(j, 4, makeStore(out, i * Expr(4) + j, Expr(1.0f))));
  // With unroll_explicit = 0 the loops auto_unroll_max_step picks stay loops, marked unrolled
  // (codegen writes `#pragma unroll`); the pragma itself is consumed.
  Stmt marked = unrollLoops(makePragma("unroll_explicit", "0", makePragma("auto_unroll_max_step", "8", nest)));
  auto outer = marked.as<ForNode>();
  ASSERT_NE(outer, nullptr) << toString(marked);
  EXPECT_EQ(outer->forKind, ForKind::Serial);  // 16 steps: over the limit
  auto inner = outer->body.as<ForNode>();
  ASSERT_NE(inner, nullptr) << toString(marked);
  EXPECT_EQ(inner->forKind, ForKind::Unrolled);
  EXPECT_EQ(count(marked).stores, 1);
  // unroll_explicit = 1 is the default: expanded in the IR.
  Stmt expanded = unrollLoops(makePragma("unroll_explicit", "1", makePragma("auto_unroll_max_step", "8", nest)));
  EXPECT_EQ(count(expanded).stores, 4);
}

// ---- vectorization ------------------------------------------------------------------------

TEST_F(PassTest, VectorizedLoopBecomesRampsAndBroadcasts) {
  Stmt s = loop(i, 8, makeStore(out, i, load(in, i) + Expr(1.0f)), ForKind::Vectorized);
  Stmt r = simplify(vectorizeLoops(s));
  auto store = r.as<StoreNode>();
  ASSERT_NE(store, nullptr) << toString(r);
  EXPECT_EQ(toString(r), "B[ramp(0, 1, 8)] = (A[ramp(0, 1, 8)] + broadcast(1f, 8))\n");
  EXPECT_EQ(store->value.type(), DataType::float32(8));
}

TEST_F(PassTest, VectorizedLoopInsideAnOuterLoop) {
  Stmt s = loop(o, 4, loop(i, 8, makeStore(out, o * Expr(8) + i, load(in, i) * load(in, o)), ForKind::Vectorized));
  EXPECT_EQ(toString(simplify(vectorizeLoops(s))),
            "for o in range(4):\n"
            "  B[ramp((o*8), 1, 8)] = (A[ramp(0, 1, 8)]*broadcast(A[o], 8))\n");
}

TEST_F(PassTest, VectorizedCastsAndSelectsTakeTheLanes) {
  Buffer half = makeBuffer("H", DataType::float16(), {64}, BufferNode::Scope::Global);
  Stmt s = loop(i, 8, makeStore(half, i, cast(DataType::float16(), load(in, i))), ForKind::Vectorized);
  Stmt widened = simplify(vectorizeLoops(s));  // kept alive: `as` points into it
  auto store = widened.as<StoreNode>();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->value.type().str(), "float16x8");
  EXPECT_EQ(store->value.kind(), ExprKind::Cast);  // a vector cast, not a broadcast of a scalar
  Stmt sel = loop(i, 8, makeStore(out, i, select(load(in, i) > Expr(0.5f), Expr(1.0f), Expr(0.0f))), ForKind::Vectorized);
  Stmt selWidened = simplify(vectorizeLoops(sel));
  auto selStore = selWidened.as<StoreNode>();
  ASSERT_NE(selStore, nullptr);
  EXPECT_EQ(selStore->value.type().str(), "float32x8");
  EXPECT_EQ(selStore->value.kind(), ExprKind::Select);
}

TEST_F(PassTest, LoopsThatCannotRunLaneParallelStayScalar) {
  // A guard that differs per lane.
  Stmt guarded = loop(i, 8, makeIf(i < Expr(5), makeStore(out, i, Expr(1.0f))), ForKind::Vectorized);
  Counts g = count(vectorizeLoops(guarded));
  EXPECT_EQ(g.loops, 1);
  EXPECT_EQ(g.kinds[0], ForKind::Serial);
  // An accumulation into one address: every lane would add to the same element.
  Buffer sum = makeBuffer("S", DataType::float32(), {1}, BufferNode::Scope::Global);
  Stmt reduce = loop(i, 8, makeStore(sum, Expr(0), load(sum, Expr(0)) + load(in, i)), ForKind::Vectorized);
  EXPECT_EQ(count(vectorizeLoops(reduce)).kinds, std::vector<ForKind>{ForKind::Serial});
  // A local allocation inside.
  Buffer t = makeBuffer("T", DataType::float32(), {1}, BufferNode::Scope::Local);
  Stmt alloc = loop(i, 8, makeAllocate(t, makeStore(out, i, Expr(1.0f))), ForKind::Vectorized);
  EXPECT_EQ(count(vectorizeLoops(alloc)).kinds, std::vector<ForKind>{ForKind::Serial});
  // A non-constant extent.
  Var n("n");
  Stmt dynamic = makeFor(i, Expr(0), n, ForKind::Vectorized, makeStore(out, i, Expr(1.0f)));
  EXPECT_EQ(count(vectorizeLoops(dynamic)).kinds, std::vector<ForKind>{ForKind::Serial});
}

TEST_F(PassTest, LaneInvariantStoreIsKeptOnce) {
  // The same value to the same address in every lane: one scalar store is equivalent.
  Stmt s = loop(i, 8, makeStore(out, Expr(0), Expr(2.0f)), ForKind::Vectorized);
  Stmt r = vectorizeLoops(s);
  EXPECT_EQ(count(r).loops, 0) << toString(r);
  EXPECT_EQ(toString(r), "B[0] = 2f\n");
}

TEST_F(PassTest, InnerLoopsOfAVectorizedLoopStaySerial) {
  // for i (vectorized): for j: B[i] += A[j] -- each lane runs the j loop.
  Stmt s = loop(i, 8, loop(j, 3, makeStore(out, i, load(out, i) + load(in, j))), ForKind::Vectorized);
  EXPECT_EQ(toString(simplify(vectorizeLoops(s))),
            "for j in range(3):\n"
            "  B[ramp(0, 1, 8)] = (B[ramp(0, 1, 8)] + broadcast(A[j], 8))\n");
}

TEST_F(PassTest, ForGpuKernelsOnlyDenseCopiesAreVectorized) {
  // A copy of four consecutive elements (a cooperative copy's lanes) becomes one wide access.
  Stmt copy = loop(o, 4, loop(i, 4, makeStore(out, o * Expr(4) + i, load(in, o * Expr(8) + i)), ForKind::Vectorized));
  EXPECT_EQ(toString(vectorizeCopies(copy)),
            "for o in range(4):\n"
            "  B[ramp((o*4), 1, 4)] = A[ramp((o*8), 1, 4)]\n");
  Stmt fill = loop(i, 4, makeStore(out, i, Expr(0.0f)), ForKind::Vectorized);
  EXPECT_EQ(toString(vectorizeCopies(fill)), "B[ramp(0, 1, 4)] = broadcast(0f, 4)\n");
  // Arithmetic, a gather (stride 2) and 8 lanes (wider than 16 bytes) stay scalar loops.
  for (Stmt scalar : {loop(i, 4, makeStore(out, i, load(in, i) + Expr(1.0f)), ForKind::Vectorized),
                      loop(i, 4, makeStore(out, i, load(in, i * Expr(2))), ForKind::Vectorized),
                      loop(i, 8, makeStore(out, i, load(in, i)), ForKind::Vectorized)}) {
    Counts c = count(vectorizeCopies(scalar));
    EXPECT_EQ(c.kinds, std::vector<ForKind>{ForKind::Serial}) << toString(scalar);
  }
  // A guarded copy whose guard holds for all four lanes or none (a ragged tile's row bound: the
  // lanes run along one row of 64, floordiv(4 o + i, 64) is floordiv(4 o, 64)) is one wide
  // access under one test; a guard that differs per lane keeps the scalar loop.
  Expr row = floordiv(o * Expr(4) + i, Expr(64));
  Stmt rowGuarded = loop(i, 4, makeIf(row < Expr(3), makeStore(out, o * Expr(4) + i, load(in, o * Expr(8) + i))), ForKind::Vectorized);
  Stmt wide = vectorizeCopies(rowGuarded);
  EXPECT_TRUE(count(wide).kinds.empty()) << toString(wide);
  auto guard = wide.as<IfThenElseNode>();
  ASSERT_NE(guard, nullptr) << toString(wide);
  EXPECT_TRUE(guard->condition.type().isScalar());
  EXPECT_EQ(guard->thenCase.as<StoreNode>()->index.type().lanes, 4);
  Stmt laneGuarded = loop(i, 4, makeIf(i < Expr(3), makeStore(out, o * Expr(4) + i, load(in, o * Expr(8) + i))), ForKind::Vectorized);
  EXPECT_EQ(count(vectorizeCopies(laneGuarded)).kinds, std::vector<ForKind>{ForKind::Serial});
}

TEST_F(PassTest, ACooperativeCopyUnrollsByItsOwnStepsNotTheBlocksThreads) {
  // 256 threads copying 8 elements each: 8 steps per thread, within auto_unroll_max_step 16.
  Var tx("tx");
  Stmt copy = loop(o, 8, makeFor(tx, Expr(0), Expr(256), ForKind::ThreadIdxX, makeStore(out, o * Expr(256) + tx, load(in, o * Expr(256) + tx))));
  Stmt unrolled = unrollLoops(makePragma("auto_unroll_max_step", "16", copy));
  EXPECT_EQ(count(unrolled).stores, 8) << toString(unrolled);
}

// ---- register promotion -------------------------------------------------------------------

TEST_F(PassTest, LocalBufferWithConstantIndicesBecomesRegisters) {
  Buffer acc = makeBuffer("acc", DataType::float32(), {4}, BufferNode::Scope::Local);
  Stmt body = makeBlock({makeStore(acc, Expr(0), Expr(0.0f)), makeStore(acc, Expr(3), load(acc, Expr(0)) + Expr(1.0f)),
                         makeStore(out, Expr(0), load(acc, Expr(3)))});
  Stmt promoted = promoteRegisters(makeAllocate(acc, body));
  auto r = promoted.as<AllocateNode>();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->buffer->registerLanes, 1);
  // Every access now goes to the promoted buffer.
  struct Uses : IRVisitor {
    const BufferNode* old;
    int count = 0;
    void visit(const Expr& e) override {
      if (auto l = e.as<LoadNode>(); l && l->buffer.get() == old) ++count;
      IRVisitor::visit(e);
    }
    void visit(const Stmt& s) override {
      if (auto st = s.as<StoreNode>(); st && st->buffer.get() == old) ++count;
      IRVisitor::visit(s);
    }
  } uses;
  uses.old = acc.get();
  uses.visit(r->body);
  EXPECT_EQ(uses.count, 0);
}

TEST_F(PassTest, VectorAccessesPromoteToVectorRegisters) {
  Buffer acc = makeBuffer("acc", DataType::float32(), {16}, BufferNode::Scope::Local);
  Stmt body = makeBlock({makeStore(acc, ramp(Expr(0), Expr(1), 8), broadcast(Expr(0.0f), 8)),
                         makeStore(acc, ramp(Expr(8), Expr(1), 8), load(acc, ramp(Expr(0), Expr(1), 8)))});
  Stmt promoted = promoteRegisters(makeAllocate(acc, body));
  auto r = promoted.as<AllocateNode>();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->buffer->registerLanes, 8);
}

/// The register lanes of the allocation `s` after promotion (0: stays in memory).
int lanesAfterPromotion(const Stmt& s) {
  Stmt promoted = promoteRegisters(s);
  auto a = promoted.as<AllocateNode>();
  EXPECT_NE(a, nullptr);
  return a ? a->buffer->registerLanes : -1;
}

TEST_F(PassTest, BuffersThatCannotLiveInRegistersStayInMemory) {
  Buffer acc = makeBuffer("acc", DataType::float32(), {4}, BufferNode::Scope::Local);
  // A loop-variable index.
  Stmt variable = makeAllocate(acc, loop(i, 4, makeStore(acc, i, Expr(0.0f))));
  EXPECT_EQ(lanesAfterPromotion(variable), 0);
  // Mixed lane counts.
  Buffer wide = makeBuffer("wide", DataType::float32(), {16}, BufferNode::Scope::Local);
  Stmt mixed = makeAllocate(wide, makeBlock({makeStore(wide, ramp(Expr(0), Expr(1), 8), broadcast(Expr(0.0f), 8)),
                                             makeStore(wide, Expr(1), Expr(1.0f))}));
  EXPECT_EQ(lanesAfterPromotion(mixed), 0);
  // Too many registers.
  Buffer big = makeBuffer("big", DataType::float32(), {128}, BufferNode::Scope::Local);
  Stmt many = makeAllocate(big, makeStore(big, Expr(100), Expr(0.0f)));
  EXPECT_EQ(lanesAfterPromotion(many), 0);
  // A global buffer is never an allocation to promote.
  Stmt global = makeStore(out, Expr(0), Expr(0.0f));
  EXPECT_TRUE(promoteRegisters(global).sameAs(global));
}

TEST(LoweredRegisters, RegisterTiledMatmulKeepsItsAccumulatorInVectorRegisters) {
  using namespace schedule;
  auto state = replay(ops::matmul(64, 96, 48), {
      step<CacheWriteStep>("C", "local"),
      step<SplitStep>("C", "i", std::vector<int64_t>{4}),
      step<SplitStep>("C", "j", std::vector<int64_t>{16}),
      step<ReorderStep>("C", std::vector<std::string>{"i.0", "j.0", "i.1", "j.1"}),
      step<AnnotateStep>("C", "i.1", Annotation::Unroll),  // the tile is read at constant offsets too
      step<AnnotateStep>("C", "j.1", Annotation::Vectorize),
      step<ComputeAtStep>("C.local", "C", "j.0"),
      step<SplitStep>("C.local", "j", std::vector<int64_t>{16}),
      step<ReorderStep>("C.local", std::vector<std::string>{"k", "i", "j.0", "j.1"}),
      step<AnnotateStep>("C.local", "i", Annotation::Unroll),
      step<AnnotateStep>("C.local", "j.1", Annotation::Vectorize),
  });
  Stmt body = lower(state, "kernel").body;
  struct FindAllocations : IRVisitor {
    std::vector<Buffer> found;
    void visit(const Stmt& s) override {
      if (auto a = s.as<AllocateNode>()) found.push_back(a->buffer);
      IRVisitor::visit(s);
    }
  } finder;
  finder.visit(body);
  ASSERT_EQ(finder.found.size(), 1u) << toString(body);
  EXPECT_EQ(finder.found[0]->name, "C_local");
  EXPECT_EQ(finder.found[0]->registerLanes, 16) << toString(body);
  EXPECT_GT(count(body).rampStores, 0);
  EXPECT_GT(count(body).broadcasts, 0);  // A's element broadcast across the 16 lanes
}

}  // namespace

TEST(LinearGuard, SolvedForOneVariableNarrowsToSomeOrEveryValueOfTheRest) {
  Var i("i"), j("j");
  VarBounds others{{j.node(), Interval{0, 3}}};
  // i + j < 10: for some j (j = 0) while i <= 9; for every j (j = 3) while i <= 6.
  auto lt = solveGuard(ExprKind::LT, linearSum(simplify(i + j - 10)), i.node(), others);
  ASSERT_TRUE(lt.has_value());
  int64_t lo = 0, hi = 100;
  EXPECT_TRUE(narrowToSome(*lt, lo, hi));
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 9);
  lo = 0, hi = 100;
  EXPECT_TRUE(narrowToAll(*lt, lo, hi));
  EXPECT_EQ(hi, 6);
  // 2 - 2i + j >= 1 (a negative coefficient, >=): some j: 2i <= 4, i <= 2; every j: 2i <= 1, i <= 0.
  auto ge = solveGuard(ExprKind::GE, linearSum(simplify(Expr(2) - i * 2 + j - 1)), i.node(), others);
  ASSERT_TRUE(ge.has_value());
  lo = -5, hi = 5;
  EXPECT_TRUE(narrowToSome(*ge, lo, hi));
  EXPECT_EQ(hi, 2);
  lo = -5, hi = 5;
  EXPECT_TRUE(narrowToAll(*ge, lo, hi));
  EXPECT_EQ(hi, 0);
  EXPECT_EQ(lo, -5);
  // An unbounded rest narrows nothing; i inside a product is not linear in i; no i, no guard.
  auto unbounded = solveGuard(ExprKind::LT, linearSum(simplify(i + j - 10)), i.node(), VarBounds{});
  ASSERT_TRUE(unbounded.has_value());
  lo = 0, hi = 100;
  EXPECT_FALSE(narrowToAll(*unbounded, lo, hi));
  EXPECT_EQ(hi, 100);
  EXPECT_FALSE(solveGuard(ExprKind::LT, linearSum(simplify(i * j - 10)), i.node(), others).has_value());
  EXPECT_FALSE(solveGuard(ExprKind::LT, linearSum(simplify(j - 10)), i.node(), others).has_value());
  EXPECT_FALSE(solveGuard(ExprKind::EQ, linearSum(simplify(i - 10)), i.node(), others).has_value());
}
