/// Test support: example DAGs and step lists shared by the schedule tests. Together the lists
/// use every kind of step, so they serve both the JSON round trips and the numerical checks.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "schedule/Steps.h"

namespace tessel::schedule::examples {

using Factors = std::vector<int64_t>;
using Names = std::vector<std::string>;

template <class T, class... Args>
StepPtr step(Args&&... args) {
  return std::make_shared<T>(std::forward<Args>(args)...);
}

/// A dense layer with relu: C = A x B, D = max(C, 0). Tiled, cached, attached, annotated:
/// covers split (factors, multi-level, nparts), follow_split, follow_fused_split, fuse, reorder, every annotation,
/// both kinds of pragma, compute_at, cache_read, cache_write and storage_align.
inline te::ComputeDAG denseRelu() {
  auto A = te::placeholder({64, 32}, DataType::float32(), "A");
  auto B = te::placeholder({32, 48}, DataType::float32(), "B");
  auto k = te::reduceAxis(32, "k");
  auto C = te::compute({64, 48}, [&](const std::vector<te::Var>& i) { return te::sum(A(i[0], k.var) * B(k.var, i[1]), {k}); }, "C",
                       "dense", {"i", "j"});
  auto D = te::compute({64, 48}, [&](const std::vector<te::Var>& i) { return ir::max(C(i[0], i[1]), ir::Expr(0.0f)); }, "D",
                       "relu", {"i", "j"});
  return te::ComputeDAG({D}, {A, B});
}

inline std::vector<StepPtr> tiledSteps() {
  return {
      step<CacheWriteStep>("C", "local"),
      step<SplitStep>("D", "i", Factors{2, 4}),
      step<SplitStep>("D", "j", Factors{}, 3),
      step<ReorderStep>("D", Names{"i.0", "j.0", "i.1", "i.2", "j.1"}),
      step<FuseStep>("D", Names{"i.0", "j.0"}),
      step<AnnotateStep>("D", "i.0@j.0", Annotation::Parallel),
      step<AnnotateStep>("D", "j.1", Annotation::Vectorize),
      step<AnnotateStep>("D", "i.2", Annotation::Unroll),
      step<PragmaStep>("D", "i.0@j.0", "auto_unroll_max_step", "16"),
      step<PragmaStep>("D", "i.1", "my_hint", "free form text"),
      step<ComputeAtStep>("C", "D", "i.1"),
      step<ComputeAtStep>("C.local", "D", "i.1"),
      step<CacheReadStep>("B", "shared", Names{"C.local"}),
      step<ComputeAtStep>("B.shared", "C.local", "k"),
      step<StorageAlignStep>("B.shared", "ax0", 8, 1),
      // GPU annotations are declared now (a CPU build runs them as plain loops).
      step<AnnotateStep>("C", "i", Annotation::ThreadX),
      step<AnnotateStep>("C", "j", Annotation::VThread),
      step<AnnotateStep>("C.local", "i", Annotation::BlockX),
      step<AnnotateStep>("C.local", "j", Annotation::ThreadY),
      step<AnnotateStep>("B.shared", "ax0", Annotation::BlockY),
      step<AnnotateStep>("B.shared", "ax1", Annotation::ThreadZ),
      step<FollowSplitStep>("C.local", "k", "D", "i", 2),
      // k.1 (8 iterations) split by D.i's inner factor (4), as a cooperative fetch follows the threads.
      step<FollowFusedSplitStep>("C.local", "k.1", std::vector<std::pair<std::string, std::string>>{{"D", "i"}}, 1),
  };
}

/// conv2d + bias + relu: compute_inline, rfactor (of the outer part of a split), compute_at
/// into the rfactor stage, compute_root, storage_align of an attached stage, BlockZ and None.
inline std::vector<StepPtr> reductionSteps() {
  return {
      step<ComputeInlineStep>("T_add"),
      step<SplitStep>("conv2d_nchw", "rc", Factors{2}),
      step<RfactorStep>("conv2d_nchw", "rc.0"),
      step<ComputeAtStep>("pad_temp", "conv2d_nchw.rf", "yy"),
      step<ComputeAtStep>("conv2d_nchw", "T_relu", "ax1"),
      step<ComputeRootStep>("conv2d_nchw"),
      step<StorageAlignStep>("pad_temp", "i2", 4, 1),
      step<AnnotateStep>("T_relu", "ax0", Annotation::BlockZ),
      step<AnnotateStep>("T_relu", "ax0", Annotation::None),
      step<SplitStep>("conv2d_nchw.rf", "xx", Factors{4}),
      step<AnnotateStep>("conv2d_nchw.rf", "xx.1", Annotation::Vectorize),
      step<SplitStep>("T_relu", "ax3", Factors{4}),
      step<AnnotateStep>("T_relu", "ax3.1", Annotation::Unroll),
  };
}

}  // namespace tessel::schedule::examples
