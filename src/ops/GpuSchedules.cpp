#include "ops/GpuSchedules.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ops/OpTraits.h"
#include "ops/ScheduleRecorder.h"
#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;

namespace {

/// The operator class a rule names in its error: the traits table's tag where it has the
/// operation, else whether it is a reduction.
std::string operatorClass(const te::OperationNode& op) {
  const OpTraits& traits = traitsOf(op);
  if (!traits.tag.empty()) return traits.anchor ? traits.tag + ", the function's anchor class" : traits.tag;
  return op.reduction() ? "reduction" : "injective";
}

class GpuPlanner {
 public:
  GpuPlanner(const te::ComputeDAG& dag, const GpuScheduleOptions& options) : dag_(dag), options_(options), rec_(dag) {}

  std::vector<StepPtr> run() {
    inlineInjective();
    for (const std::string& out : dag_.outputNames()) bindOutput(out);
    attachReductions();
    return rec_.steps;
  }

 private:
  /// Applies one rule to a stage; its Error gets the stage and its operator class in front.
  template <class F>
  void rule(const std::string& what, const std::string& stage, F&& apply) {
    try {
      apply();
    } catch (const Error& e) {
      throw e.withContext(fmt::format("GPU default schedule: {} of stage '{}' ({})", what, stage, operatorClass(*dag_.op(stage))));
    }
  }

  // Rule 1. Readers first, so that a chain of injective stages folds into the last reader.
  void inlineInjective() {
    for (auto it = dag_.ops().rbegin(); it != dag_.ops().rend(); ++it) {
      const auto& op = **it;
      if (op.isPlaceholder() || op.reduction() || dag_.isOutput(op.name)) continue;
      rule("inlining", op.name, [&] { rec_.computeInline(op.name); });
    }
  }

  // Rules 2 and 3.
  void bindOutput(const std::string& out) {
    rule("thread binding", out, [&] {
      if (dag_.op(out)->reduction()) rec_.cacheWrite(out);  // the accumulation is now a non-output stage
      std::vector<std::string> loops = rec_.leaves(out);
      std::string fused = rec_.fuse(out, loops);
      int64_t threads = threadsFor(rec_.extent(out, fused));
      auto parts = rec_.split(out, fused, {threads});
      rec_.annotate(out, parts[0], Annotation::BlockX);
      rec_.annotate(out, parts[1], Annotation::ThreadX);
      threadLoop_[out] = parts[1];
    });
  }

  /// Threads per block for an output of `elements`: the option's, halved while the launch
  /// would have fewer than minBlocks blocks (not below minThreadsPerBlock), at most `elements`.
  int64_t threadsFor(int64_t elements) const {
    int64_t threads = options_.threadsPerBlock;
    auto blocks = [&](int64_t t) { return (elements + t - 1) / t; };
    while (threads / 2 >= std::max<int64_t>(1, options_.minThreadsPerBlock) && blocks(threads) < options_.minBlocks) threads /= 2;
    return std::clamp<int64_t>(threads, 1, elements);
  }

  /// The output a stage's value ends in: the output itself, or the output that every reader
  /// (through inlined stages and stages attached already) is computed in.
  std::string ownerOf(const std::string& stage) {
    if (threadLoop_.count(stage)) return stage;
    std::string owner;
    for (const std::string& reader : rec_.state.effectiveConsumers(stage)) {
      auto found = attachedTo_.find(reader);
      std::string o = found != attachedTo_.end() ? found->second : threadLoop_.count(reader) ? reader : "";
      if (o.empty() || (!owner.empty() && o != owner))
        fail("its readers are computed in different outputs ({} and {}): one thread cannot compute it for both",
             owner.empty() ? reader : owner, o.empty() ? reader : o);
      owner = o;
    }
    TESSEL_CHECK(!owner.empty(), "no output reads it");
    return owner;
  }

  // Rule 4. Readers first: a reduction read by another one (softmax's max, read by its sum)
  // attaches after its reader has its place.
  void attachReductions() {
    const auto& stages = rec_.state.stages();
    std::vector<std::string> pending;
    for (const auto& s : stages)
      if (!s.op->isPlaceholder() && s.op->reduction() && !threadLoop_.count(s.name())) pending.push_back(s.name());
    for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
      const std::string& r = *it;
      rule("computing at the thread loop", r, [&] {
        std::string owner = ownerOf(r);
        rec_.computeAt(r, owner, threadLoop_.at(owner));
        attachedTo_[r] = owner;
      });
    }
  }

  const te::ComputeDAG& dag_;
  GpuScheduleOptions options_;
  Recorder rec_;
  std::map<std::string, std::string> threadLoop_;  ///< output -> its threadIdx.x loop
  std::map<std::string, std::string> attachedTo_;  ///< reduction -> the output it is computed in
};

}  // namespace

GpuScheduleOptions gpuScheduleOptionsFor(int64_t maxThreadsPerBlock, int64_t multiProcessorCount, int64_t warpSize) {
  GpuScheduleOptions options;
  options.threadsPerBlock = std::min(options.threadsPerBlock, maxThreadsPerBlock);
  options.minBlocks = 2 * multiProcessorCount;
  options.minThreadsPerBlock = std::max<int64_t>(1, std::min(warpSize, options.threadsPerBlock));
  return options;
}

std::vector<StepPtr> defaultGpuSchedule(const te::ComputeDAG& dag, const GpuScheduleOptions& options) {
  TESSEL_CHECK(options.threadsPerBlock >= 1, "GPU default schedule: threads per block must be positive, got {}", options.threadsPerBlock);
  return GpuPlanner(dag, options).run();
}

}  // namespace tessel::ops
