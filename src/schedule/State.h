/// The state of a schedule: for every stage (one per operation of the, possibly rewritten,
/// compute DAG) its loop iterators in order (name, extent, annotation), how they derive from
/// the operation's axes (split and fuse relations) and where the stage is computed (at the
/// root, inlined, or at a loop of another stage). Transform steps (Steps.h) change a State;
/// `toString` prints the loop nest the way TVM's auto-scheduler prints states.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "te/ComputeDAG.h"

namespace tessel::schedule {

enum class IteratorKind { Spatial, Reduce };

enum class Annotation { None, Parallel, Vectorize, Unroll, VThread, BlockX, BlockY, BlockZ, ThreadX, ThreadY, ThreadZ };
/// The widest vectorized loop a schedule may ask for (a longer one is split first).
inline constexpr int64_t kMaxVectorLanes = 64;
const char* annotationName(Annotation a);
Annotation parseAnnotation(const std::string& text);  ///< throws Error listing the valid names

struct Iterator {
  int id = 0;
  std::string name;
  int64_t extent = 0;
  IteratorKind kind = IteratorKind::Spatial;
  Annotation annotation = Annotation::None;
  bool exactExtent = true;  ///< false: the loop runs up to `extent` but is guarded per outer iteration
  std::vector<std::pair<std::string, std::string>> pragmas;
};

/// How iterators derive from each other. Split: parent = outer * innerExtent + inner.
/// Fuse: fused = outer * innerExtent + inner.
struct IterRelation {
  enum class Kind { Split, Fuse };
  Kind kind;
  int parent = -1, outer = -1, inner = -1, fused = -1;
  int64_t factor = 0;  ///< split: the inner extent, or 0 when split by nparts
  int64_t nparts = 0;  ///< split by nparts: the outer extent
};

enum class AttachKind { Root, Inline, At };

struct Stage {
  te::Operation op;
  std::vector<Iterator> iterators;  ///< every iterator ever made, indexed by id; roots first
  int rootCount = 0;                ///< op axes, then reduce axes
  std::vector<int> leaves;          ///< current loop order, outermost first
  std::vector<IterRelation> relations;
  AttachKind attach = AttachKind::Root;
  std::string attachStage;
  int attachIterator = -1;
  std::map<int, std::pair<int64_t, int64_t>> storageAlign;  ///< root axis -> (factor, offset)
  /// The memory scope a cache stage was made for ("shared", "local", ...); empty otherwise.
  /// On a GPU an attached "shared" stage lives in the block's shared memory.
  std::string memoryScope;
  /// A shared copy whose next iteration is loaded while the current one computes (double_buffer).
  bool doubleBuffer = false;
  /// How many iterations' copies such a copy keeps in shared memory (double_buffer's stages): 2
  /// is one being computed on and one in flight; more need asynchronous copies.
  int bufferStages = 2;

  const std::string& name() const { return op->name; }
  bool isPlaceholder() const { return op->isPlaceholder(); }
  const Iterator& iterator(int id) const { return iterators.at(size_t(id)); }
  Iterator& iterator(int id) { return iterators.at(size_t(id)); }
  /// The leaf iterator with this name; throws Error naming the stage and listing the leaves.
  int leafByName(const std::string& name) const;
  int leafPosition(int id) const;  ///< -1 when not a leaf
};

/// A fresh stage for an operation: one iterator per axis and reduce axis, in order.
Stage makeStage(const te::Operation& op);

class State {
 public:
  State() = default;
  explicit State(const te::ComputeDAG& dag);

  const te::ComputeDAG& dag() const { return dag_; }
  const std::vector<Stage>& stages() const { return stages_; }
  std::vector<Stage>& stages() { return stages_; }
  int stageIndex(const std::string& name) const;  ///< -1 when absent
  Stage& stage(const std::string& name);          ///< throws Error listing the stages
  const Stage& stage(const std::string& name) const;
  bool isOutput(const std::string& name) const { return dag_.isOutput(name); }
  /// Names of the stages that read `name` in their current bodies.
  std::vector<std::string> consumers(const std::string& name) const;
  /// The stages that read `name` through inlined stages (what compute_at may target), each
  /// once, in stage order.
  std::vector<std::string> effectiveConsumers(const std::string& name) const;
  /// True if `stage` is `ancestor` or computed (transitively) inside one of its loops.
  bool isWithin(const std::string& stage, const std::string& ancestor) const;
  /// Inserts a stage before position `index`.
  void insertStage(int index, Stage stage);
  /// Recomputes every iterator extent from the region each stage must compute; while bound
  /// inference is deferred, only notes that the extents are stale.
  void inferBounds();
  /// Deferred bound inference (replay): the steps of a list note that bounds are stale instead
  /// of recomputing them after every step, and a step that reads extents calls ensureBounds()
  /// first. Turning deferral off infers the bounds once if they are stale.
  void setBoundsDeferred(bool deferred);
  /// Infers the bounds now if a deferred step left them stale.
  void ensureBounds();
  bool boundsDeferred() const { return boundsDeferred_; }
  /// Throws an Error unless a loop of `stage` may be vectorized as its bounds now stand: a
  /// constant extent of at most kMaxVectorLanes.
  static void checkVectorizable(const Stage& stage, const Iterator& it);

  std::string toString() const;

 private:
  void inferBoundsNow();

  te::ComputeDAG dag_;
  std::vector<Stage> stages_;
  bool boundsDeferred_ = false, boundsStale_ = false;
};

}  // namespace tessel::schedule
