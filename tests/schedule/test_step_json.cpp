// Steps as data: every kind of step round-trips through JSON unchanged, replaying a list read
// back from JSON text gives the same State and byte-identical generated code, and malformed
// step lists are rejected with the position of the bad step.
#include <gtest/gtest.h>

#include <set>

#include "codegen/CSource.h"
#include "common/ErrorText.h"
#include "ops/Examples.h"
#include "passes/Lower.h"
#include "schedule/ExampleSchedules.h"

using namespace tessel;
using namespace tessel::schedule;
using namespace tessel::testsupport;
using namespace tessel::schedule::examples;
using nlohmann::json;

namespace {

std::string codeOf(const State& state) { return codegen::generateCSource({passes::lower(state, "kernel")}); }

/// Through JSON text and back, as a record in the log would be.
std::vector<StepPtr> throughText(const std::vector<StepPtr>& steps) { return stepsFromJson(json::parse(stepsToJson(steps).dump())); }

void expectSameReplay(const te::ComputeDAG& dag, const std::vector<StepPtr>& steps) {
  auto again = throughText(steps);
  ASSERT_EQ(again.size(), steps.size());
  EXPECT_EQ(stepsToJson(again), stepsToJson(steps));
  EXPECT_EQ(printSteps(again), printSteps(steps));
  State original = replay(dag, steps);
  State replayed = replay(dag, again);
  EXPECT_EQ(replayed.toString(), original.toString());
  std::string code = codeOf(original);
  EXPECT_EQ(codeOf(replayed), code);  // byte-identical
}

// ---- round trips --------------------------------------------------------------------------

TEST(StepJson, EveryStepKindIsCovered) {
  std::set<std::string> kinds;
  for (auto& s : tiledSteps()) kinds.insert(s->kind());
  for (auto& s : reductionSteps()) kinds.insert(s->kind());
  EXPECT_EQ(kinds, (std::set<std::string>{"split", "fuse", "reorder", "annotate", "pragma", "compute_at", "compute_inline",
                                          "compute_root", "cache_read", "cache_write", "rfactor", "storage_align",
                                          "follow_split", "follow_fused_split"}));
}

TEST(StepJson, EachStepRoundTripsUnchanged) {
  std::vector<StepPtr> all = tiledSteps();
  for (auto& s : reductionSteps()) all.push_back(s);
  for (int a = 0; a <= int(Annotation::ThreadZ); ++a) all.push_back(step<AnnotateStep>("S", "x", Annotation(a)));
  for (auto& s : all) {
    json j = s->toJson();
    StepPtr back = stepFromJson(json::parse(j.dump()));
    EXPECT_EQ(back->kind(), s->kind());
    EXPECT_EQ(back->toJson(), j) << j.dump();
    EXPECT_EQ(back->print(), s->print());
  }
}

TEST(StepJson, SplitFieldsAreWrittenAsTheyMean) {
  EXPECT_EQ(step<SplitStep>("C", "i", Factors{8, 4})->toJson(),
            json::parse(R"({"step": "split", "stage": "C", "iterator": "i", "factors": [8, 4]})"));
  EXPECT_EQ(step<SplitStep>("C", "i", Factors{}, 3)->toJson(),
            json::parse(R"({"step": "split", "stage": "C", "iterator": "i", "nparts": 3})"));
  EXPECT_EQ(step<PragmaStep>("C", "i", "auto_unroll_max_step", "16")->toJson(),
            json::parse(R"({"step": "pragma", "stage": "C", "iterator": "i", "key": "auto_unroll_max_step", "value": "16"})"));
}

TEST(StepJson, TiledDenseReplaysToTheSameStateAndCode) { expectSameReplay(denseRelu(), tiledSteps()); }

TEST(StepJson, ReductionScheduleReplaysToTheSameStateAndCode) {
  expectSameReplay(ops::conv2dBiasReluNCHW(1, 4, 9, 9, 6, 3, 3, 2, 1), reductionSteps());
}

TEST(StepJson, HandWrittenSgemmReplaysToTheSameStateAndCode) {
  expectSameReplay(ops::matmul(64, 96, 48), {
      step<CacheWriteStep>("C", "local"),
      step<SplitStep>("C", "i", Factors{8}),
      step<SplitStep>("C", "j", Factors{2, 16}),
      step<ReorderStep>("C", Names{"j.0", "i.0", "i.1", "j.1", "j.2"}),
      step<AnnotateStep>("C", "j.0", Annotation::Parallel),
      step<AnnotateStep>("C", "i.1", Annotation::Unroll),
      step<AnnotateStep>("C", "j.1", Annotation::Unroll),
      step<AnnotateStep>("C", "j.2", Annotation::Vectorize),
      step<ComputeAtStep>("C.local", "C", "i.0"),
      step<SplitStep>("C.local", "j", Factors{16}),
      step<ReorderStep>("C.local", Names{"k", "i", "j.0", "j.1"}),
      step<AnnotateStep>("C.local", "j.1", Annotation::Vectorize),
  });
}

TEST(StepJson, ReplayingTheSameListTwiceIsDeterministic) {
  auto dag = denseRelu();
  EXPECT_EQ(codeOf(replay(dag, tiledSteps())), codeOf(replay(dag, tiledSteps())));
}

TEST(StepJson, TheTiledStateIsWhatTheStepsSay) {
  // Guard against a round trip that is equal only because both sides lost something.
  State state = replay(denseRelu(), tiledSteps());
  EXPECT_EQ(state.stage("C.local").attach, AttachKind::At);
  EXPECT_EQ(state.stage("B.shared").attachStage, "C.local");
  EXPECT_EQ(state.stage("B.shared").storageAlign.at(0), (std::pair<int64_t, int64_t>{8, 1}));
  std::string text = state.toString();
  EXPECT_NE(text.find("parallel i.0@j.0 (0,24) auto_unroll_max_step=16"), std::string::npos) << text;
  EXPECT_NE(text.find("my_hint=free form text"), std::string::npos) << text;
  EXPECT_NE(text.find("vectorize j.1 (0,16)"), std::string::npos) << text;
  EXPECT_NE(text.find("threadIdx.x i (0,4)"), std::string::npos) << text;
}

// ---- malformed step lists ------------------------------------------------------------------

std::string readError(const std::string& text) {
  return errorOf([&] { stepsFromJson(json::parse(text)); });
}

TEST(StepJsonErrors, MissingFieldNamesTheStepAndTheField) {
  std::string e = readError(R"([{"step": "fuse", "stage": "C", "iterators": ["i", "j"]},
                                {"step": "split", "stage": "C", "factors": [4]}])");
  expectContains(e, "step 2");
  expectContains(e, "split");
  expectContains(e, "iterator");
}

TEST(StepJsonErrors, UnknownKindNamesTheStepAndTheKind) {
  std::string e = readError(R"([{"step": "compute_root", "stage": "C"}, {"step": "compute_root", "stage": "D"},
                                {"step": "splat", "stage": "C"}])");
  expectContains(e, "step 3");
  expectContains(e, "unknown step kind 'splat'");
}

TEST(StepJsonErrors, StepThatIsNotAnObject) {
  expectContains(readError(R"([{"step": "compute_root", "stage": "C"}, 42])"), "step 2: a step must be an object");
  expectContains(readError(R"([{"stage": "C"}])"), "step 1: a step must be an object with a \"step\" kind");
  expectContains(readError(R"([{"step": 7}])"), "step 1");
}

TEST(StepJsonErrors, WrongFieldTypes) {
  expectContains(readError(R"([{"step": "split", "stage": "C", "iterator": "i", "factors": "four"}])"), "step 1: malformed split step");
  expectContains(readError(R"([{"step": "reorder", "stage": "C", "order": [1, 2]}])"), "step 1: malformed reorder step");
  expectContains(readError(R"([{"step": "storage_align", "stage": "C", "axis": "i", "factor": "8", "offset": 0}])"),
                 "step 1: malformed storage_align step");
}

TEST(StepJsonErrors, UnknownAnnotationNamesTheStepAndTheAnnotation) {
  std::string e = readError(R"([{"step": "annotate", "stage": "C", "iterator": "i", "annotation": "parallel"},
                                {"step": "annotate", "stage": "C", "iterator": "j", "annotation": "vectorise"}])");
  expectContains(e, "step 2");
  expectContains(e, "'vectorise'");
  expectContains(e, "vectorize");  // the valid names are listed
}

TEST(StepJsonErrors, NotAList) {
  expectContains(readError(R"({"step": "split"})"), "a step list must be a JSON array");
}

TEST(StepJsonErrors, EmptyListIsTheUnscheduledState) {
  auto steps = stepsFromJson(json::parse("[]"));
  EXPECT_TRUE(steps.empty());
  EXPECT_EQ(stepsToJson(steps), json::array());
}

}  // namespace
