// Invalid steps: each raises tessel::Error whose message names the step's position and kind
// ("step N (kind): ...") and the offending stage or iterator. Each bad step comes after valid
// ones so that the position is checked, not just the presence of an error.
#include <gtest/gtest.h>

#include <limits>

#include "common/ErrorText.h"
#include "ops/Examples.h"
#include "passes/Lower.h"
#include "schedule/ExampleSchedules.h"
#include "schedule/Steps.h"

using namespace tessel;
using namespace tessel::schedule;
using namespace tessel::schedule::examples;  // Factors, Names, step<T>()
using namespace tessel::testsupport;

namespace {

/// The error of replaying `steps` on a 16x12x8 matmul after two valid steps (so the bad one,
/// if last, is step 3).
std::string replayError(std::vector<StepPtr> steps, const te::ComputeDAG& dag = ops::matmul(16, 12, 8)) {
  std::vector<StepPtr> all = {step<SplitStep>("C", "i", Factors{4}), step<AnnotateStep>("C", "i.0", Annotation::Parallel)};
  all.insert(all.end(), steps.begin(), steps.end());
  return errorOf([&] { replay(dag, all); });
}

TEST(BadSteps, SplitFactorZero) {
  std::string e = replayError({step<SplitStep>("C", "j", Factors{4, 0})});
  expectContains(e, "step 3 (split)");
  expectContains(e, "C.j");
  expectContains(e, "factor must be positive, got 0");
}

TEST(BadSteps, SplitFactorNegative) {
  std::string e = replayError({step<SplitStep>("C", "j", Factors{-4})});
  expectContains(e, "step 3 (split)");
  expectContains(e, "C.j");
  expectContains(e, "got -4");
}

TEST(BadSteps, FollowSplitOfAnUnsplitIterator) {
  std::string e = replayError({step<FollowSplitStep>("C", "j", "C", "k", 2)});
  expectContains(e, "step 3 (follow_split)");
  expectContains(e, "C.k was not split");
}

TEST(BadSteps, FollowSplitOfAnNpartsSplit) {
  std::string e = replayError({step<SplitStep>("C", "k", Factors{}, 2), step<FollowSplitStep>("C", "j", "C", "k", 2)});
  expectContains(e, "step 4 (follow_split)");
  expectContains(e, "C.k was split by nparts");
}

TEST(BadSteps, FollowSplitPartsOutOfRange) {
  // C.i has two levels (one factor): 2 parts at most.
  std::string e = replayError({step<FollowSplitStep>("C", "j", "C", "i", 3)});
  expectContains(e, "step 3 (follow_split)");
  expectContains(e, "parts must be in [2, 2]");
  expectContains(e, "got 3");
}

TEST(BadSteps, FollowFusedSplitOfAMissingLevel) {
  // C.i has two levels (one factor): level 0 only.
  using Sources = std::vector<std::pair<std::string, std::string>>;
  std::string e = replayError({step<FollowFusedSplitStep>("C", "j", Sources{{"C", "i"}}, 1)});
  expectContains(e, "step 3 (follow_fused_split)");
  expectContains(e, "C.i has 1 inner levels, no level 1");
  e = replayError({step<FollowFusedSplitStep>("C", "j", Sources{{"C", "i"}, {"C", "k"}}, 0)});
  expectContains(e, "C.k was not split");
  expectContains(errorOf([] { stepFromJson(json::parse(R"({"step": "follow_fused_split", "stage": "C", "iterator": "j",
                                                           "sources": [["C"]], "level": 0})")); }),
                 "sources[0] must be a [stage, iterator] pair");
}

TEST(BadSteps, SplitNpartsNegative) {
  std::string e = replayError({step<SplitStep>("C", "k", Factors{}, -2)});
  expectContains(e, "step 3 (split)");
  expectContains(e, "C.k");
  expectContains(e, "nparts must be positive, got -2");
}

TEST(BadSteps, SplitFactorsBeyondAnyExtent) {
  // From a corrupt record: they must be refused, not overflow the extent arithmetic.
  std::string e = replayError({step<SplitStep>("C", "j", Factors{int64_t(1) << 40, int64_t(1) << 40})});
  expectContains(e, "step 3 (split)");
  expectContains(e, "C.j");
  expectContains(e, "multiply past 2^32");
  expectContains(replayError({step<SplitStep>("C", "j", Factors{std::numeric_limits<int64_t>::max()})}), "C.j");
  expectContains(replayError({step<SplitStep>("C", "j", Factors{}, std::numeric_limits<int64_t>::max())}), "nparts");
  // Large but sane factors are fine: the outer loop just has one iteration.
  EXPECT_EQ(replayError({step<SplitStep>("C", "j", Factors{1024, 1024})}), "(no error)");
}

TEST(BadSteps, SplitWithoutFactors) {
  std::string e = replayError({step<SplitStep>("C", "k", Factors{})});
  expectContains(e, "step 3 (split)");
  expectContains(e, "C.k");
}

TEST(BadSteps, FuseOfNonAdjacentIterators) {
  std::string e = replayError({step<FuseStep>("C", Names{"i.0", "j"})});
  expectContains(e, "step 3 (fuse)");
  expectContains(e, "stage 'C'");
  expectContains(e, "i.0 and j are not adjacent");
}

TEST(BadSteps, FuseOfSpatialAndReduction) {
  std::string e = replayError({step<FuseStep>("C", Names{"j", "k"})});
  expectContains(e, "step 3 (fuse)");
  expectContains(e, "cannot fuse spatial and reduction iterators (j and k)");
}

TEST(BadSteps, ReorderNamingAnIteratorTwice) {
  std::string e = replayError({step<ReorderStep>("C", Names{"j", "i.1", "j"})});
  expectContains(e, "step 3 (reorder)");
  expectContains(e, "stage 'C'");
  expectContains(e, "iterator 'j' twice");
}

TEST(BadSteps, ComputeAtIntoAStageThatDoesNotConsumeTheTensor) {
  // P feeds Q; R reads only the input. P cannot be computed inside R.
  auto A = te::placeholder({8}, DataType::float32(), "A");
  auto P = te::compute({8}, [&](const std::vector<te::Var>& i) { return A(i[0]) + ir::Expr(1.0f); }, "P");
  auto Q = te::compute({8}, [&](const std::vector<te::Var>& i) { return P(i[0]) * ir::Expr(2.0f); }, "Q");
  auto R = te::compute({8}, [&](const std::vector<te::Var>& i) { return A(i[0]) * ir::Expr(3.0f); }, "R");
  te::ComputeDAG dag({Q, R});
  std::string e = errorOf([&] {
    replay(dag, {step<SplitStep>("R", "i0", Factors{2}), step<ComputeAtStep>("P", "R", "i0.0")});
  });
  expectContains(e, "step 2 (compute_at)");
  expectContains(e, "stage 'R' does not consume 'P'");
}

TEST(BadSteps, ComputeAtOfAnOutputOrIntoItself) {
  std::string output = replayError({step<ComputeAtStep>("C", "C", "j")});
  expectContains(output, "step 3 (compute_at)");
  expectContains(output, "'C' is an output");
  auto dag = ops::matmul(16, 12, 8);
  std::string cycle = errorOf([&] {
    replay(dag, {step<CacheWriteStep>("C", "local"), step<ComputeAtStep>("C.local", "C", "i"),
                 step<ComputeAtStep>("C.local", "C.local", "i")});
  });
  expectContains(cycle, "step 3 (compute_at)");
  expectContains(cycle, "C.local");
}

/// X -> A (elementwise) -> C reads A[min(i, 12)]: computed at a tile of C, A's region varies in size.
te::ComputeDAG clampedRead() {
  auto X = te::placeholder({16}, DataType::float32(), "X");
  auto A = te::compute({16}, [&](const std::vector<te::Var>& i) { return X(i[0]) * ir::Expr(2.0f); }, "A");
  auto C = te::compute({16}, [&](const std::vector<te::Var>& i) { return A(ir::min(i[0], ir::Expr(12))); }, "C");
  return te::ComputeDAG({C});
}

TEST(BadSteps, VectorizeOfAnIteratorWhoseExtentVaries) {
  std::string e = errorOf([] {
    replay(clampedRead(), {step<SplitStep>("C", "i0", Factors{4}), step<ComputeAtStep>("A", "C", "i0.0"),
                           step<AnnotateStep>("A", "i0", Annotation::Vectorize)});
  });
  expectContains(e, "step 3 (annotate)");
  expectContains(e, "A.i0");
  expectContains(e, "not a constant");
}

TEST(BadSteps, VectorizeBeforeTheAttachmentThatMakesTheExtentVary) {
  // The order reversed: the compute_at is the step that breaks the vectorized loop.
  std::string e = errorOf([] {
    replay(clampedRead(), {step<SplitStep>("C", "i0", Factors{4}), step<AnnotateStep>("A", "i0", Annotation::Vectorize),
                           step<ComputeAtStep>("A", "C", "i0.0")});
  });
  expectContains(e, "step 3 (compute_at)");
  expectContains(e, "A.i0");
}

TEST(BadSteps, VectorizeOfAReductionOrOfTooManyLanes) {
  std::string reduce = replayError({step<AnnotateStep>("C", "k", Annotation::Vectorize)});
  expectContains(reduce, "step 3 (annotate)");
  expectContains(reduce, "reduction iterator C.k");
  std::string wide = errorOf([] { replay(ops::matmul(4, 100, 4), {step<AnnotateStep>("C", "j", Annotation::Vectorize)}); });
  expectContains(wide, "step 1 (annotate)");
  expectContains(wide, "C.j: extent 100 exceeds 64 lanes");
}

TEST(BadSteps, ParallelReduction) {
  std::string e = replayError({step<AnnotateStep>("C", "k", Annotation::Parallel)});
  expectContains(e, "step 3 (annotate)");
  expectContains(e, "cannot parallel reduction iterator C.k");
}

TEST(BadSteps, UnknownStage) {
  std::string e = replayError({step<SplitStep>("Z", "i", Factors{2})});
  expectContains(e, "step 3 (split)");
  expectContains(e, "no stage named 'Z'");
  expectContains(e, "stages: A, B, C");
  expectContains(replayError({step<ComputeAtStep>("C", "Nowhere", "i")}), "step 3 (compute_at)");
  expectContains(replayError({step<ComputeInlineStep>("Ghost")}), "'Ghost'");
  expectContains(replayError({step<CacheReadStep>("Ghost", "shared", Names{"C"})}), "'Ghost'");
}

TEST(BadSteps, UnknownIterator) {
  std::string e = replayError({step<AnnotateStep>("C", "i", Annotation::Unroll)});  // i was split
  expectContains(e, "step 3 (annotate)");
  expectContains(e, "stage 'C' has no loop iterator 'i'");
  expectContains(e, "its iterators: i.0, i.1, j, k");
  expectContains(replayError({step<SplitStep>("C", "q", Factors{2})}), "'q'");
  expectContains(replayError({step<ReorderStep>("C", Names{"j", "q"})}), "'q'");
  expectContains(replayError({step<PragmaStep>("C", "q", "k", "v")}), "'q'");
  expectContains(replayError({step<RfactorStep>("C", "q")}), "'q'");
  expectContains(replayError({step<StorageAlignStep>("C", "q", 8, 0)}), "'q'");
  std::string target = errorOf([] {
    replay(ops::matmul(16, 12, 8), {step<CacheWriteStep>("C", "local"), step<ComputeAtStep>("C.local", "C", "q")});
  });
  expectContains(target, "step 2 (compute_at)");
  expectContains(target, "'q'");
}

TEST(BadSteps, PlaceholdersHaveNoLoops) {
  std::string e = replayError({step<SplitStep>("A", "i", Factors{2})});
  expectContains(e, "step 3 (split)");
  expectContains(e, "'A' is a placeholder");
  expectContains(replayError({step<ComputeInlineStep>("B")}), "'B' is a placeholder");
}

TEST(BadSteps, InlineOfAReductionOrAnOutput) {
  expectContains(replayError({step<ComputeInlineStep>("C")}), "step 3 (compute_inline): compute_inline: 'C' is an output");
  auto softmax = ops::softmax(4, 8);
  std::string e = errorOf([&] { replay(softmax, {step<ComputeInlineStep>("T_softmax_maxelem")}); });
  expectContains(e, "step 1 (compute_inline)");
  expectContains(e, "'T_softmax_maxelem' is a reduction");
}

TEST(BadSteps, CacheWriteAfterLoopSteps) {
  std::string e = replayError({step<CacheWriteStep>("C", "local")});
  expectContains(e, "step 3 (cache_write)");
  expectContains(e, "cache_write on 'C' must come before");
}

TEST(BadSteps, CacheReadForAStageThatDoesNotRead) {
  std::string e = replayError({step<CacheReadStep>("A", "shared", Names{"B"})});
  expectContains(e, "step 3 (cache_read)");
  expectContains(e, "stage 'B' does not read it");
}

TEST(BadSteps, RfactorOfASpatialIteratorOrAfterOtherSteps) {
  expectContains(replayError({step<RfactorStep>("C", "j")}), "rfactor: C.j is not a reduction iterator");
  std::string late = replayError({step<RfactorStep>("C", "k")});
  expectContains(late, "step 3 (rfactor)");
  expectContains(late, "rfactor on 'C' must come before other loop steps");
}

TEST(BadSteps, StorageAlignOutOfRange) {
  auto dag = ops::matmul(16, 12, 8);
  auto align = [&](int64_t factor, int64_t offset, const std::string& axis = "ax0") {
    return errorOf([&] {
      replay(dag, {step<CacheReadStep>("B", "shared", Names{"C"}), step<StorageAlignStep>("B.shared", axis, factor, offset)});
    });
  };
  expectContains(align(0, 0), "step 2 (storage_align)");
  expectContains(align(0, 0), "factor must be positive, got 0");
  expectContains(align(8, 8), "offset must be in [0, 8), got 8");
  expectContains(align(8, 1, "ax1"), "innermost axis");
  expectContains(replayError({step<StorageAlignStep>("C", "i", 8, 0)}), "an output's layout is fixed");
}

TEST(BadSteps, PragmaWithABadUnrollStep) {
  std::string e = replayError({step<PragmaStep>("C", "j", "auto_unroll_max_step", "lots")});
  expectContains(e, "step 3 (pragma)");
  expectContains(e, "C.j");
  expectContains(e, "'lots'");
  expectContains(replayError({step<PragmaStep>("C", "j", "", "1")}), "empty key");
}

TEST(BadSteps, ValidStepsAfterAnErrorNeverRun) {
  // The error stops the replay: no partially applied state escapes, and the message names
  // the first bad step even when a later one is bad too.
  std::string e = replayError({step<SplitStep>("C", "j", Factors{0}), step<SplitStep>("Z", "j", Factors{2})});
  expectContains(e, "step 3 (split)");
  EXPECT_EQ(e.find("step 4"), std::string::npos) << e;
}

TEST(BadSteps, LoweringAStateWithAVaryingVectorizedLoopIsAnError) {
  // Built directly (not replayed): lowering itself refuses rather than emitting wrong code.
  State state = replay(clampedRead(), {step<SplitStep>("C", "i0", Factors{4}), step<ComputeAtStep>("A", "C", "i0.0")});
  Stage& a = state.stage("A");
  a.iterator(a.leafByName("i0")).annotation = Annotation::Vectorize;
  std::string e = errorOf([&] { passes::lower(state, "kernel"); });
  expectContains(e, "cannot vectorize A.i0");
}

}  // namespace
