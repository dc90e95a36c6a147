// The schedule State: what each step does to stages and iterators (names, extents, order,
// annotations, attachment), state printing, bound inference for attached stages, the stages
// that cache_read, cache_write and rfactor add, and the loop nest built from a state.
#include <gtest/gtest.h>

#include "ir/Printer.h"
#include "ops/Examples.h"
#include "schedule/BoundInference.h"
#include "schedule/ExampleSchedules.h"
#include "schedule/LoopNest.h"
#include "schedule/Steps.h"

using namespace tessel;
using namespace tessel::schedule;
using namespace tessel::schedule::examples;  // Factors, Names, step<T>()

namespace {

/// The names and extents of a stage's loops, outermost first: "i.0:4 j:6 k:4".
std::string loops(const State& state, const std::string& stage) {
  const Stage& s = state.stage(stage);
  std::string out;
  for (int id : s.leaves) out += (out.empty() ? "" : " ") + s.iterator(id).name + ":" + std::to_string(s.iterator(id).extent);
  return out;
}

std::vector<std::string> stageNames(const State& state) {
  std::vector<std::string> names;
  for (auto& s : state.stages()) names.push_back(s.name());
  return names;
}

// ---- printing -----------------------------------------------------------------------------

TEST(StatePrinting, NaiveMatmul) {
  auto state = replay(ops::matmul(8, 6, 4), {});
  EXPECT_EQ(state.toString(),
            "Placeholder: A, B\n"
            "for i (0,8)\n"
            "  for j (0,6)\n"
            "    for k (0,4)\n"
            "      C += ...\n");
}

TEST(StatePrinting, AnnotationsAndPragmas) {
  auto state = replay(ops::matmul(8, 6, 4), {
      step<FuseStep>("C", Names{"i", "j"}),
      step<SplitStep>("C", "i@j", Factors{3, 4}),
      step<AnnotateStep>("C", "i@j.0", Annotation::Parallel),
      step<AnnotateStep>("C", "i@j.1", Annotation::Unroll),
      step<AnnotateStep>("C", "i@j.2", Annotation::Vectorize),
      step<PragmaStep>("C", "i@j.0", "auto_unroll_max_step", "64"),
      step<PragmaStep>("C", "k", "note", "hello"),
  });
  EXPECT_EQ(state.toString(),
            "Placeholder: A, B\n"
            "parallel i@j.0 (0,4) auto_unroll_max_step=64\n"
            "  unroll i@j.1 (0,3)\n"
            "    vectorize i@j.2 (0,4)\n"
            "      for k (0,4) note=hello\n"
            "        C += ...\n");
}

TEST(StatePrinting, AttachedStagesPrintInsideTheirLoop) {
  auto state = replay(ops::matmul(8, 6, 4), {
      step<CacheWriteStep>("C", "local"),
      step<SplitStep>("C", "i", Factors{2}),
      step<ComputeAtStep>("C.local", "C", "i.0"),
  });
  EXPECT_EQ(state.toString(),
            "Placeholder: A, B\n"
            "for i.0 (0,4)\n"
            "  for i (0,2)\n"
            "    for j (0,6)\n"
            "      for k (0,4)\n"
            "        C.local += ...\n"
            "  for i.1 (0,2)\n"
            "    for j (0,6)\n"
            "      C = ...\n");
}

TEST(StatePrinting, InlinedStagesDisappearAndReductionsShowTheirOperator) {
  auto state = replay(ops::softmax(4, 10), {step<ComputeInlineStep>("T_softmax_exp")});
  std::string text = state.toString();
  EXPECT_EQ(text.find("T_softmax_exp ="), std::string::npos) << text;
  EXPECT_NE(text.find("T_softmax_maxelem max= ..."), std::string::npos) << text;
  EXPECT_NE(text.find("T_softmax_expsum += ..."), std::string::npos) << text;
  EXPECT_NE(text.find("T_softmax_norm = ..."), std::string::npos) << text;
}

TEST(StatePrinting, StepsPrintAsScheduleCode) {
  std::vector<StepPtr> steps = {
      step<SplitStep>("C", "i", Factors{8, 4}),
      step<SplitStep>("C", "j", Factors{}, 3),
      step<FuseStep>("C", Names{"i.0", "i.1"}),
      step<ReorderStep>("C", Names{"j.0", "i.2"}),
      step<AnnotateStep>("C", "j.1", Annotation::Vectorize),
      step<PragmaStep>("C", "i.2", "auto_unroll_max_step", "16"),
      step<ComputeAtStep>("B.shared", "C", "k"),
      step<ComputeInlineStep>("P"),
      step<ComputeRootStep>("P"),
      step<CacheReadStep>("B", "shared", Names{"C", "D"}),
      step<CacheWriteStep>("C", "local"),
      step<RfactorStep>("C", "k.1"),
      step<StorageAlignStep>("B.shared", "ax0", 16, 1),
  };
  EXPECT_EQ(printSteps(steps),
            "C.split(i, factors=[8, 4])\n"
            "C.split(j, nparts=3)\n"
            "C.fuse(i.0, i.1)\n"
            "C.reorder(j.0, i.2)\n"
            "C.vectorize(j.1)\n"
            "C.pragma(i.2, \"auto_unroll_max_step\", 16)\n"
            "B.shared.compute_at(C, k)\n"
            "P.compute_inline()\n"
            "P.compute_root()\n"
            "B.cache_read(\"shared\", readers=[C, D])\n"
            "C.cache_write(\"local\")\n"
            "C.rfactor(k.1)\n"
            "B.shared.storage_align(ax0, 16, 1)\n");
}

// ---- loop steps ---------------------------------------------------------------------------

TEST(LoopSteps, SplitByFactorsRoundsTheOuterExtentUp) {
  auto state = replay(ops::matmul(30, 37, 11), {step<SplitStep>("C", "i", Factors{4})});
  EXPECT_EQ(loops(state, "C"), "i.0:8 i.1:4 j:37 k:11");
}

TEST(LoopSteps, MultiLevelSplitNamesLevelsOutermostFirst) {
  auto state = replay(ops::matmul(30, 37, 11), {step<SplitStep>("C", "j", Factors{3, 8})});
  // 37 = ceil(37 / 24) * 3 * 8 with the outermost level taking the rest.
  EXPECT_EQ(loops(state, "C"), "i:30 j.0:2 j.1:3 j.2:8 k:11");
}

TEST(LoopSteps, SplitByNpartsFixesTheOuterExtent) {
  auto state = replay(ops::matmul(30, 37, 11), {step<SplitStep>("C", "j", Factors{}, 5)});
  EXPECT_EQ(loops(state, "C"), "i:30 j.0:5 j.1:8 k:11");
}

TEST(LoopSteps, SplittingAReductionAxisGivesReductionIterators) {
  auto state = replay(ops::matmul(4, 4, 12), {step<SplitStep>("C", "k", Factors{4})});
  const Stage& c = state.stage("C");
  EXPECT_EQ(c.iterator(c.leafByName("k.0")).kind, IteratorKind::Reduce);
  EXPECT_EQ(c.iterator(c.leafByName("k.1")).kind, IteratorKind::Reduce);
}

TEST(LoopSteps, FuseMultipliesExtents) {
  auto state = replay(ops::matmul(30, 37, 11), {step<FuseStep>("C", Names{"i", "j"})});
  EXPECT_EQ(loops(state, "C"), "i@j:1110 k:11");
  auto three = replay(ops::matmul(6, 5, 4), {step<SplitStep>("C", "j", Factors{2}), step<FuseStep>("C", Names{"i", "j.0", "j.1"})});
  EXPECT_EQ(loops(three, "C"), "i@j.0@j.1:36 k:4");
}

TEST(LoopSteps, ReorderPermutesTheNamedLoopsInTheirPositions) {
  auto state = replay(ops::matmul(8, 6, 4), {step<SplitStep>("C", "i", Factors{2}), step<ReorderStep>("C", Names{"k", "i.0"})});
  // i.0 and k swap places; i.1 and j stay where they are.
  EXPECT_EQ(loops(state, "C"), "k:4 i.1:2 j:6 i.0:4");
}

TEST(LoopSteps, AnnotateAndPragmaAreRecordedOnTheIterator) {
  auto state = replay(ops::matmul(8, 6, 4), {
      step<AnnotateStep>("C", "i", Annotation::ThreadX),
      step<AnnotateStep>("C", "j", Annotation::VThread),
      step<PragmaStep>("C", "k", "auto_unroll_max_step", "8"),
      step<PragmaStep>("C", "k", "custom", "x y z"),
  });
  const Stage& c = state.stage("C");
  EXPECT_EQ(c.iterator(c.leafByName("i")).annotation, Annotation::ThreadX);
  EXPECT_EQ(c.iterator(c.leafByName("j")).annotation, Annotation::VThread);
  auto pragmas = c.iterator(c.leafByName("k")).pragmas;
  ASSERT_EQ(pragmas.size(), 2u);
  EXPECT_EQ(pragmas[0], (std::pair<std::string, std::string>{"auto_unroll_max_step", "8"}));
  EXPECT_EQ(pragmas[1], (std::pair<std::string, std::string>{"custom", "x y z"}));
}

TEST(LoopSteps, AnnotationNamesRoundTrip) {
  for (int a = 0; a <= int(Annotation::ThreadZ); ++a)
    EXPECT_EQ(parseAnnotation(annotationName(Annotation(a))), Annotation(a)) << annotationName(Annotation(a));
  EXPECT_EQ(parseAnnotation("none"), Annotation::None);
}

TEST(LoopSteps, SplitKeepsStagesAttachedToTheSplitLoop) {
  // Attached at j; after splitting j, the stage sits at the innermost part, j.1.
  auto state = replay(ops::matmul(8, 6, 4), {
      step<CacheReadStep>("B", "shared", Names{"C"}),
      step<ComputeAtStep>("B.shared", "C", "j"),
      step<SplitStep>("C", "j", Factors{3}),
  });
  const Stage& shared = state.stage("B.shared");
  const Stage& c = state.stage("C");
  EXPECT_EQ(c.iterator(shared.attachIterator).name, "j.1");
}

// ---- attachment and bound inference -------------------------------------------------------

TEST(BoundInference, PaddedInputAttachedInsideAConvolutionRow) {
  // conv2d 1x5x13x11, 6 filters 3x3, stride 2, pad 1: output 7x6, padded input 15x13.
  auto state = replay(ops::conv2dBiasReluNCHW(1, 5, 13, 11, 6, 3, 3, 2, 1), {step<ComputeAtStep>("pad_temp", "conv2d_nchw", "yy")});
  // At a fixed output row yy: one batch, every channel, the 3 rows yy*2 .. yy*2+2, and every
  // column the relaxed xx and rx reach (0 .. 5*2+2).
  EXPECT_EQ(loops(state, "pad_temp"), "i0:1 i1:5 i2:3 i3:13");
  State copy = state;
  auto bounds = inferBounds(copy);
  EXPECT_EQ(ir::toString(bounds.stages.at("pad_temp").regionMin[2]), "(yy*2)");
  EXPECT_TRUE(ir::isConstInt(bounds.stages.at("pad_temp").regionMin[3], 0));
  EXPECT_TRUE(state.stage("pad_temp").iterator(2).exactExtent);
}

TEST(BoundInference, ProducerAtASplitLoopComputesOneTile) {
  auto A = te::placeholder({16, 8}, DataType::float32(), "A");
  auto P = te::compute({16, 8}, [&](const std::vector<te::Var>& i) { return A(i[0], i[1]) * ir::Expr(2.0f); }, "P");
  auto Q = te::compute({16, 8}, [&](const std::vector<te::Var>& i) { return P(i[0], i[1]) + ir::Expr(1.0f); }, "Q");
  te::ComputeDAG dag({Q});
  auto state = replay(dag, {
      step<SplitStep>("Q", "i0", Factors{4}),
      step<SplitStep>("Q", "i1", Factors{2}),
      step<ReorderStep>("Q", Names{"i0.0", "i1.0", "i0.1", "i1.1"}),
      step<ComputeAtStep>("P", "Q", "i1.0"),
  });
  EXPECT_EQ(loops(state, "P"), "i0:4 i1:2");
  State copy = state;
  auto bounds = inferBounds(copy);
  EXPECT_EQ(ir::toString(bounds.stages.at("P").regionMin[0]), "(i0.0*4)");
  EXPECT_EQ(ir::toString(bounds.stages.at("P").regionMin[1]), "(i1.0*2)");
  // compute_root undoes it.
  auto root = replay(dag, {step<ComputeAtStep>("P", "Q", "i0"), step<ComputeRootStep>("P")});
  EXPECT_EQ(root.stage("P").attach, AttachKind::Root);
  EXPECT_EQ(loops(root, "P"), "i0:16 i1:8");
}

TEST(LoopSteps, FollowSplitTakesTheSourceFactorsAndMergesTheInnerOnes) {
  std::vector<StepPtr> steps = {step<SplitStep>("C", "i", Factors{2, 3, 2}), step<FollowSplitStep>("C", "j", "C", "i", 3)};
  auto state = replay(ops::matmul(24, 48, 4), steps);
  EXPECT_EQ(loops(state, "C"), "i.0:2 i.1:2 i.2:3 i.3:2 j.0:4 j.1:2 j.2:6 k:4");
  // It reads the factors when it applies: a changed source split is followed.
  steps[0] = step<SplitStep>("C", "i", Factors{4, 1, 3});
  EXPECT_EQ(loops(replay(ops::matmul(24, 48, 4), steps), "C"), "i.0:2 i.1:4 i.2:1 i.3:3 j.0:4 j.1:4 j.2:3 k:4");
}

// Inlined bodies are kept per operation and the inlined operations it reaches: states of one DAG
// that inline different stages, or a stage whose operation a replay made anew, get their own.
TEST(BoundInference, InlinedBodiesFollowWhatEachStateInlines) {
  auto dag = ops::conv2dBiasReluNCHW(1, 3, 9, 9, 4, 3, 3, 1, 1);
  auto padInlined = [&] { return replay(dag, {step<ComputeInlineStep>("pad_temp"), step<ComputeInlineStep>("T_add")}); };
  std::string inlined = ir::toString(inlinedBody(padInlined(), "conv2d_nchw"));
  EXPECT_EQ(inlined.find("pad_temp["), std::string::npos) << inlined;  // the padding's test, read from data
  EXPECT_NE(inlined.find("data["), std::string::npos) << inlined;
  std::string relu = ir::toString(inlinedBody(padInlined(), "T_relu"));
  EXPECT_NE(relu.find("conv2d_nchw["), std::string::npos) << relu;
  EXPECT_NE(relu.find("bias["), std::string::npos) << relu;
  // The same operation in a state that does not inline the padding reads it as a stage.
  State biasOnly = replay(dag, {step<ComputeInlineStep>("T_add")});
  std::string padded = ir::toString(inlinedBody(biasOnly, "conv2d_nchw"));
  EXPECT_NE(padded.find("pad_temp["), std::string::npos) << padded;
  EXPECT_EQ(padded.find("data["), std::string::npos) << padded;
  // A cache_read makes the convolution a new operation on every replay, reading the copy; with
  // the copy inlined, its body reads the padded input through it.
  State cached = replay(dag, {step<ComputeInlineStep>("T_add"), step<CacheReadStep>("pad_temp", "local", Names{"conv2d_nchw"}),
                              step<ComputeInlineStep>("pad_temp.local")});
  std::string copy = ir::toString(inlinedBody(cached, "conv2d_nchw"));
  EXPECT_NE(copy.find("pad_temp["), std::string::npos) << copy;
  EXPECT_EQ(copy.find("pad_temp.local["), std::string::npos) << copy;
  EXPECT_EQ(ir::toString(inlinedBody(padInlined(), "conv2d_nchw")), inlined);
}

TEST(BoundInference, ExtentsAloneMatchTheFullAnalysis) {
  // conv2d + bias + relu, tiled: bias inlined, the convolution and its padded input attached
  // inside the relu's tile. What steps ask for (extents) must not differ from what lowering gets.
  auto state = replay(ops::conv2dBiasReluNCHW(1, 5, 13, 11, 6, 3, 3, 2, 1), {
      step<ComputeInlineStep>("T_add"),
      step<SplitStep>("T_relu", "ax2", Factors{2}),
      step<SplitStep>("T_relu", "ax3", Factors{3}),
      step<ReorderStep>("T_relu", Names{"ax0", "ax1", "ax2.0", "ax3.0", "ax2.1", "ax3.1"}),
      step<ComputeAtStep>("conv2d_nchw", "T_relu", "ax3.0"),
      step<SplitStep>("conv2d_nchw", "xx", Factors{2}),
      step<ComputeAtStep>("pad_temp", "conv2d_nchw", "rc"),
  });
  State full = state, extents = state;
  for (auto& s : full.stages())
    for (auto& it : s.iterators) it.extent = -1;
  for (auto& s : extents.stages())
    for (auto& it : s.iterators) it.extent = -1;
  auto fullBounds = inferBounds(full);
  auto extentBounds = inferBounds(extents, BoundsDetail::Extents);
  for (const Stage& s : state.stages()) {
    for (size_t i = 0; i < s.iterators.size(); ++i) {
      EXPECT_EQ(extents.stage(s.name()).iterators[i].extent, s.iterators[i].extent) << s.name() << "." << s.iterators[i].name;
      EXPECT_EQ(full.stage(s.name()).iterators[i].extent, s.iterators[i].extent) << s.name() << "." << s.iterators[i].name;
    }
    if (!s.isPlaceholder()) {
      EXPECT_EQ(ir::toString(inlinedBody(state, s.name())), ir::toString(fullBounds.stages.at(s.name()).body)) << s.name();
    }
  }
  EXPECT_EQ(loops(state, "pad_temp"), loops(full, "pad_temp"));
  // The relu's root values feed the convolution's region; the inlined bias add's are not needed.
  EXPECT_FALSE(extentBounds.stages.at("T_relu").rootValues.empty());
  EXPECT_TRUE(extentBounds.stages.at("T_add").rootValues.empty());
  EXPECT_FALSE(fullBounds.stages.at("T_add").rootValues.empty());
}

TEST(BoundInference, RegionOfVaryingSizeGetsItsBoundAndIsMarkedInexact) {
  // C reads A[min(i, 12)]: the tile of 4 that i.0 covers shrinks at the end. Bounds cannot
  // give a constant size, so A's loop runs to a bound and is guarded.
  auto X = te::placeholder({16}, DataType::float32(), "X");
  auto A = te::compute({16}, [&](const std::vector<te::Var>& i) { return X(i[0]) * ir::Expr(2.0f); }, "A");
  auto C = te::compute({16}, [&](const std::vector<te::Var>& i) { return A(ir::min(i[0], ir::Expr(12))); }, "C");
  auto state = replay(te::ComputeDAG({C}), {step<SplitStep>("C", "i0", Factors{4}), step<ComputeAtStep>("A", "C", "i0.0")});
  const Stage& a = state.stage("A");
  EXPECT_FALSE(a.iterator(a.leafByName("i0")).exactExtent);
  EXPECT_LT(a.iterator(a.leafByName("i0")).extent, 16);
  EXPECT_GE(a.iterator(a.leafByName("i0")).extent, 4);
}

TEST(BoundInference, InlinedProducersAreReadThroughTheirConsumers) {
  // With T_add inlined, conv2d's consumer is T_relu: conv2d can be computed inside it.
  auto state = replay(ops::conv2dBiasReluNCHW(1, 4, 8, 8, 4, 3, 3, 1, 1), {
      step<ComputeInlineStep>("T_add"),
      step<ComputeAtStep>("conv2d_nchw", "T_relu", "ax2"),
  });
  EXPECT_EQ(state.stage("T_add").attach, AttachKind::Inline);
  EXPECT_EQ(loops(state, "conv2d_nchw"), "nn:1 ff:1 yy:1 xx:8 rc:4 ry:3 rx:3");
  EXPECT_TRUE(state.isWithin("conv2d_nchw", "T_relu"));
  EXPECT_FALSE(state.isWithin("T_relu", "conv2d_nchw"));
}

// ---- cache_read, cache_write, rfactor -------------------------------------------------------

TEST(CacheRead, AddsACopyStageThatTheReadersUse) {
  auto state = replay(ops::matmul(8, 6, 4), {step<CacheReadStep>("B", "shared", Names{"C"})});
  EXPECT_EQ(stageNames(state), (Names{"A", "B", "B.shared", "C"}));
  EXPECT_EQ(te::operationToString(*state.stage("B.shared").op), "B.shared(ax0, ax1) = B[ax0, ax1]");
  EXPECT_EQ(te::operationToString(*state.stage("C").op), "C(i, j) += (A[i, k]*B.shared[k, j])");
  EXPECT_EQ(state.consumers("B"), Names{"B.shared"});
  EXPECT_EQ(loops(state, "B.shared"), "ax0:4 ax1:6");
  // The DAG itself is unchanged: the rewrite lives in the state.
  EXPECT_EQ(state.dag().consumers("B"), Names{"C"});
}

TEST(CacheRead, AttachedCopyHoldsOnlyTheRegionRead) {
  auto state = replay(ops::matmul(8, 6, 4), {
      step<CacheReadStep>("B", "shared", Names{"C"}),
      step<ComputeAtStep>("B.shared", "C", "i"),
  });
  EXPECT_EQ(loops(state, "B.shared"), "ax0:4 ax1:6");  // all of B for each row of C
  auto inner = replay(ops::matmul(8, 6, 4), {
      step<CacheReadStep>("B", "shared", Names{"C"}),
      step<ComputeAtStep>("B.shared", "C", "k"),
  });
  EXPECT_EQ(loops(inner, "B.shared"), "ax0:1 ax1:1");
}

TEST(CacheRead, RepeatedScopesGetUniqueNames) {
  auto state = replay(ops::matmul(8, 6, 4), {
      step<CacheReadStep>("B", "shared", Names{"C"}),
      step<CacheReadStep>("B.shared", "shared", Names{"C"}),
  });
  EXPECT_EQ(stageNames(state), (Names{"A", "B", "B.shared", "B.shared.shared", "C"}));
  auto twice = replay(ops::matmul(8, 6, 4), {
      step<CacheReadStep>("A", "x", Names{"C"}),
      step<CacheReadStep>("B", "x", Names{"C"}),
  });
  EXPECT_EQ(stageNames(twice), (Names{"A", "A.x", "B", "B.x", "C"}));
}

TEST(CacheWrite, MovesTheComputationIntoANewStage) {
  auto state = replay(ops::matmul(8, 6, 4), {step<CacheWriteStep>("C", "local")});
  EXPECT_EQ(stageNames(state), (Names{"A", "B", "C.local", "C"}));
  EXPECT_EQ(te::operationToString(*state.stage("C.local").op), "C.local(i, j) += (A[i, k]*B[k, j])");
  EXPECT_EQ(te::operationToString(*state.stage("C").op), "C(i, j) = C.local[i, j]");
  EXPECT_EQ(loops(state, "C.local"), "i:8 j:6 k:4");
  EXPECT_EQ(loops(state, "C"), "i:8 j:6");
  EXPECT_TRUE(state.isOutput("C"));
  // Fresh variables: the cache stage's axes are not the output stage's.
  EXPECT_FALSE(state.stage("C.local").op->axes[0].var.sameAs(state.stage("C").op->axes[0].var));
}

TEST(Rfactor, ReduceAxisBecomesADataAxisOfANewStage) {
  auto state = replay(ops::matmul(8, 6, 4), {step<RfactorStep>("C", "k")});
  EXPECT_EQ(stageNames(state), (Names{"A", "B", "C.rf", "C"}));
  EXPECT_EQ(te::operationToString(*state.stage("C.rf").op), "C.rf(k, i, j) = (A[i, k]*B[k, j])");
  EXPECT_EQ(te::operationToString(*state.stage("C").op), "C(i, j) += C.rf[k.v, i, j]");
  EXPECT_EQ(loops(state, "C.rf"), "k:4 i:8 j:6");
  EXPECT_EQ(loops(state, "C"), "i:8 j:6 k.v:4");
}

TEST(Rfactor, OnePartOfASplitReductionAxis) {
  auto inner = replay(ops::matmul(8, 6, 4), {step<SplitStep>("C", "k", Factors{2}), step<RfactorStep>("C", "k.1")});
  EXPECT_EQ(te::operationToString(*inner.stage("C.rf").op), "C.rf(k.1, i, j) += (A[i, ((k.0*2) + k.1)]*B[((k.0*2) + k.1), j])");
  EXPECT_EQ(loops(inner, "C.rf"), "k.1:2 i:8 j:6 k.0:2");
  auto outer = replay(ops::matmul(8, 6, 4), {step<SplitStep>("C", "k", Factors{2}), step<RfactorStep>("C", "k.0")});
  EXPECT_EQ(te::operationToString(*outer.stage("C.rf").op), "C.rf(k.0, i, j) += (A[i, ((k.0*2) + k.1)]*B[((k.0*2) + k.1), j])");
}

TEST(Rfactor, OverrunningSplitsAreGuardedByACondition) {
  // 11 by factor 4: 3 x 4 = 12 > 11.
  auto byFactor = replay(ops::matmul(2, 2, 11), {step<SplitStep>("C", "k", Factors{4}), step<RfactorStep>("C", "k.1")});
  EXPECT_EQ(te::operationToString(*byFactor.stage("C.rf").op),
            "C.rf(k.1, i, j) += (A[i, ((k.0*4) + k.1)]*B[((k.0*4) + k.1), j]) where (((k.0*4) + k.1) < 11)");
  // 12 in 5 parts: parts of 3, 5 x 3 = 15 > 12, although 3 divides 12.
  auto byParts = replay(ops::matmul(2, 2, 12), {step<SplitStep>("C", "k", Factors{}, 5), step<RfactorStep>("C", "k.1")});
  EXPECT_EQ(te::operationToString(*byParts.stage("C.rf").op),
            "C.rf(k.1, i, j) += (A[i, ((k.0*3) + k.1)]*B[((k.0*3) + k.1), j]) where (((k.0*3) + k.1) < 12)");
  // 12 by factor 4: exact, no condition.
  auto exact = replay(ops::matmul(2, 2, 12), {step<SplitStep>("C", "k", Factors{4}), step<RfactorStep>("C", "k.1")});
  EXPECT_EQ(te::operationToString(*exact.stage("C.rf").op), "C.rf(k.1, i, j) += (A[i, ((k.0*4) + k.1)]*B[((k.0*4) + k.1), j])");
}

// ---- the loop nest ------------------------------------------------------------------------

TEST(LoopNest, ReductionGetsAnInitNestBeforeItsFirstReductionLoop) {
  auto f = buildLoopNest(replay(ops::matmul(8, 6, 4), {}), "mm");
  EXPECT_EQ(f.name, "mm");
  ASSERT_EQ(f.args.size(), 3u);
  EXPECT_EQ(f.args[0]->name, "A");
  EXPECT_EQ(f.args[2]->name, "C");
  EXPECT_EQ(f.args[2]->shape, (std::vector<int64_t>{8, 6}));
  EXPECT_EQ(ir::toString(f.body),
            "for i in range(8):\n"
            "  for j in range(6):\n"
            "    C[((i*6) + j)] = 0f\n"
            "    for k in range(4):\n"
            "      C[((i*6) + j)] = (C[((i*6) + j)] + (A[((i*4) + k)]*B[((k*6) + j)]))\n");
}

TEST(LoopNest, NonDivisibleSplitIsGuarded) {
  auto f = buildLoopNest(replay(ops::matmul(8, 6, 4), {step<SplitStep>("C", "j", Factors{4})}), "mm");
  std::string text = ir::toString(f.body);
  EXPECT_NE(text.find("if (((j.0*4) + j.1) < 6):\n"), std::string::npos) << text;
  auto exact = buildLoopNest(replay(ops::matmul(8, 6, 4), {step<SplitStep>("C", "j", Factors{3})}), "mm");
  EXPECT_EQ(ir::toString(exact.body).find("if "), std::string::npos) << ir::toString(exact.body);
}

TEST(LoopNest, AttachedStageGetsALocalBufferOfItsRegion) {
  auto f = buildLoopNest(replay(ops::matmul(8, 6, 4), {
      step<CacheWriteStep>("C", "local"),
      step<SplitStep>("C", "i", Factors{2}),
      step<ComputeAtStep>("C.local", "C", "i.0"),
  }), "mm");
  EXPECT_EQ(ir::toString(f.body),
            "for i.0 in range(4):\n"
            "  allocate C_local[float32 * 12]\n"
            "  for i in range(2):\n"
            "    for j in range(6):\n"
            "      C_local[((i*6) + j)] = 0f\n"
            "      for k in range(4):\n"
            "        C_local[((i*6) + j)] = (C_local[((i*6) + j)] + (A[(((i.0*8) + (i*4)) + k)]*B[((k*6) + j)]))\n"
            "  for i.1 in range(2):\n"
            "    for j in range(6):\n"
            "      C[(((i.0*12) + (i.1*6)) + j)] = C_local[((i.1*6) + j)]\n");
}

TEST(LoopNest, StorageAlignPadsTheLocalBuffer) {
  auto f = buildLoopNest(replay(ops::matmul(8, 6, 4), {
      step<CacheReadStep>("B", "shared", Names{"C"}),
      step<StorageAlignStep>("B.shared", "ax0", 8, 1),
  }), "mm");
  // B.shared is 4 x 6; its row stride 6 is padded to 9 (9 % 8 == 1).
  auto alloc = f.body.as<ir::AllocateNode>();
  ASSERT_NE(alloc, nullptr) << ir::toString(f.body);
  EXPECT_EQ(alloc->buffer->name, "B_shared");
  EXPECT_EQ(alloc->buffer->strides, (std::vector<int64_t>{9, 1}));
  EXPECT_EQ(alloc->buffer->elementCount(), 3 * 9 + 6);
}

}  // namespace
