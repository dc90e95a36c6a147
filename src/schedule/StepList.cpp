// Step lists as data: reading and writing JSON, replaying on a DAG, printing as code.
#include <fmt/format.h>

#include <functional>
#include <map>

#include "schedule/Steps.h"
#include "support/Error.h"

namespace tessel::schedule {

using nlohmann::json;

StepPtr stepFromJson(const json& j) {
  static const std::map<std::string, std::function<StepPtr(const json&)>> readers = {
      {"split", SplitStep::fromJson},           {"fuse", FuseStep::fromJson},
      {"reorder", ReorderStep::fromJson},       {"annotate", AnnotateStep::fromJson},
      {"pragma", PragmaStep::fromJson},         {"compute_at", ComputeAtStep::fromJson},
      {"compute_inline", ComputeInlineStep::fromJson}, {"compute_root", ComputeRootStep::fromJson},
      {"cache_read", CacheReadStep::fromJson},  {"cache_write", CacheWriteStep::fromJson},
      {"rfactor", RfactorStep::fromJson},       {"storage_align", StorageAlignStep::fromJson},
      {"follow_split", FollowSplitStep::fromJson}, {"follow_fused_split", FollowFusedSplitStep::fromJson},
      {"tensorize", TensorizeStep::fromJson},   {"double_buffer", DoubleBufferStep::fromJson},
  };
  TESSEL_CHECK(j.is_object() && j.contains("step") && j["step"].is_string(), "a step must be an object with a \"step\" kind");
  auto kind = j["step"].get<std::string>();
  auto it = readers.find(kind);
  TESSEL_CHECK(it != readers.end(), "unknown step kind '{}'", kind);
  try {
    return it->second(j);
  } catch (const json::exception& e) {
    fail("malformed {} step: {}", kind, e.what());
  } catch (const Error& e) {
    throw e.withContext(fmt::format("malformed {} step", kind));
  }
}

json stepsToJson(const std::vector<StepPtr>& steps) {
  json j = json::array();
  for (auto& s : steps) j.push_back(s->toJson());
  return j;
}

std::vector<StepPtr> stepsFromJson(const json& j) {
  TESSEL_CHECK(j.is_array(), "a step list must be a JSON array");
  std::vector<StepPtr> steps;
  for (size_t i = 0; i < j.size(); ++i) {
    try {
      steps.push_back(stepFromJson(j[i]));
    } catch (const Error& e) {
      throw e.withContext(fmt::format("step {}", i + 1));
    }
  }
  return steps;
}

namespace {

State replaySteps(const te::ComputeDAG& dag, const std::vector<StepPtr>& steps, bool deferBounds) {
  State state(dag);
  state.inferBounds();
  state.setBoundsDeferred(deferBounds);
  for (size_t i = 0; i < steps.size(); ++i) {
    try {
      steps[i]->apply(state);
    } catch (const Error& e) {
      throw e.withContext(fmt::format("step {} ({})", i + 1, steps[i]->kind()));
    }
  }
  state.setBoundsDeferred(false);
  return state;
}

}  // namespace

State replay(const te::ComputeDAG& dag, const std::vector<StepPtr>& steps) {
  // Bounds are inferred once at the end (and where a step reads extents), not after every
  // step: the auto-scheduler replays thousands of lists of dozens of steps per round. When
  // that last inference fails, the list is replayed again step by step to name the step at
  // fault (a compute_at that makes a vectorized loop's extent vary, a split past 2^48
  // iterations).
  try {
    return replaySteps(dag, steps, true);
  } catch (const Error&) {
    return replaySteps(dag, steps, false);
  }
}

std::string printSteps(const std::vector<StepPtr>& steps) {
  std::string out;
  for (auto& s : steps) out += s->print() + "\n";
  return out;
}

}  // namespace tessel::schedule
