/// The transform steps of the schedule language. Each kind of step is one class holding all it
/// means: checking and applying itself to a State, printing itself as one line of schedule
/// code, and reading and writing itself as JSON. A schedule is a ComputeDAG plus a list of
/// steps; `replay` turns the list into a State, naming the failing step on bad input.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "schedule/State.h"

namespace tessel::schedule {

class Step {
 public:
  virtual ~Step() = default;
  virtual std::string kind() const = 0;
  /// Checks the step against the state and applies it; throws Error on an invalid step.
  virtual void apply(State& state) const = 0;
  /// One line of schedule code, e.g. `C.split(i, factors=[8, 4])`.
  virtual std::string print() const = 0;
  virtual nlohmann::json toJson() const = 0;
};
using StepPtr = std::shared_ptr<const Step>;

class SplitStep : public Step {
 public:
  /// factors: inner extents, outermost first (multi-level split); or nparts > 0 (one split).
  SplitStep(std::string stage, std::string iterator, std::vector<int64_t> factors, int64_t nparts = 0);
  std::string kind() const override { return "split"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage, iterator;
  std::vector<int64_t> factors;
  int64_t nparts;
};

/// Splits an iterator the way another stage's iterator was split by factors (read from the
/// state when the step applies, so it follows when that split's factors change): into `parts`
/// loops whose inner extents are the source's first parts - 2 factors and the product of the
/// rest. What a consumer's tiles need to line up with the tiles of a producer computed inside
/// them. The source iterator is named as it was split (usually a root axis).
class FollowSplitStep : public Step {
 public:
  FollowSplitStep(std::string stage, std::string iterator, std::string sourceStage, std::string sourceIterator, int64_t parts);
  std::string kind() const override { return "follow_split"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage, iterator, sourceStage, sourceIterator;
  int64_t parts;
};

/// Splits an iterator by the product of one level's factor of several multi-level splits (read
/// from the state when the step applies, so it follows when those factors change): the inner
/// loop gets the product of the sources' factors at `level` (0: each source's second-outermost
/// level), the outer loop the rest. A cooperative fetch into shared memory needs it: the copy's
/// fused loop split by as many threads as the block has, which is the product of the thread
/// level of every tiled axis (TVM's follow_fused_split with a factor). Each source is named as
/// it was split (stage, iterator).
class FollowFusedSplitStep : public Step {
 public:
  FollowFusedSplitStep(std::string stage, std::string iterator, std::vector<std::pair<std::string, std::string>> sources, int64_t level);
  std::string kind() const override { return "follow_fused_split"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage, iterator;
  std::vector<std::pair<std::string, std::string>> sources;
  int64_t level;
};

class FuseStep : public Step {
 public:
  FuseStep(std::string stage, std::vector<std::string> iterators);
  std::string kind() const override { return "fuse"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage;
  std::vector<std::string> iterators;
};

/// Puts the named leaf iterators in the given order, in the positions they occupy together.
class ReorderStep : public Step {
 public:
  ReorderStep(std::string stage, std::vector<std::string> order);
  std::string kind() const override { return "reorder"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage;
  std::vector<std::string> order;
};

class AnnotateStep : public Step {
 public:
  AnnotateStep(std::string stage, std::string iterator, Annotation annotation);
  std::string kind() const override { return "annotate"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage, iterator;
  Annotation annotation;
};

/// A hint on a loop: `auto_unroll_max_step` (unroll the loops inside while their total trip
/// count stays under the value), or a free-form key that codegen passes on as a comment.
class PragmaStep : public Step {
 public:
  PragmaStep(std::string stage, std::string iterator, std::string key, std::string value);
  std::string kind() const override { return "pragma"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage, iterator, key, value;
};

/// The key of the loop pragma a tensorize step leaves: lowering for a GPU replaces the loop
/// nest under it by the intrinsic (passes/TensorizeMma.h).
inline constexpr const char* kTensorizePragma = "tensorize";

/// Computes a product's innermost loops with a hardware intrinsic: `iterator` is a reduction
/// loop whose extent is a multiple of the intrinsic's (8 for the tensor-core
/// `mma_m16n8k8_*`, ir::WarpMmaKind), and the stage's only loops inside it are the spatial
/// loops of each thread's sub-tile. The loops stay in the state (bounds, attachment and
/// printing are unchanged); lowering checks that the nest is the product the intrinsic computes,
/// lane by lane, and replaces it, or says why not.
class TensorizeStep : public Step {
 public:
  TensorizeStep(std::string stage, std::string iterator, std::string intrinsic);
  std::string kind() const override { return "tensorize"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage, iterator, intrinsic;
};

/// TVM's `double_buffer` on a shared-memory copy computed at a serial loop (a GEMM's chunk
/// loop): the copy of iteration k + 1 is in flight while iteration k computes. Where the GPU
/// copies asynchronously (CUDA sm_80+, passes::pipelineAsyncCopies) the copy keeps `stages`
/// iterations in shared memory and the copies of iterations k + 1 to k + stages - 1 are in flight
/// (what CUTLASS calls a multistage mainloop); elsewhere it is staged through registers
/// (passes::prefetchDoubleBuffers), which holds two: each thread loads its share of the next chunk
/// before the computation and stores it into the one shared buffer after.
/// The pragma lowering puts around a double-buffered copy's loops (its value: the stage), and
/// inside it, where the stages are not 2, the pragma whose value is their number.
inline constexpr const char* kDoubleBufferPragma = "double_buffer";
inline constexpr const char* kBufferStagesPragma = "buffer_stages";
class DoubleBufferStep : public Step {
 public:
  static constexpr int kMaxStages = 8;
  explicit DoubleBufferStep(std::string stage, int stages = 2);
  std::string kind() const override { return "double_buffer"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage;
  int stages = 2;
};

class ComputeAtStep : public Step {
 public:
  ComputeAtStep(std::string stage, std::string target, std::string targetIterator);
  std::string kind() const override { return "compute_at"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage, target, targetIterator;
};

class ComputeInlineStep : public Step {
 public:
  explicit ComputeInlineStep(std::string stage);
  std::string kind() const override { return "compute_inline"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage;
};

class ComputeRootStep : public Step {
 public:
  explicit ComputeRootStep(std::string stage);
  std::string kind() const override { return "compute_root"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage;
};

/// Adds a stage `<tensor>.<scope>` that copies the tensor, and makes the readers read the copy.
class CacheReadStep : public Step {
 public:
  CacheReadStep(std::string stage, std::string scope, std::vector<std::string> readers);
  std::string kind() const override { return "cache_read"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage, scope;
  std::vector<std::string> readers;
};

/// Moves the computation of a stage into a new stage `<name>.<scope>`; the stage itself
/// becomes a copy of it. Must come before other steps on that stage.
class CacheWriteStep : public Step {
 public:
  CacheWriteStep(std::string stage, std::string scope);
  std::string kind() const override { return "cache_write"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage, scope;
};

/// Factors a reduction: the given reduce iterator (a root reduce axis, or one half of its
/// single split) becomes a data-parallel axis of a new stage `<name>.rf` holding partial
/// results, which the stage then reduces.
class RfactorStep : public Step {
 public:
  RfactorStep(std::string stage, std::string iterator);
  std::string kind() const override { return "rfactor"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage, iterator;
};

/// Pads the stride of a root axis of the stage's buffer so that stride % factor == offset.
class StorageAlignStep : public Step {
 public:
  StorageAlignStep(std::string stage, std::string axis, int64_t factor, int64_t offset);
  std::string kind() const override { return "storage_align"; }
  void apply(State& state) const override;
  std::string print() const override;
  nlohmann::json toJson() const override;
  static StepPtr fromJson(const nlohmann::json& j);
  std::string stage, axis;
  int64_t factor, offset;
};

StepPtr stepFromJson(const nlohmann::json& j);
nlohmann::json stepsToJson(const std::vector<StepPtr>& steps);
/// Reads a step list; an error names the position of the bad step.
std::vector<StepPtr> stepsFromJson(const nlohmann::json& j);
/// Applies the steps in order to a fresh state of the DAG; an error names the step's position
/// (1-based) and kind.
State replay(const te::ComputeDAG& dag, const std::vector<StepPtr>& steps);
/// All steps as schedule code, one per line.
std::string printSteps(const std::vector<StepPtr>& steps);

}  // namespace tessel::schedule
