#include "tune/autotvm/LoopSummary.h"

#include <algorithm>

#include "ir/Expr.h"

namespace tessel::tune::autotvm {

using schedule::AttachKind;
using schedule::IterRelation;
using schedule::Stage;
using schedule::State;

double StageSummary::iterations() const {
  double product = 1;
  for (const SummaryLoop& loop : loops) product *= double(loop.extent);
  return product;
}

namespace {

using Coefficients = std::vector<int64_t>;  // one per root axis of a stage

/// The root axes of a stage's op as variables: data-parallel axes, then reduce axes (the
/// order of Stage::iterators' roots).
std::vector<const ir::VarNode*> rootVars(const Stage& stage) {
  std::vector<const ir::VarNode*> vars;
  for (const ir::IterVar& axis : stage.op->axes) vars.push_back(axis.var.node());
  if (const ir::ReduceNode* reduce = stage.op->reduction())
    for (const ir::IterVar& axis : reduce->axes) vars.push_back(axis.var.node());
  return vars;
}

/// Adds scale * (the coefficient of each root variable in `e`) to `out`. Non-linear parts
/// count by their local slope: x / c by coefficient / c, x % c like x, min/max and selects by
/// their first operand; anything else contributes nothing.
void linearCoefficients(const ir::Expr& e, const std::vector<const ir::VarNode*>& roots, int64_t scale, Coefficients& out) {
  using K = ir::ExprKind;
  if (!e.defined() || scale == 0) return;
  switch (e.kind()) {
    case K::Var: {
      auto it = std::find(roots.begin(), roots.end(), static_cast<const ir::VarNode*>(e.get()));
      if (it != roots.end()) out[size_t(it - roots.begin())] += scale;
      return;
    }
    case K::Add:
    case K::Sub: {
      auto* node = static_cast<const ir::BinaryNode*>(e.get());
      linearCoefficients(node->a, roots, scale, out);
      linearCoefficients(node->b, roots, e.kind() == K::Add ? scale : -scale, out);
      return;
    }
    case K::Mul: {
      auto* node = static_cast<const ir::BinaryNode*>(e.get());
      if (const int64_t* c = ir::asConstInt(node->b)) linearCoefficients(node->a, roots, scale * *c, out);
      else if (const int64_t* c2 = ir::asConstInt(node->a)) linearCoefficients(node->b, roots, scale * *c2, out);
      return;
    }
    case K::Div:
    case K::FloorDiv: {
      auto* node = static_cast<const ir::BinaryNode*>(e.get());
      const int64_t* c = ir::asConstInt(node->b);
      if (!c || *c == 0) return;
      Coefficients inner(out.size(), 0);
      linearCoefficients(node->a, roots, scale, inner);
      for (size_t i = 0; i < out.size(); ++i) out[i] += inner[i] / *c;
      return;
    }
    case K::Mod:
    case K::FloorMod:
    case K::Min:
    case K::Max:
      linearCoefficients(static_cast<const ir::BinaryNode*>(e.get())->a, roots, scale, out);
      return;
    case K::Cast:
      linearCoefficients(static_cast<const ir::CastNode*>(e.get())->value, roots, scale, out);
      return;
    case K::Select:
    case K::IfThenElse:
      linearCoefficients(static_cast<const ir::SelectNode*>(e.get())->trueValue, roots, scale, out);
      return;
    default:
      return;
  }
}

/// For each index dimension of an access, its coefficients over the stage's roots.
std::vector<Coefficients> indexCoefficients(const std::vector<ir::Expr>& indices, const std::vector<const ir::VarNode*>& roots) {
  std::vector<Coefficients> dims;
  for (const ir::Expr& index : indices) {
    dims.emplace_back(roots.size(), 0);
    linearCoefficients(index, roots, 1, dims.back());
  }
  return dims;
}

/// Every iterator's coefficients over the roots: a split's outer part steps the parent by the
/// inner extent, its inner part by one; a fused iterator steps like its inner component.
std::vector<Coefficients> iteratorCoefficients(const Stage& stage) {
  size_t roots = size_t(stage.rootCount);
  std::vector<Coefficients> coefficients(stage.iterators.size(), Coefficients(roots, 0));
  for (size_t r = 0; r < roots && r < coefficients.size(); ++r) coefficients[r][r] = 1;
  for (const IterRelation& relation : stage.relations) {
    if (relation.kind == IterRelation::Kind::Split) {
      const Coefficients& parent = coefficients.at(size_t(relation.parent));
      int64_t innerExtent = stage.iterator(relation.inner).extent;
      for (size_t r = 0; r < roots; ++r) {
        coefficients.at(size_t(relation.outer))[r] = parent[r] * innerExtent;
        coefficients.at(size_t(relation.inner))[r] = parent[r];
      }
    } else {
      coefficients.at(size_t(relation.fused)) = coefficients.at(size_t(relation.inner));
    }
  }
  return coefficients;
}

struct PathLoop {
  SummaryLoop loop;
  Coefficients roots;  // over the roots of the stage whose path this is
};

/// The loops around and including leaf position `lastLeaf` of a stage: those of the stage it
/// is computed at (mapped onto this stage's roots through the consumer's read of it), then its
/// own leaves.
std::vector<PathLoop> loopPath(const State& state, int stageIndex, int lastLeaf, int depth) {
  const Stage& stage = state.stages().at(size_t(stageIndex));
  std::vector<PathLoop> path;
  if (stage.attach == AttachKind::At && depth < 16) {
    int targetIndex = state.stageIndex(stage.attachStage);
    if (targetIndex >= 0) {
      const Stage& target = state.stages()[size_t(targetIndex)];
      std::vector<PathLoop> outer = loopPath(state, targetIndex, target.leafPosition(stage.attachIterator), depth + 1);
      // How the consumer's roots move this stage's data-parallel roots: the consumer's read of it.
      std::vector<Coefficients> map;
      for (const te::TensorAccess& access : te::ComputeDAG::accesses(*target.op))
        if (access.producer == stage.name()) {
          map = indexCoefficients(access.indices, rootVars(target));
          break;
        }
      for (PathLoop& loop : outer) {
        Coefficients mine(size_t(stage.rootCount), 0);
        for (size_t d = 0; d < map.size() && d < mine.size(); ++d)
          for (size_t r = 0; r < map[d].size() && r < loop.roots.size(); ++r) mine[d] += loop.roots[r] * map[d][r];
        path.push_back({loop.loop, std::move(mine)});
      }
    }
  }
  std::vector<Coefficients> coefficients = iteratorCoefficients(stage);
  for (int position = 0; position <= lastLeaf && position < int(stage.leaves.size()); ++position) {
    const schedule::Iterator& it = stage.iterator(stage.leaves[size_t(position)]);
    path.push_back({{it.extent, it.annotation, it.kind == schedule::IteratorKind::Reduce}, coefficients.at(size_t(it.id))});
  }
  return path;
}

SummaryAccess makeAccess(const std::string& tensor, bool isStore, const te::OperationNode& producer,
                         const std::vector<Coefficients>& dims, const std::vector<PathLoop>& path) {
  SummaryAccess access;
  access.tensor = tensor;
  access.isStore = isStore;
  access.elementBytes = std::max<int64_t>(1, (int64_t(producer.dtype.bits) * producer.dtype.lanes + 7) / 8);
  access.shape = producer.shape;
  access.flatStrides.assign(access.shape.size(), 1);
  for (int d = int(access.shape.size()) - 2; d >= 0; --d)
    access.flatStrides[size_t(d)] = access.flatStrides[size_t(d) + 1] * access.shape[size_t(d) + 1];
  for (const PathLoop& loop : path) {
    std::vector<int64_t> perDim(dims.size(), 0);
    for (size_t d = 0; d < dims.size(); ++d)
      for (size_t r = 0; r < dims[d].size() && r < loop.roots.size(); ++r) perDim[d] += loop.roots[r] * dims[d][r];
    access.coefficients.push_back(std::move(perDim));
  }
  return access;
}

}  // namespace

std::vector<StageSummary> summarizeLoops(const State& state) {
  std::vector<StageSummary> out;
  for (int s = 0; s < int(state.stages().size()); ++s) {
    const Stage& stage = state.stages()[size_t(s)];
    if (stage.isPlaceholder() || stage.attach == AttachKind::Inline) continue;
    std::vector<PathLoop> path = loopPath(state, s, int(stage.leaves.size()) - 1, 0);
    StageSummary summary;
    summary.name = stage.name();
    for (const PathLoop& loop : path) summary.loops.push_back(loop.loop);

    std::vector<const ir::VarNode*> roots = rootVars(stage);
    std::vector<Coefficients> storeDims;
    for (size_t d = 0; d < stage.op->axes.size(); ++d) {
      storeDims.emplace_back(roots.size(), 0);
      storeDims.back()[d] = 1;
    }
    summary.accesses.push_back(makeAccess(stage.name(), true, *stage.op, storeDims, path));
    for (const te::TensorAccess& read : te::ComputeDAG::accesses(*stage.op)) {
      bool seen = std::any_of(summary.accesses.begin(), summary.accesses.end(),
                              [&](const SummaryAccess& a) { return a.tensor == read.producer; });
      int producer = state.stageIndex(read.producer);
      if (seen || producer < 0) continue;
      summary.accesses.push_back(makeAccess(read.producer, false, *state.stages()[size_t(producer)].op,
                                            indexCoefficients(read.indices, roots), path));
    }
    out.push_back(std::move(summary));
  }
  return out;
}

}  // namespace tessel::tune::autotvm
