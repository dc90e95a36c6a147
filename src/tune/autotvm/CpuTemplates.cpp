#include "tune/autotvm/CpuTemplates.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "ops/OpTraits.h"
#include "ops/Schedules.h"
#include "support/Error.h"

namespace tessel::tune::autotvm {

namespace {

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// What the template needs to know of the anchor.
struct AnchorInfo {
  std::string stage;
  const ops::OpTraits* traits = nullptr;
  std::vector<int64_t> shape;
  std::vector<std::string> reduceNames;
  std::vector<int64_t> reduceExtents;
  int64_t maxLanes = 0;
};

AnchorInfo describeAnchor(const te::ComputeDAG& dag, const ops::CpuScheduleOptions& options) {
  auto anchor = ops::findAnchorStage(dag);
  TESSEL_CHECK(anchor.has_value(), "no conv2d, depthwise conv2d, dense or matmul to tune in this function");
  const auto& op = *dag.op(*anchor);
  AnchorInfo info{*anchor, &ops::traitsOf(op), op.shape, {}, {}, 0};
  for (const auto& axis : op.reduction()->axes) {
    info.reduceNames.push_back(axis.var.name());
    info.reduceExtents.push_back(axis.extent);
  }
  int64_t lanes = options.machine.lanes(op.dtype.storageBytes());
  info.maxLanes = 1;
  while (info.maxLanes * 2 <= std::min<int64_t>(lanes, 64)) info.maxLanes *= 2;
  return info;
}

/// [outer, vectors, lanes]: lanes a power of two of at least 2, at most 4 vectors.
SplitOptions vectorTileOptions(int64_t maxLanes, bool exact) {
  SplitOptions o;
  o.policy = exact ? SplitPolicy::Factors : SplitPolicy::Verbose;
  o.numOutputs = 3;
  o.filter = [maxLanes](const std::vector<int64_t>& p) {
    return isPowerOfTwo(p[2]) && p[2] >= 2 && p[2] <= maxLanes && p[1] <= 4;
  };
  return o;
}

struct Template {
  std::shared_ptr<ConfigSpace> space;
  uint64_t fallback = 0;
  uint64_t unprunedSize = 0;  ///< the space's size before pruning (0: not pruned)
  /// Sets a config's choices into the rules' options: the anchor tile, the parallel chunks.
  std::function<void(const ConfigEntity&, ops::CpuScheduleOptions&)> apply;
};

/// The options of `parallel_chunks`, the parallel loop's target number of iterations: the rule's
/// own count first (the fallback, the untuned schedule), then one chunk per core (the fewest
/// loops fused: each core's share in one piece, the simplest index arithmetic) and 16 per core
/// (the finest balance, where the rows are few and the cores many), in ascending order.
std::vector<nlohmann::json> parallelChunkOptions(const ops::CpuScheduleOptions& options) {
  int64_t rule = options.ruleParallelChunks(), cores = std::max<int64_t>(1, options.machine.cores);
  std::vector<nlohmann::json> values{rule};
  for (int64_t chunks : {cores, 16 * cores})
    if (std::find(values.begin(), values.end(), chunks) == values.end()) values.push_back(chunks);
  std::sort(values.begin() + 1, values.end());
  return values;
}

Template registerTileTemplate(const te::ComputeDAG& dag, const AnchorInfo& a, const ops::CpuScheduleOptions& options) {
  auto axes = ops::registerTileAxes(*a.traits, a.shape.size());
  TESSEL_CHECK(axes.has_value(), "anchor '{}' ({}) has no register tile", a.stage, a.traits->tag);
  auto fallbackTile = ops::defaultAnchorTile(dag, options);
  TESSEL_CHECK(fallbackTile.has_value(), "the default schedule has no register tile for anchor '{}' ({})", a.stage,
               a.traits->tag);
  int64_t v = a.shape[size_t(axes->vectorAxis)], r = a.shape[size_t(axes->rowAxis)];
  auto ceilDiv = [](int64_t x, int64_t y) { return (x + y - 1) / y; };

  // Pruned, what cannot win: vectors narrower than the machine's where the widest divide the
  // axis (narrow vectors pay only on awkward extents), and reduction orders that differ only
  // in where unit loops (a 1x1 kernel's ry and rx) stand. `unprunedSize` counts without.
  auto space = std::make_shared<ConfigSpace>();
  SplitOptions tileV = vectorTileOptions(a.maxLanes, false);
  tileV.include = {{ceilDiv(v, fallbackTile->vectors * fallbackTile->lanes), fallbackTile->vectors, fallbackTile->lanes}};
  double unpruned = double(splitCandidates(v, tileV).size());
  if (v % a.maxLanes == 0)
    tileV.filter = [widest = a.maxLanes, all = tileV.filter](const std::vector<int64_t>& p) { return all(p) && p[2] == widest; };
  // Packed weights: the tile is one block of output channels (the layout was chosen for it).
  if (a.traits->kind == ops::OpKind::Conv2dNHWCPacked || a.traits->kind == ops::OpKind::MatmulPacked) {
    int64_t block = fallbackTile->vectors * fallbackTile->lanes;
    tileV.filter = [block, all = tileV.filter](const std::vector<int64_t>& p) { return all(p) && p[1] * p[2] == block; };
  }
  space->defineSplit("tile_v", v, tileV);
  unpruned /= double(space->knob("tile_v").options.size());
  SplitOptions tileR;
  tileR.policy = SplitPolicy::Verbose;
  tileR.maxFactor = 16;
  tileR.include = {{ceilDiv(r, fallbackTile->rows), fallbackTile->rows}};
  unpruned *= double(splitCandidates(r, tileR).size());
  // Pruned: tiles that spill the vector registers. A tile holds rows x vectors accumulators
  // and the `vectors` weight vectors they multiply, so rows x vectors + vectors must fit the
  // register file. The bound is loose by one where the FMA cannot broadcast from memory (AVX2:
  // the broadcast input takes a register, and the default rules leave it one): a compiler that
  // folds one weight load into the FMA fits the larger tile, and the search measures which.
  // Where every vector tile has the same number of vectors (packed weights: one block), rows is
  // bounded by it.
  int64_t fixedVectors = 0;
  for (const auto& option : space->knob("tile_v").options) {
    int64_t vectors = option.at(1).get<int64_t>();
    fixedVectors = fixedVectors == 0 || fixedVectors == vectors ? vectors : -1;
  }
  if (fixedVectors > 0)
    tileR.filter = [limit = options.machine.vectorRegisters, fixedVectors](const std::vector<int64_t>& p) {
      return p[1] * fixedVectors + fixedVectors <= limit;
    };
  space->defineSplit("tile_r", r, tileR);
  unpruned /= double(space->knob("tile_r").options.size());
  auto rc = std::find(a.reduceNames.begin(), a.reduceNames.end(), "rc");
  bool hasChannels = rc != a.reduceNames.end();
  if (hasChannels) {
    SplitOptions tileIc;
    tileIc.maxFactor = 64;
    space->defineSplit("tile_ic", a.reduceExtents[size_t(rc - a.reduceNames.begin())], tileIc);
  }
  int reduceLoops = int(a.reduceNames.size());
  std::vector<int> moving, order(static_cast<size_t>(reduceLoops), 0);  // the non-unit loops; the identity order
  for (int i = 0; i < reduceLoops; ++i) {
    order[size_t(i)] = i;
    if (a.reduceExtents[size_t(i)] > 1) moving.push_back(i);
  }
  std::vector<std::vector<int>> orders;  // unit loops in place, the others in every order
  std::vector<int> permuted = moving;
  do {
    std::vector<int> o = order;
    for (size_t j = 0; j < moving.size(); ++j) o[size_t(moving[j])] = permuted[j];
    orders.push_back(o);
  } while (std::next_permutation(permuted.begin(), permuted.end()));
  space->defineReorder("reorder_reduce", reduceLoops, "candidate", orders);
  for (int i = 2; i <= reduceLoops; ++i) unpruned *= i;
  unpruned /= double(orders.size());
  bool hasKernelWidth = false;
  for (size_t i = 0; i < a.reduceNames.size(); ++i)
    hasKernelWidth = hasKernelWidth || ((a.reduceNames[i] == "rx" || a.reduceNames[i] == "dj") && a.reduceExtents[i] > 1);
  if (hasKernelWidth) space->defineKnob("unroll_kw", {false, true});
  // With a fused depthwise tile the output-channel blocks are always inner (it is computed
  // once per tile of rows for all of them): nothing to choose.
  bool hasWeightsOuter = !ops::fusedDepthwiseOf(dag);
  if (hasWeightsOuter) space->defineKnob("weights_outer", {false, true});
  bool hasPadding = fallbackTile->inlinePadding >= 0;
  if (hasPadding) space->defineKnob("inline_pad", {false, true});
  // The parallel decomposition: how many outer loops are fused into the parallel loop. Not where
  // the rules fix that loop (a fused depthwise tile is computed per row tile, for all channels).
  bool hasChunks = !ops::fusedDepthwiseOf(dag);
  if (hasChunks) space->defineKnob("parallel_chunks", parallelChunkOptions(options));

  // The fallback: the rules' own tile, reduction as defined.
  std::vector<size_t> choices;
  for (const Knob& k : space->knobs()) {
    nlohmann::json value;
    if (k.name == "tile_v") value = tileV.include[0];
    else if (k.name == "tile_r") value = tileR.include[0];
    else if (k.name == "tile_ic") value = std::vector<int64_t>{a.reduceExtents[size_t(rc - a.reduceNames.begin())], 1};
    else if (k.name == "reorder_reduce") value = k.options[0];  // identity comes first
    else if (k.name == "unroll_kw") value = false;
    else if (k.name == "inline_pad") value = fallbackTile->inlinePadding == 1;
    else if (k.name == "parallel_chunks") value = options.parallelChunks();
    else value = fallbackTile->weightsOuter == 1;
    auto index = space->optionIndex(k.name, value);
    TESSEL_CHECK(index.has_value(), "template: the default tile's {} = {} is not in the space", k.name, value.dump());
    choices.push_back(*index);
  }
  Template t;
  t.fallback = space->fromChoices(choices).index();
  t.space = space;
  t.unprunedSize = uint64_t(std::llround(unpruned * double(space->size())));
  t.apply = [hasChannels, hasKernelWidth, hasPadding, hasWeightsOuter, hasChunks](const ConfigEntity& config,
                                                                                 ops::CpuScheduleOptions& o) {
    ops::AnchorTile tile;
    auto tv = config.split("tile_v");
    tile.vectors = tv[1];
    tile.lanes = tv[2];
    tile.rows = config.split("tile_r")[1];
    if (hasChannels) tile.reduceInner = config.split("tile_ic")[1];
    tile.reduceOrder = config.order("reorder_reduce");
    tile.unrollKernelWidth = hasKernelWidth && config.value("unroll_kw").get<bool>();
    if (hasWeightsOuter) tile.weightsOuter = config.value("weights_outer").get<bool>() ? 1 : 0;
    if (hasPadding) tile.inlinePadding = config.value("inline_pad").get<bool>() ? 1 : 0;
    o.anchorTile = tile;
    if (hasChunks) o.chosenParallelChunks = config.value("parallel_chunks").get<int64_t>();
  };
  return t;
}

Template denseTemplate(const te::ComputeDAG& dag, const AnchorInfo& a, const ops::CpuScheduleOptions& options) {
  auto fallbackTile = ops::defaultAnchorTile(dag, options);
  TESSEL_CHECK(fallbackTile.has_value() && a.reduceExtents.size() == 1, "the default schedule has no tile for dense '{}'",
               a.stage);
  int64_t k = a.reduceExtents[0];
  auto space = std::make_shared<ConfigSpace>();
  SplitOptions tileK = vectorTileOptions(a.maxLanes, true);
  tileK.include = {{k / (fallbackTile->vectors * fallbackTile->lanes), fallbackTile->vectors, fallbackTile->lanes}};
  space->defineSplit("tile_k", k, tileK);
  Template t;
  t.space = space;
  t.fallback = space->fromChoices({*space->optionIndex("tile_k", tileK.include[0])}).index();
  t.apply = [](const ConfigEntity& config, ops::CpuScheduleOptions& o) {
    ops::AnchorTile tile;
    auto tk = config.split("tile_k");
    tile.vectors = tk[1];
    tile.lanes = tk[2];
    o.anchorTile = tile;
  };
  return t;
}

}  // namespace

std::vector<std::string> cpuTemplateNames() {
  std::vector<std::string> names;
  for (const auto& t : ops::allOpTraits())
    if (!t.cpuTemplate.empty()) names.push_back(t.cpuTemplate);
  return names;
}

std::optional<std::string> cpuTemplateFor(const te::ComputeDAG& dag, const target::Target& target) {
  auto anchor = ops::findAnchorStage(dag);
  if (!anchor) return std::nullopt;
  const auto& op = *dag.op(*anchor);
  const auto& traits = ops::traitsOf(op);
  if (traits.cpuTemplate.empty()) return std::nullopt;
  // denseTemplate's space is the rules' tile's neighbourhood: without that tile there is none.
  if (traits.kind == ops::OpKind::Dense &&
      (op.reduction()->axes.size() != 1 || !ops::defaultAnchorTile(dag, ops::cpuScheduleOptionsFor(target))))
    return std::nullopt;
  return traits.cpuTemplate;
}

TuningTaskPtr makeCpuTuningTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                const std::string& templateName) {
  std::string chosen = templateName.empty() ? cpuTemplateFor(dag, target).value_or("") : templateName;
  TESSEL_CHECK(!chosen.empty(), "task '{}': no CPU template applies (templates: {})", name, fmt::join(cpuTemplateNames(), ", "));
  ops::CpuScheduleOptions options = ops::cpuScheduleOptionsFor(target);
  AnchorInfo anchor = describeAnchor(dag, options);
  TESSEL_CHECK(!anchor.traits->cpuTemplate.empty() && anchor.traits->cpuTemplate == chosen,
               "task '{}': template '{}' does not fit its anchor '{}' ({}); known templates: {}", name, chosen, anchor.stage,
               anchor.traits->tag, fmt::join(cpuTemplateNames(), ", "));
  Template t = anchor.traits->kind == ops::OpKind::Dense ? denseTemplate(dag, anchor, options)
                                                         : registerTileTemplate(dag, anchor, options);
  auto task = std::make_shared<TuningTask>();
  task->name = name;
  task->templateName = chosen;
  task->measure = makeMeasureTask(name, dag, target);
  task->flops = dag.flopCount();
  task->space = t.space;
  // Both go through the default schedule's rules with the config's tile, so the fallback config
  // is exactly the untuned schedule.
  task->instantiate = [dag, options, apply = t.apply](const ConfigEntity& config) {
    ops::CpuScheduleOptions o = options;
    apply(config, o);
    return ops::defaultCpuSchedule(dag, o);
  };
  task->instantiateState = [dag, options, apply = t.apply](const ConfigEntity& config) {
    ops::CpuScheduleOptions o = options;
    apply(config, o);
    o.checkLowering = false;
    schedule::State state;
    ops::defaultCpuSchedule(dag, o, &state);
    return state;
  };
  task->fallbackIndex = t.fallback;
  task->unprunedSize = t.unprunedSize ? t.unprunedSize : t.space->size();
  return task;
}

}  // namespace tessel::tune::autotvm
