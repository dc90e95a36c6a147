#include "ops/Schedules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "ir/Mutator.h"
#include "ops/OpTraits.h"
#include "ops/ScheduleRecorder.h"
#include "ir/Simplify.h"
#include "schedule/BoundInference.h"
#include "schedule/LoopNest.h"
#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;
using ir::Expr;

namespace {

// ---- analysis of the DAG -----------------------------------------------------------------------

bool isPadding(const te::OperationNode& op) { return traitsOf(op).kind == OpKind::Padding && !op.reduction(); }

int64_t elementCount(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

/// Every read in a stage's body after the inlined stages are substituted (as lowering sees it).
std::vector<te::TensorAccess> inlinedReads(const State& state, const std::string& name) {
  te::OperationNode op = *state.stage(name).op;
  op.body = schedule::inlinedBody(state, name);
  return te::ComputeDAG::accesses(op);
}

/// The coefficient c of `var` when e = c * var + (terms without var); nullopt when e is not linear in it.
std::optional<int64_t> coefficientOf(const Expr& e, const ir::VarNode* var) {
  if (!ir::usesVar(e, var)) return 0;
  auto at = [&](int64_t v) { return ir::simplify(ir::substitute(e, {{var, Expr(v)}})); };
  Expr zero = at(0);
  Expr slope = ir::simplify(at(1) - zero), twice = ir::simplify(at(2) - zero);
  auto c = ir::asConstInt(slope);
  auto c2 = ir::asConstInt(twice);
  if (!c || !c2 || *c2 != 2 * *c) return std::nullopt;
  return *c;
}

/// True if every read of the stage is contiguous (stride 1 in its last index, no other index
/// moving) or invariant along `var` (one of its spatial or reduction axes): vector loads, not
/// gathers.
bool readsContiguously(const State& state, const std::string& name, const ir::VarNode* var) {
  for (auto& read : inlinedReads(state, name)) {
    for (size_t d = 0; d < read.indices.size(); ++d) {
      auto c = coefficientOf(read.indices[d], var);
      if (!c) return false;
      bool last = d + 1 == read.indices.size();
      if (*c != 0 && !(last && *c == 1)) return false;
    }
  }
  return true;
}

/// True if every read of `producer` in the consumer's body uses the consumer's first
/// `producer rank` axis variables as its indices, in order: an element-wise (identity) or
/// row-wise (prefix) dependence, so the producer can be computed inside the consumer's loops.
bool readsAlignedPrefix(const State& state, const std::string& consumer, const std::string& producer) {
  const auto& c = *state.stage(consumer).op;
  const auto& p = *state.stage(producer).op;
  if (p.axes.size() > c.axes.size()) return false;
  for (size_t d = 0; d < p.axes.size(); ++d)
    if (p.shape[d] != c.shape[d]) return false;
  bool any = false;
  for (auto& read : inlinedReads(state, consumer)) {
    if (read.producer != producer) continue;
    any = true;
    for (size_t d = 0; d < read.indices.size(); ++d) {
      // A unit axis is read at index 0 once broadcasting has simplified it away (batch 1).
      const int64_t* constant = ir::asConstInt(read.indices[d]);
      if (constant && *constant == 0 && p.shape[d] == 1) continue;
      auto v = read.indices[d].as<ir::VarNode>();
      if (v != c.axes[d].var.node()) return false;
    }
  }
  return any;
}

/// True if `e` calls a function that costs tens of operations per element (exp, log, erf,
/// tanh, sigmoid, pow).
bool callsTranscendental(const Expr& e) {
  if (auto c = e.as<ir::CallNode>()) {
    switch (c->op) {
      case ir::Intrinsic::Exp:
      case ir::Intrinsic::Log:
      case ir::Intrinsic::Erf:
      case ir::Intrinsic::Tanh:
      case ir::Intrinsic::Sigmoid:
      case ir::Intrinsic::Pow: return true;
      default: break;
    }
  }
  bool found = false;
  ir::forEachChild(e, [&](const Expr& child) { found = found || callsTranscendental(child); });
  return found;
}

/// The convolution, dense or matmul with the most FLOPs.
std::optional<std::string> findAnchorName(const te::ComputeDAG& dag) {
  std::optional<std::string> best;
  double bestFlops = -1;
  for (auto& op : dag.ops()) {
    if (op->isPlaceholder() || !op->reduction() || !traitsOf(*op).anchor) continue;
    double flops = te::operationFlops(*op);
    if (flops > bestFlops) {
      best = op->name;
      bestFlops = flops;
    }
  }
  return best;
}

// ---- choosing tile sizes -----------------------------------------------------------------------

/// What one remainder element of a register tile costs, in vector operations of the main part
/// (measured on a 28-wide NCHW convolution: its 4-column scalar tail took longer than the 24
/// vectorized columns).
constexpr int64_t kTileTailCost = 8;

int64_t maxLanesFor(DataType type, const CpuScheduleOptions& options) {
  int64_t lanes = std::max(1, options.machine.vectorBytes / type.storageBytes());
  lanes = std::min<int64_t>(lanes, 64);
  int64_t power = 1;
  while (power * 2 <= lanes) power *= 2;
  return power;
}

struct VectorTile {
  int64_t lanes = 1;
  int64_t vectors = 1;
  int64_t size() const { return lanes * vectors; }
};

/// Lanes (a power of two from 2 to maxLanes) and vectors per tile for an axis of `extent`:
/// the fewest vector operations plus remainder elements, each costing `tailCost` (a split that
/// does not divide leaves a scalar tail, and in a register tile a much slower one: guarded,
/// accumulating in memory); ties go to the larger tile, which reuses more per load.
VectorTile chooseVectorTile(int64_t extent, int64_t maxLanes, int64_t maxVectors, int64_t tailCost = 1) {
  VectorTile best;
  int64_t bestCost = extent * tailCost;
  for (int64_t lanes = maxLanes; lanes >= 2; lanes /= 2) {
    for (int64_t vectors = 1; vectors <= maxVectors; ++vectors) {
      int64_t tile = lanes * vectors;
      if (tile > extent) break;
      int64_t cost = (extent / tile) * vectors + (extent % tile) * tailCost;
      if (cost < bestCost || (cost == bestCost && tile > best.size())) {
        best = {lanes, vectors};
        bestCost = cost;
      }
    }
  }
  return best;
}

/// The register tile along the broadcast axis: the whole extent when it fits, else the largest
/// size from `limit` down to `smallest` that divides it, else `limit` with a tail, or with
/// `evenTiles` the fewest tiles of at most `limit` made even (14 by 6: 5, whose tail is 4, not 2).
int64_t chooseRowTile(int64_t extent, int64_t limit, int64_t smallest, bool evenTiles) {
  if (extent <= limit) return extent;
  for (int64_t t = limit; t >= smallest; --t)
    if (extent % t == 0) return t;
  if (!evenTiles) return limit;
  const int64_t tiles = (extent + limit - 1) / limit;
  return (extent + tiles - 1) / tiles;
}

// ---- the generic loop schedule -----------------------------------------------------------------

struct LoopPlan {
  std::string fusedLoop;       ///< the loop covering the fused leading axes ("" if none)
  std::string innermostOuter;  ///< the last loop outside the reduction and vector loops ("" if none)
};

class Planner {
 public:
  Planner(const te::ComputeDAG& d, const CpuScheduleOptions& o) : dag(d), options(o), rec(d) {}

  std::vector<StepPtr> run(bool anchorRules, schedule::State* finalState = nullptr) {
    if (anchorRules) findDepthwiseInput();
    inlineInjective();
    if (anchorRules)
      if (auto anchor = findAnchor()) {
        scheduleAnchor(*anchor);
        if (traitsOf(*dag.op(*anchor)).kind == OpKind::WinogradGemm) scheduleWinogradTransforms();
      }
    planReductions();
    scheduleRootStages();
    // Lowering re-checks what the steps cannot (vector extents after attachment): fail here,
    // where a fallback is still possible, rather than when the network is built.
    if (options.checkLowering) buildLoopNest(rec.state, "default_schedule_check");
    if (finalState) *finalState = rec.state;
    return rec.steps;
  }

 private:
  // Rule 1: inline element-wise and injective stages. Padding read by a convolution is inlined
  // where OpTraits::inlinePaddingByDefault says so (NHWC and depthwise: lowering skips the taps
  // on the padding); elsewhere (NCHW, whose lanes run along the width, so that the border test
  // would differ per lane) it stays a padded copy at the root. Pooling reads whole vectors (or
  // is scalar anyway): inlined, it saves a pass.
  void inlineInjective() {
    for (auto& op : dag.ops()) {
      if (op->isPlaceholder() || dag.isOutput(op->name) || op->reduction()) continue;
      if (isWinogradTransform(*op) || op->name == depthwiseTile) continue;
      const OpTraits* padded = nullptr;  // the anchor this stage pads
      if (isPadding(*op))
        for (auto& c : rec.state.consumers(op->name))
          if (traitsOf(*rec.stage(c).op).anchor) padded = &traitsOf(*rec.stage(c).op);
      if (!padded) {
        if (sharedByRowReduction(*op)) {
          rowShared.insert(op->name);
          continue;
        }
        rec.computeInline(op->name);
        continue;
      }
      const auto& forced = options.anchorTile;
      bool inlinePadding = forced && forced->inlinePadding >= 0 ? forced->inlinePadding == 1 : padded->inlinePaddingByDefault;
      paddingInlined = inlinePadding ? 1 : 0;
      if (inlinePadding) rec.computeInline(op->name);
    }
  }

  std::optional<std::string> findAnchor() const { return findAnchorName(dag); }

  // Rule 1b: an element-wise stage with a transcendental call that a reduction and another
  // stage both read (softmax's exp(x - max), read by the sum and by the output) is computed
  // once per row inside the output's loops (rule 3c) instead of inlined into both: inlined,
  // each exp ran twice, and in the sum as a scalar chain where the row is not a multiple of
  // the lanes (ViT's 197 tokens: 1.6 ms per softmax at 2 threads).
  bool sharedByRowReduction(const te::OperationNode& op) const {
    if (op.reduction() || !callsTranscendental(op.body)) return false;
    auto consumers = rec.state.effectiveConsumers(op.name);
    if (consumers.size() < 2) return false;
    for (const auto& c : consumers)
      if (rec.stage(c).op->reduction()) return true;
    return false;
  }

  // A separable block fused into one function: see fusedDepthwiseOf.
  void findDepthwiseInput() {
    if (auto fused = fusedDepthwiseOf(dag)) {
      depthwiseConv = fused->convolution;
      depthwiseTile = fused->tile;
    }
  }

  // Rule 2: the anchor's register tile, with its element-wise epilogue fused.
  void scheduleAnchor(const std::string& anchor) {
    const auto& op = *dag.op(anchor);
    // The stage written to memory: the epilogue's output when the anchor's only (effective)
    // reader is an output that reads it element by element; else the anchor itself.
    std::string out = anchor;
    auto consumers = rec.state.effectiveConsumers(anchor);
    if (consumers.size() == 1 && !dag.isOutput(anchor)) {
      const std::string& c = *consumers.begin();
      const auto& cop = *rec.stage(c).op;
      if (dag.isOutput(c) && !cop.reduction() && cop.shape == op.shape && readsAlignedPrefix(rec.state, c, anchor)) out = c;
    }
    if (traitsOf(op).kind == OpKind::Dense) {
      scheduleDense(anchor, out);
    } else {
      scheduleRegisterTile(anchor, out);
    }
  }

  struct TileRoles {
    int vectorAxis, rowAxis;
  };

  static bool isWinogradTransform(const te::OperationNode& op) { return traitsOf(op).winogradTransform; }

  std::optional<std::string> stageOfKind(OpKind kind) const {
    for (auto& op : dag.ops())
      if (traitsOf(*op).kind == kind) return op->name;
    return std::nullopt;
  }

  /// Appends channel axis `axis` (of `extent`) of `stage` to the outer loops, split by `lanes`
  /// when a vector fits; returns the lane loop to vectorize ("" when it is not split).
  std::string splitLanes(const std::string& stage, const std::string& axis, int64_t extent, int64_t lanes,
                         std::vector<std::string>& outer, std::vector<bool>& exact) {
    if (lanes < 2) {
      outer.push_back(axis);
      exact.push_back(true);
      return "";
    }
    auto parts = rec.split(stage, axis, {lanes});
    outer.push_back(parts[0]);
    exact.push_back(extent % lanes == 0);
    return parts[1];
  }

  /// A transform's first pass [row, column, tile, channel] computed at `loop` of the second
  /// pass: its row and column loops unrolled (each picks a matrix row at compile time), the
  /// channels vectorized.
  void computeRowPassAt(const std::string& pass, const std::string& target, const std::string& loop, bool vectorize) {
    rec.computeAt(pass, target, loop);
    auto local = rec.leaves(pass);
    rec.annotate(pass, local[0], Annotation::Unroll);
    rec.annotate(pass, local[1], Annotation::Unroll);
    if (vectorize) rec.annotate(pass, local[3], Annotation::Vectorize);
  }

  // Rule 2b: Winograd's transforms around its GEMM (the anchor). The input transform runs at the
  // root, parallel over tiles and vectorized over channels, its row pass computed per tile and
  // channel vector; the output transform runs inside the output's loops over m x m tiles, its
  // row pass computed per tile and channel vector. The transform loops are unrolled, so that
  // each picks its matrix row at compile time.
  void scheduleWinogradTransforms() {
    auto rows = stageOfKind(OpKind::WinogradInputRows), input = stageOfKind(OpKind::WinogradInput),
         outputRows = stageOfKind(OpKind::WinogradOutputRows);
    TESSEL_CHECK(rows && input && outputRows, "winograd schedule: the DAG lacks its transform stages");
    const auto& inOp = *dag.op(*input);
    int64_t lanes = chooseVectorTile(inOp.shape[3], maxLanesFor(inOp.dtype, options), 1).lanes;
    {
      auto axes = rec.leaves(*input);  // eps, nu, p, ci
      std::vector<std::string> outer{axes[2]}, inner{axes[0], axes[1]};
      std::vector<bool> exact{true};
      std::string vector = splitLanes(*input, axes[3], inOp.shape[3], lanes, outer, exact);
      std::vector<std::string> order = outer;
      order.insert(order.end(), inner.begin(), inner.end());
      if (!vector.empty()) order.push_back(vector);
      rec.reorder(*input, order);
      std::string attach = parallelizeOuter(*input, outer, exact, true).innermostOuter;
      rec.annotate(*input, inner[0], Annotation::Unroll);
      rec.annotate(*input, inner[1], Annotation::Unroll);
      if (!vector.empty()) rec.annotate(*input, vector, Annotation::Vectorize);
      computeRowPassAt(*rows, *input, attach, !vector.empty());
    }
    scheduled.insert(*rows);
    scheduled.insert(*input);

    // The written stage: the output transform, or the epilogue it is inlined into.
    auto readers = rec.state.effectiveConsumers(*outputRows);
    if (readers.size() != 1) return;  // left to the generic rules
    std::string out = *readers.begin();
    const auto& outOp = *rec.stage(out).op;
    if (!dag.isOutput(out) || outOp.reduction() || outOp.axes.size() != 4) return;
    int64_t m = dag.op(*outputRows)->shape[0];
    int64_t outLanes = chooseVectorTile(outOp.shape[3], maxLanesFor(outOp.dtype, options), 1).lanes;
    auto axes = rec.leaves(out);  // n, h, w, k
    auto h = rec.split(out, axes[1], {m});
    auto w = rec.split(out, axes[2], {m});
    std::vector<std::string> outer{axes[0], h[0], w[0]};
    std::vector<bool> exact{true, outOp.shape[1] % m == 0, outOp.shape[2] % m == 0};
    std::string vector = splitLanes(out, axes[3], outOp.shape[3], outLanes, outer, exact);
    std::vector<std::string> order = outer;
    order.push_back(h[1]);
    order.push_back(w[1]);
    if (!vector.empty()) order.push_back(vector);
    rec.reorder(out, order);
    std::string attach = parallelizeOuter(out, outer, exact, true).innermostOuter;
    rec.annotate(out, h[1], Annotation::Unroll);
    rec.annotate(out, w[1], Annotation::Unroll);
    if (!vector.empty()) rec.annotate(out, vector, Annotation::Vectorize);
    computeRowPassAt(*outputRows, out, attach, !vector.empty());
    scheduled.insert(*outputRows);
    scheduled.insert(out);
  }

  static std::optional<TileRoles> rolesOf(const te::OperationNode& op) {
    auto axes = registerTileAxes(traitsOf(op), op.axes.size());
    if (!axes) return std::nullopt;
    return TileRoles{axes->vectorAxis, axes->rowAxis};
  }

  /// out[outer loops | rows x vectors x lanes], the accumulation computed at the tile.
  void scheduleRegisterTile(const std::string& anchor, std::string out) {
    const auto& op = *dag.op(anchor);
    auto roles = rolesOf(op);
    TESSEL_CHECK(roles.has_value(), "default schedule: no register tile rule for '{}' (tag {})", anchor, op.tag);
    int64_t vectorExtent = op.shape[size_t(roles->vectorAxis)], rowExtent = op.shape[size_t(roles->rowAxis)];
    const auto& forced = options.anchorTile;
    VectorTile vt = chooseVectorTile(vectorExtent, maxLanesFor(op.dtype, options), 2, kTileTailCost);
    if (forced) vt = {forced->lanes > 0 ? forced->lanes : maxLanesFor(op.dtype, options), forced->vectors};
    // Packed weights: the tile's vectors are one block, so that its weights are one stream.
    const int64_t block = packBlockOf(op);
    if (block > 0) {
      if (!forced) {
        int64_t lanes = std::min<int64_t>(maxLanesFor(op.dtype, options), block);
        while (block % lanes != 0) lanes /= 2;
        vt = {lanes, block / lanes};
      }
      TESSEL_CHECK(vt.size() == block, "anchor tile: '{}' packs its weights by {} output channels, a tile of {} x {} lanes is not one block",
                   anchor, block, vt.vectors, vt.lanes);
    }
    TESSEL_CHECK(vt.lanes >= 2 && vt.vectors >= 1 && vt.size() <= vectorExtent,
                 "default schedule: '{}' has {} elements along its vector axis, a tile of {} x {} lanes does not fit", anchor,
                 vectorExtent, vt.vectors, vt.lanes);
    // Accumulators: rows x vectors of the register file; the rest holds operands. With 32
    // registers (AVX-512, NEON) half of them (measured best on AVX-512). With 16 (AVX2, SSE) all
    // but the weight vectors and the broadcast input's register (CpuMachine::broadcastRegisters:
    // AVX2's FMA cannot broadcast from memory; it can fold one weight vector's load, which only
    // some compilers' tunings do). 7 x 2 (16 registers with the
    // fold) made gcc spill an accumulator for -mcpu=haswell: the conv of bench_core ran at 0.55x
    // oneDNN where 6 x 2 ran at 1.0x (Zen 3, both for haswell); untuned networks for haswell on 2
    // threads took 0.71-0.83x the time of 7 x 2 (Zen 5) and 0.90-1.0x (Xeon). A block of four or
    // more vectors (ops::defaultPackBlock's 4 lanes' worth) takes as many rows as fit beside its
    // weight vectors, 7 for 4 on AVX-512: the tile that block was chosen for.
    const int64_t registers = options.machine.vectorRegisters;
    const bool largeRegisterFile = target::CpuMachine::largeRegisterFile(registers);
    const int64_t broadcastRegisters = options.machine.broadcastRegisters();
    int64_t accumulators = largeRegisterFile ? registers / 2 : registers - vt.vectors - broadcastRegisters;
    int64_t rowLimit = std::max<int64_t>(1, std::min<int64_t>(12, accumulators / vt.vectors));
    if (block > 0 && vt.vectors >= 4) rowLimit = std::max<int64_t>(1, (registers - vt.vectors - broadcastRegisters) / vt.vectors);
    // Fewer rows than the limit, so that they divide the image, or else: with 32 registers an
    // exact tile down to half the limit (8 or more accumulators still hide the FMA latency), the
    // limit with a tail otherwise; with 16 only down to three quarters (on AVX2 the 4 x 2 tile
    // that divides 56 columns, 8 accumulators, lost to 6 x 2 with a tail by 10% on mobilenet,
    // Zen 3), otherwise the fewest tiles at the limit made even (14 columns: 5 + 5 + 4, not
    // 6 + 6 + 2; 7: 4 + 3, not 6 + 1), since a tail tile of one or two rows is a tile that
    // cannot hide the FMA's latency. (resnet-18's 7x7 3x3 layers lose by it, 1.55 ms against
    // 1.38 for one 7-column tile, Zen 5; taking 7 there lost mobilenet's 7x7 pointwise layers
    // more: the tuner's tile_r knob keeps 7 for such layers.)
    int64_t smallestExact = largeRegisterFile ? (rowLimit + 1) / 2 : (3 * rowLimit + 3) / 4;
    int64_t rows = chooseRowTile(rowExtent, rowLimit, smallestExact, !largeRegisterFile);
    if (forced) rows = forced->rows;
    TESSEL_CHECK(rows >= 1 && rows <= rowExtent, "anchor tile: {} rows for a row axis of {}", rows, rowExtent);
    bool weightsOuter = forced && forced->weightsOuter >= 0 ? forced->weightsOuter == 1 : weightsOutweighData(op, roles->vectorAxis);
    // A fused depthwise tile is computed once per tile of rows, for every block of output
    // channels: those blocks must be the innermost outer loop.
    if (!depthwiseTile.empty()) weightsOuter = false;
    chosen = AnchorTile{vt.lanes, vt.vectors, rows, 1, {}, false, weightsOuter ? 1 : 0, paddingInlined};

    std::string accumulate = anchor;
    if (out == anchor) accumulate = rec.cacheWrite(anchor);
    scheduled.insert(anchor);
    scheduled.insert(out);
    scheduled.insert(accumulate);

    // The written stage: [outer loops in axis order | rows.1, vectors, lanes].
    auto axes = rec.leaves(out);
    std::string vAxis = axes[size_t(roles->vectorAxis)], rAxis = axes[size_t(roles->rowAxis)];
    std::vector<int64_t> vFactors = vt.vectors > 1 ? std::vector<int64_t>{vt.vectors, vt.lanes} : std::vector<int64_t>{vt.lanes};
    auto vParts = rec.split(out, vAxis, vFactors);
    auto rParts = rec.split(out, rAxis, {rows});
    bool vExact = vectorExtent % vt.size() == 0, rExact = rowExtent % rows == 0;
    std::vector<std::string> outer, inner{rParts[1]};
    std::vector<bool> exact;
    for (size_t d = 0; d < axes.size(); ++d) {
      if (int(d) == roles->vectorAxis) {
        outer.push_back(vParts[0]);
        exact.push_back(vExact);
      } else if (int(d) == roles->rowAxis) {
        outer.push_back(rParts[0]);
        exact.push_back(rExact);
      } else {
        outer.push_back(axes[d]);
        exact.push_back(true);
      }
    }
    inner.insert(inner.end(), vParts.begin() + 1, vParts.end());
    // Weights larger than the data (deep layers on small images): the loop over vector tiles
    // (output channels, matmul columns) goes outermost after the batch, so that each block of
    // weights is read once and stays in cache while the data, the smaller operand, is reread.
    size_t fuseLimit = SIZE_MAX;
    if (weightsOuter) {
      size_t from = size_t(roles->vectorAxis), to = std::min<size_t>(1, from);
      if (op.axes.size() == 2) to = 0;
      std::string v = outer[from];
      bool e = exact[from];
      outer.erase(outer.begin() + int64_t(from));
      exact.erase(exact.begin() + int64_t(from));
      // An NHWC image stays split among the threads by rows, as the next layer splits it: one
      // chunk of rows per thread, the channel blocks inside it. Split by channel blocks, each
      // core would compute part of every row, and the next layer would read half of its input
      // from the other core's cache (resnet-18's max pool after conv1: 150 us instead of 75).
      int64_t threads = int64_t(options.machine.cores), rows = op.axes.size() == 4 ? op.shape[1] : 0;
      bool nhwc = traitsOf(op).kind == OpKind::Conv2dNHWC || traitsOf(op).kind == OpKind::Conv2dNHWCPacked;
      if (nhwc && threads > 1 && rows % threads == 0 && to == 1 && exact[1]) {
        auto chunks = rec.split(out, outer[1], {rows / threads});
        outer[1] = chunks[1];
        outer.insert(outer.begin() + 1, chunks[0]);
        exact.insert(exact.begin() + 1, true);
        to = 2;
        fuseLimit = 2;  // the parallel loop: batch and chunks of rows
      }
      outer.insert(outer.begin() + int64_t(to), v);
      exact.insert(exact.begin() + int64_t(to), e);
    } else if (!rExact && depthwiseTile.empty()) {
      // A row tile with a tail ends the fused parallel loop (parallelizeOuter fuses exact loops
      // only), so behind it the blocks of output channels could not be divided among the
      // threads: a 7x7 image in tiles of 4 + 3 columns would give 16 cores 7 rows. Where the
      // loops before the row tiles are too few chunks, the channel blocks go right before the
      // row tiles, where they join the parallel loop.
      const auto v = std::find(outer.begin(), outer.end(), vParts[0]) - outer.begin();
      const auto r = std::find(outer.begin(), outer.end(), rParts[0]) - outer.begin();
      int64_t before = 1;
      for (std::ptrdiff_t k = 0; k < r; ++k) before *= rec.extent(out, outer[size_t(k)]);
      if (v > r && before < options.parallelChunks()) {
        std::rotate(outer.begin() + r, outer.begin() + v, outer.begin() + v + 1);
        std::rotate(exact.begin() + r, exact.begin() + v, exact.begin() + v + 1);
      }
    }
    std::vector<std::string> order = outer;
    order.insert(order.end(), inner.begin(), inner.end());
    rec.reorder(out, order);
    size_t channelBlocks = size_t(std::find(outer.begin(), outer.end(), vParts[0]) - outer.begin());
    if (!depthwiseTile.empty()) fuseLimit = channelBlocks;
    LoopPlan plan = parallelizeOuter(out, outer, exact, true, fuseLimit);
    std::string attach = plan.innermostOuter;
    rec.annotate(out, rParts[1], Annotation::Unroll);
    if (vt.vectors > 1) rec.annotate(out, vParts[1], Annotation::Unroll);
    rec.annotate(out, vParts.back(), Annotation::Vectorize);

    // The accumulation: reduction loops outside the unrolled rows x vectors x lanes tile.
    rec.computeAt(accumulate, out, attach);
    auto local = rec.leaves(accumulate);
    const Stage& s = rec.stage(accumulate);
    std::vector<std::string> spatial(local.begin(), local.begin() + int(s.op->axes.size()));
    std::vector<std::string> reduce(local.begin() + int(s.op->axes.size()), local.end());
    std::string lv = spatial[size_t(roles->vectorAxis)], lr = spatial[size_t(roles->rowAxis)];
    std::vector<std::string> lanes{lv};
    if (vt.vectors > 1) lanes = rec.split(accumulate, lv, {vt.lanes});
    std::vector<std::string> localOrder;
    for (auto& a : spatial)
      if (a != lv && a != lr) localOrder.push_back(a);
    // A template's blocking of the reduction: rc split (its inner part right outside the tile)
    // and the outer reduction loops in the chosen order.
    std::string reduceInner;
    if (forced && forced->reduceInner > 1) {
      auto rc = std::find(reduce.begin(), reduce.end(), "rc");
      TESSEL_CHECK(rc != reduce.end(), "anchor tile: '{}' has no input-channel reduction rc to split", anchor);
      auto parts = rec.split(accumulate, *rc, {forced->reduceInner});
      *rc = parts[0];
      reduceInner = parts[1];
    }
    if (forced && !forced->reduceOrder.empty()) {
      TESSEL_CHECK(forced->reduceOrder.size() == reduce.size(), "anchor tile: a reduction order of {} loops for {} loops",
                   forced->reduceOrder.size(), reduce.size());
      std::vector<std::string> permuted;
      for (int k : forced->reduceOrder) permuted.push_back(reduce.at(size_t(k)));
      reduce = permuted;
    }
    localOrder.insert(localOrder.end(), reduce.begin(), reduce.end());
    if (!reduceInner.empty()) localOrder.push_back(reduceInner);
    localOrder.push_back(lr);
    localOrder.insert(localOrder.end(), lanes.begin(), lanes.end());
    rec.reorder(accumulate, localOrder);
    if (forced && forced->unrollKernelWidth)
      for (const auto& r : reduce)
        if (r == "rx" || r == "dj") rec.annotate(accumulate, r, Annotation::Unroll);
    rec.annotate(accumulate, lr, Annotation::Unroll);
    if (vt.vectors > 1) rec.annotate(accumulate, lanes[0], Annotation::Unroll);
    rec.annotate(accumulate, lanes.back(), Annotation::Vectorize);
    if (!depthwiseTile.empty()) scheduleDepthwiseTile(out, plan.fusedLoop);
  }

  /// The fused depthwise convolution's output for one tile of rows (all its channels), at
  /// `loop` of the written stage, as a register tile of its own: per vector of channels, the
  /// tile's columns x one vector accumulate across the unrolled kernel window, so that
  /// neighbouring columns share their loads.
  void scheduleDepthwiseTile(const std::string& out, const std::string& loop) {
    TESSEL_CHECK(!loop.empty(), "default schedule: no loop to compute the depthwise tile '{}' at", depthwiseTile);
    rec.computeAt(depthwiseTile, out, loop);
    scheduled.insert(depthwiseTile);
    scheduled.insert(depthwiseConv);
    const auto& tileOp = *dag.op(depthwiseTile);
    int64_t channels = tileOp.shape.back();
    int64_t lanes = chooseVectorTile(channels, maxLanesFor(tileOp.dtype, options), 1).lanes;
    auto axes = rec.leaves(depthwiseTile);  // n, h, w, c
    std::vector<std::string> outer(axes.begin(), axes.end() - 2);
    std::vector<bool> exact(outer.size(), true);
    std::string vector = splitLanes(depthwiseTile, axes.back(), channels, lanes, outer, exact);
    std::string channelLoop = outer.back();
    std::vector<std::string> order = outer;
    order.push_back(axes[axes.size() - 2]);  // the tile's columns inside the channel vectors
    if (!vector.empty()) order.push_back(vector);
    rec.reorder(depthwiseTile, order);
    if (!vector.empty()) rec.annotate(depthwiseTile, vector, Annotation::Vectorize);
    rec.computeAt(depthwiseConv, depthwiseTile, channelLoop);
    auto local = rec.leaves(depthwiseConv);
    size_t ndim = rec.stage(depthwiseConv).op->axes.size();
    std::vector<std::string> spatial(local.begin(), local.begin() + int64_t(ndim)), window(local.begin() + int64_t(ndim), local.end());
    std::vector<std::string> localOrder(spatial.begin(), spatial.end() - 2);
    localOrder.insert(localOrder.end(), window.begin(), window.end());
    localOrder.push_back(spatial[ndim - 2]);
    localOrder.push_back(spatial.back());
    rec.reorder(depthwiseConv, localOrder);
    for (const auto& w : window) rec.annotate(depthwiseConv, w, Annotation::Unroll);
    rec.annotate(depthwiseConv, spatial[ndim - 2], Annotation::Unroll);
    if (!vector.empty()) rec.annotate(depthwiseConv, spatial.back(), Annotation::Vectorize);
  }

  /// The block of an anchor with packed weights (conv2d_packed's [K / block, KH, KW, C, block],
  /// matmul_packed's [N / block, K, block]): the last extent of the operand that does not move
  /// with the tile's rows. 0 for other anchors.
  int64_t packBlockOf(const te::OperationNode& op) const {
    OpKind kind = traitsOf(op).kind;
    if (kind != OpKind::Conv2dNHWCPacked && kind != OpKind::MatmulPacked) return 0;
    auto roles = rolesOf(op);
    if (!roles) return 0;
    const ir::VarNode* rowVar = op.axes[size_t(roles->rowAxis)].var.node();
    for (const auto& read : te::ComputeDAG::accesses(op)) {
      bool movesWithRows = false;
      for (const auto& index : read.indices) movesWithRows = movesWithRows || ir::usesVar(index, rowVar);
      if (!movesWithRows) return dag.op(read.producer)->shape.back();
    }
    return 0;
  }

  /// True if the anchor's operands that do not move with its spatial axes (other than the
  /// vector axis: the weights) hold more bytes than those that do (the data).
  bool weightsOutweighData(const te::OperationNode& op, int vectorAxis) const {
    int64_t weights = 0, data = 0;
    std::set<std::string> seen;
    for (auto& read : te::ComputeDAG::accesses(op)) {
      if (!seen.insert(read.producer).second) continue;
      bool moves = false;
      for (auto& index : read.indices)
        for (size_t d = 0; d < op.axes.size(); ++d)
          if (int(d) != vectorAxis && ir::usesVar(index, op.axes[d].var.node())) moves = true;
      const auto& producer = *dag.op(read.producer);
      (moves ? data : weights) += elementCount(producer.shape) * producer.dtype.storageBytes();
    }
    return weights > data;
  }

  /// Dense: weight [units, features] is contiguous along the reduction, not along the output,
  /// so the lanes run over the reduction: partial sums in up to 4 vector registers (rfactor),
  /// which are added into one vector (a second rfactor) and then into the output element.
  void scheduleDense(const std::string& anchor, const std::string& out) {
    const Stage& a = rec.stage(anchor);
    std::string k = a.iterator(a.rootCount - 1).name;
    int64_t features = a.iterator(a.rootCount - 1).extent;
    int64_t lanes = 0, vectors = 1;
    for (int64_t l = maxLanesFor(a.op->dtype, options); l >= 2 && !lanes; l /= 2)
      if (features % l == 0) lanes = l;
    TESSEL_CHECK(lanes >= 2, "default schedule: dense '{}' has an odd reduction extent {}", anchor, features);
    // Independent accumulators hide the latency of the additions.
    while (vectors < 4 && features % (lanes * vectors * 2) == 0) vectors *= 2;
    if (const auto& forced = options.anchorTile) {
      lanes = forced->lanes > 0 ? forced->lanes : maxLanesFor(a.op->dtype, options);
      vectors = forced->vectors;
      TESSEL_CHECK(lanes >= 2 && vectors >= 1 && features % (lanes * vectors) == 0,
                   "anchor tile: dense '{}' reduces over {} features, not a multiple of {} x {} lanes", anchor, features, vectors,
                   lanes);
    }
    chosen = AnchorTile{lanes, vectors, 1, 1, {}, false, -1};
    scheduled.insert(anchor);
    scheduled.insert(out);
    auto parts = rec.split(anchor, k, {lanes * vectors});
    std::string partial = rec.rfactor(anchor, parts[1]);
    scheduled.insert(partial);
    std::string second;
    if (vectors > 1) {
      auto halves = rec.split(anchor, rec.leaves(anchor).back(), {lanes});
      second = rec.rfactor(anchor, halves[1]);
      scheduled.insert(second);
    }
    // Output columns (weight rows) outermost: a weight row stays in cache for every data row.
    auto axes = rec.leaves(out);
    std::vector<std::string> spatial{axes[1], axes[0]};
    rec.reorder(out, spatial);
    std::string fused = rec.fuse(out, spatial);
    if (elementCount(rec.stage(out).op->shape) > 1) rec.annotate(out, fused, Annotation::Parallel);
    if (out != anchor) rec.computeAt(anchor, out, fused);
    // Both lane stages: [lanes (x vectors), i, j, reduction] -> [i, j, reduction, vectors,
    // lanes], the vectors unrolled so that they become registers.
    for (const std::string& stage : {second, partial}) {
      if (stage.empty()) continue;
      rec.computeAt(stage, out, fused);
      auto p = rec.leaves(stage);
      std::vector<std::string> order(p.begin() + 1, p.end());
      if (stage == partial && vectors > 1) {
        auto v = rec.split(stage, p[0], {lanes});
        order.insert(order.end(), v.begin(), v.end());
        rec.reorder(stage, order);
        rec.annotate(stage, v[0], Annotation::Unroll);
        rec.annotate(stage, v[1], Annotation::Vectorize);
      } else {
        order.push_back(p[0]);
        rec.reorder(stage, order);
        // The second stage reads the partial sums vector by vector: unrolled, constant offsets.
        if (stage == second) rec.annotate(stage, order[order.size() - 2], Annotation::Unroll);
        rec.annotate(stage, p[0], Annotation::Vectorize);
      }
    }
  }

  /// Fuses the leading exact loops of `outer` (in order) and makes the result parallel (or the
  /// next loop, when the fused one has a single iteration). Loops of a split with a remainder
  /// stay separate so that loop partitioning can peel their tail.
  LoopPlan parallelizeOuter(const std::string& name, const std::vector<std::string>& outer, const std::vector<bool>& exact,
                            bool parallel, size_t fuseLimit = SIZE_MAX) {
    if (outer.empty()) return {};
    std::vector<std::string> prefix;
    size_t k = 0;
    // Enough iterations for the threads, no more: every fused loop costs a division per
    // iteration of the loops inside, and unfused inner loops keep simple index arithmetic.
    // (An explicit limit is a prefix the caller attaches to: fuse all of it.)
    int64_t extent = 1;
    while (k < outer.size() && k < fuseLimit && exact[k] && (fuseLimit != SIZE_MAX || extent < options.parallelChunks())) {
      extent *= rec.extent(name, outer[k]);
      prefix.push_back(outer[k++]);
    }
    std::vector<std::string> loops;
    if (!prefix.empty()) loops.push_back(rec.fuse(name, prefix));
    loops.insert(loops.end(), outer.begin() + int64_t(k), outer.end());
    if (parallel) {
      std::string target = loops[0];
      if (rec.extent(name, target) == 1 && loops.size() > 1) target = loops[1];
      if (rec.extent(name, target) > 1) rec.annotate(name, target, Annotation::Parallel);
    }
    return {prefix.empty() ? "" : loops[0], loops.back()};
  }

  /// Rule 4 for one stage: outer loops fused and parallel (at the root), the innermost axis
  /// vectorized when its reads are contiguous, reductions between the two.
  LoopPlan scheduleLoops(const std::string& name, bool root, size_t fuseLimit = SIZE_MAX) {
    const Stage& s = rec.stage(name);
    const auto& op = *s.op;
    int ndim = int(op.axes.size());
    auto names = rec.leaves(name);
    std::vector<std::string> spatial(names.begin(), names.begin() + ndim), reduce(names.begin() + ndim, names.end());
    // The vector axis: the last one with more than one element, after the fused prefix.
    int v = -1;
    for (int d = ndim - 1; d >= 0 && v < 0; --d)
      if (rec.extent(name, spatial[size_t(d)]) > 1) v = d;
    if (v >= 0 && size_t(v) < std::min<size_t>(fuseLimit, size_t(ndim)) && fuseLimit < size_t(ndim)) v = -1;
    if (v >= 0 && (op.dtype.isBool() || !readsContiguously(rec.state, name, op.axes[size_t(v)].var.node()))) v = -1;
    VectorTile vt;
    if (v >= 0) vt = chooseVectorTile(rec.extent(name, spatial[size_t(v)]), maxLanesFor(op.dtype, options), 1);
    std::vector<std::string> outer;
    std::vector<bool> exact;
    std::string vectorLoop;
    for (int d = 0; d < ndim; ++d) {
      const std::string& axis = spatial[size_t(d)];
      if (d != v || vt.lanes < 2) {
        outer.push_back(axis);
        exact.push_back(true);
        continue;
      }
      int64_t e = rec.extent(name, axis);
      if (vt.lanes == e) {
        vectorLoop = axis;
      } else {
        auto parts = rec.split(name, axis, {vt.lanes});
        outer.push_back(parts[0]);
        exact.push_back(e % vt.lanes == 0);
        vectorLoop = parts[1];
      }
    }
    std::vector<std::string> order = outer;
    order.insert(order.end(), reduce.begin(), reduce.end());
    if (!vectorLoop.empty()) order.push_back(vectorLoop);
    rec.reorder(name, order);
    int64_t work = elementCount(op.shape);
    if (auto r = op.reduction())
      for (auto& axis : r->axes) work *= axis.extent;
    LoopPlan plan;
    if (root) {
      plan = parallelizeOuter(name, outer, exact, work >= options.minParallelElements, fuseLimit);
    } else {
      plan.innermostOuter = outer.empty() ? "" : outer.back();
    }
    if (!vectorLoop.empty()) rec.annotate(name, vectorLoop, Annotation::Vectorize);
    return plan;
  }

  std::string ownerOf(const std::string& stage) const {
    auto found = attachedTo.find(stage);
    return found == attachedTo.end() ? stage : found->second;
  }

  // Rule 3: which reductions other than the anchor can be computed inside an output's loops.
  void planReductions() {
    for (auto it = dag.ops().rbegin(); it != dag.ops().rend(); ++it) {
      const auto& op = **it;
      if (op.isPlaceholder() || !op.reduction() || scheduled.count(op.name) || dag.isOutput(op.name)) continue;
      auto consumers = rec.state.effectiveConsumers(op.name);
      // The output that holds every reader: a reader is the output itself, a reduction
      // already attached to it, or a rule-1b stage that only those read.
      std::string target;
      std::string shared;  // the rule-1b stage among the readers, if one
      for (auto& c : consumers) {
        std::string owner = ownerOf(c);
        if (rowShared.count(c)) {
          owner.clear();
          for (auto& reader : rec.state.effectiveConsumers(c)) {
            std::string o = ownerOf(reader);
            owner = owner.empty() || owner == o ? o : "-";
          }
          shared = c;
        }
        if (target.empty()) target = owner;
        if (owner != target) target = "-";
      }
      // Computed inside the shared stage's row, it must be read by that stage alone.
      if (!shared.empty() && consumers.size() != 1) continue;
      if (target.empty() || target == "-" || !dag.isOutput(target) || scheduled.count(target)) continue;
      const auto& targetOp = *rec.stage(target).op;
      if (targetOp.reduction()) continue;
      bool aligned = true;
      for (auto& c : consumers) aligned = aligned && readsAlignedPrefix(rec.state, c, op.name);
      // Every reduction attached to one output shares one loop: the same prefix length.
      for (auto& [r, t] : attachedTo)
        if (t == target) aligned = aligned && rec.stage(r).op->axes.size() == op.axes.size();
      if (!aligned) continue;
      attachedTo[op.name] = target;
      attachOrder[target].push_back(op.name);
      if (!shared.empty()) viaShared[op.name] = shared;
    }
  }

  void scheduleRootStages() {
    for (auto& op : dag.ops()) {
      if (op->isPlaceholder() || scheduled.count(op->name) || attachedTo.count(op->name) || rowShared.count(op->name)) continue;
      if (rec.stage(op->name).attach == AttachKind::Inline) continue;
      auto found = attachOrder.find(op->name);
      if (found == attachOrder.end()) {
        scheduleLoops(op->name, true);
        continue;
      }
      // An output with reductions computed inside it: rows (a prefix of its axes) or elements.
      size_t prefix = rec.stage(found->second[0]).op->axes.size();
      size_t ndim = op->axes.size();
      LoopPlan plan = scheduleLoops(op->name, true, prefix < ndim ? prefix : SIZE_MAX);
      std::string loop = prefix < ndim ? plan.fusedLoop : plan.innermostOuter;
      if (loop.empty()) {  // (those read by a shared stage: with it, below)
        for (auto& r : found->second)
          if (!viaShared.count(r)) scheduleLoops(r, true);
        continue;
      }
      std::vector<std::string> attached;
      for (auto& r : found->second)
        if (!viaShared.count(r)) attached.push_back(attachReduction(r, op->name, loop));
      computeSharedRows(op->name, loop);
      for (auto& partial : attached)
        if (!partial.empty()) scheduleVectorPartials(partial);
      for (auto& r : found->second)
        if (!viaShared.count(r)) scheduleLoops(r, false);
    }
    // Shared stages no output's row loop took: inlined after all, and the reductions that only
    // they read at the root.
    for (const auto& name : rowShared)
      if (rec.stage(name).attach == AttachKind::Root) {
        rec.computeInline(name);
        for (auto& [r, shared] : viaShared)
          if (shared == name) scheduleLoops(r, true);
      }
  }

  /// Computes reduction `r` at `loop` of `target`, its vector partial results (rule 3b) inside
  /// its own row; returns the partial results' stage ("" without).
  std::string attachReduction(const std::string& r, const std::string& target, const std::string& loop) {
    std::string partial = vectorPartials(r);
    rec.computeAt(r, target, loop);
    // Inside the reduction's own row: its spatial loops (one iteration each there).
    if (!partial.empty()) rec.computeAt(partial, r, rec.leaves(r)[rec.stage(r).op->axes.size() - 1]);
    return partial;
  }

  // Rule 3c: the shared stages of rule 1b that only `out` and the reductions computed in its
  // row loop read: computed at that loop (one row of them), vectorized along the row; the
  // reductions only they read (softmax's max, read by its exp) inside their row.
  void computeSharedRows(const std::string& out, const std::string& loop) {
    for (const auto& name : rowShared) {
      bool inside = true;
      // (A reader is the output, a reduction planned for it, or a stage computed inside it
      // already: a reduction's partial results.)
      for (const auto& c : rec.state.effectiveConsumers(name))
        inside = inside && (ownerOf(c) == out || rec.state.isWithin(c, out));
      if (!inside || rec.stage(name).attach != AttachKind::Root) continue;
      rec.computeAt(name, out, loop);
      scheduleLoops(name, false);
      for (auto& [r, shared] : viaShared) {
        if (shared != name) continue;
        std::string row = rec.leaves(name)[rec.stage(r).op->axes.size() - 1];
        std::string partial = attachReduction(r, name, row);
        if (!partial.empty()) scheduleVectorPartials(partial);
        scheduleLoops(r, false);
      }
    }
  }

  // Rule 3b: a float reduction over one axis that it reads contiguously (a row's sum or max:
  // softmax, layer norm) accumulates one vector of partial results, lane l summing the
  // elements l, l + lanes, ..., and then adds up the lanes: its loads, and the exp of softmax's
  // sum, become whole vectors. A scalar chain of 128 exps per row cost softmax most of its
  // time (BERT-base). Returns the stage of partial results, or "" where the rule does not apply.
  std::string vectorPartials(const std::string& name) {
    const auto& op = *rec.stage(name).op;
    const auto* red = op.reduction();
    if (!red || red->axes.size() != 1 || op.dtype != DataType::float32()) return "";
    const int64_t extent = red->axes[0].extent, lanes = maxLanesFor(op.dtype, options);
    if (lanes < 2 || extent % lanes != 0 || extent <= lanes) return "";
    if (!readsContiguously(rec.state, name, red->axes[0].var.node())) return "";
    auto parts = rec.split(name, rec.leaves(name).back(), {lanes});
    return rec.rfactor(name, parts[1]);
  }

  /// The partial results' loops inside the row: [lanes, row axes, k outer] -> [row axes,
  /// k outer, lanes], the lanes one vector.
  void scheduleVectorPartials(const std::string& partial) {
    auto leaves = rec.leaves(partial);
    std::vector<std::string> order(leaves.begin() + 1, leaves.end());
    order.push_back(leaves[0]);
    rec.reorder(partial, order);
    rec.annotate(partial, leaves[0], Annotation::Vectorize);
  }

  const te::ComputeDAG& dag;
  CpuScheduleOptions options;
  Recorder rec;

 public:
  std::optional<AnchorTile> chosen;  ///< the anchor's tile, once scheduled

 private:
  std::string depthwiseConv, depthwiseTile;  ///< a fused depthwise convolution and the stage the anchor reads of it
  int paddingInlined = -1;                                      ///< the anchor's padding inlined (1) or not (0); -1: none
  std::set<std::string> scheduled;                              ///< stages the anchor rule took care of
  std::set<std::string> rowShared;                              ///< rule 1b's stages, not inlined
  std::map<std::string, std::string> viaShared;                 ///< reduction -> the rule-1b stage that alone reads it
  std::map<std::string, std::string> attachedTo;                ///< reduction -> the output it is computed in
  std::map<std::string, std::vector<std::string>> attachOrder;  ///< output -> its reductions, readers first
};

}  // namespace

std::optional<AnchorTile> defaultAnchorTile(const te::ComputeDAG& dag, const CpuScheduleOptions& options) {
  CpuScheduleOptions rules = options;
  rules.anchorTile.reset();
  Planner planner(dag, rules);
  try {
    planner.run(true);
  } catch (const Error&) {
    return std::nullopt;
  }
  return planner.chosen;
}

std::optional<std::string> findAnchorStage(const te::ComputeDAG& dag) { return findAnchorName(dag); }

CpuScheduleOptions cpuScheduleOptionsFor(const target::Target& target) {
  TESSEL_CHECK(target.isCpu(), "target '{}': CPU schedules need a CPU target", target.str());
  CpuScheduleOptions options;
  options.machine = target.cpu;
  return options;
}

std::optional<FusedDepthwise> fusedDepthwiseOf(const te::ComputeDAG& dag) {
  auto anchor = findAnchorName(dag);
  if (!anchor) return std::nullopt;
  const auto& op = *dag.op(*anchor);
  if (!registerTileAxes(traitsOf(op), op.axes.size())) return std::nullopt;
  auto reads = te::ComputeDAG::accesses(op);
  if (reads.empty()) return std::nullopt;
  std::string stage = reads.front().producer;  // the data operand
  for (std::string at = stage;;) {
    const auto& p = *dag.op(at);
    if (p.isPlaceholder()) return std::nullopt;
    if (p.reduction()) {
      // An epilogue holds the tile (the accumulation alone is not kept).
      if (traitsOf(p).kind != OpKind::DepthwiseConv2dNHWC || at == stage) return std::nullopt;
      return FusedDepthwise{at, stage};
    }
    // Element-wise steps of the epilogue: one operand of the image's shape, the rest broadcast.
    std::string next;
    for (const auto& read : te::ComputeDAG::accesses(p))
      if (dag.op(read.producer)->shape == p.shape) {
        if (!next.empty() && next != read.producer) return std::nullopt;
        next = read.producer;
      }
    if (next.empty()) return std::nullopt;
    at = next;
  }
}

std::vector<StepPtr> defaultCpuSchedule(const te::ComputeDAG& dag, const CpuScheduleOptions& options, schedule::State* finalState,
                                        std::string* fallback) {
  if (fallback) fallback->clear();
  // A template's tile either works or is an error the tuner records: no silent fallback.
  if (!options.allowFallback || options.anchorTile) return Planner(dag, options).run(true, finalState);
  // Each rule set is tried on a fresh state; a failure falls back to the next, simpler one,
  // and says so.
  std::string anchorError, loopError;
  try {
    return Planner(dag, options).run(true, finalState);
  } catch (const Error& e) {
    anchorError = e.what();
  }
  try {
    auto steps = Planner(dag, options).run(false, finalState);
    if (fallback) *fallback = fmt::format("without the register tile rule ({})", anchorError);
    return steps;
  } catch (const Error& e) {
    loopError = e.what();
  }
  if (fallback) *fallback = fmt::format("naive loops ({}; then {})", anchorError, loopError);
  if (finalState) *finalState = schedule::replay(dag, {});
  return {};
}

}  // namespace tessel::ops
