#include "vta/Conv2dPackedTemplate.h"

#include <fmt/format.h>

#include "graph/Operators.h"
#include "support/Error.h"

namespace tessel::vta {

using schedule::StepPtr;
using tune::autotvm::ConfigEntity;
using tune::autotvm::ConfigSpace;

namespace {

/// The inner factor of a two-way split knob.
int64_t innerFactor(const ConfigEntity& config, const std::string& knob) { return config.split(knob).back(); }

/// The DAG's convolution and output stages by their roles.
struct StageNames {
  std::string convolution, output, convolutionInput, weight;
  std::vector<std::string> epilogue;  ///< compute stages between the convolution and the output, in order
  /// The output's axes (bo, co, yy, xx, bi, ci in the output layout [N/b, K/c, OH, OW, b, c]).
  std::vector<std::string> outputAxes;
};

std::string firstAxis(const te::ComputeDAG& dag, const std::string& stage) { return dag.op(stage)->axes.at(0).var.name(); }

StageNames stageNames(const te::ComputeDAG& dag) {
  StageNames names;
  for (const te::Operation& op : dag.ops())
    if (op->tag == "conv2d_blocked") names.convolution = op->name;
  TESSEL_CHECK(!names.convolution.empty(), "conv2d_packed: the DAG has no conv2d_blocked stage");
  TESSEL_CHECK(dag.outputNames().size() == 1, "conv2d_packed: the DAG has {} outputs, not one", dag.outputNames().size());
  names.output = dag.outputNames()[0];
  for (const ir::IterVar& axis : dag.op(names.output)->axes) names.outputAxes.push_back(axis.var.name());
  TESSEL_CHECK(names.outputAxes.size() == 6, "conv2d_packed: the output '{}' has {} axes, not 6", names.output,
               names.outputAxes.size());
  auto reads = te::ComputeDAG::accesses(*dag.op(names.convolution));
  TESSEL_CHECK(reads.size() == 2, "conv2d_packed: the convolution reads {} tensors, not data and weight", reads.size());
  names.convolutionInput = reads[0].producer;
  names.weight = reads[1].producer;
  bool after = false;
  for (const te::Operation& op : dag.ops()) {
    if (op->name == names.convolution) {
      after = true;
      continue;
    }
    if (after && !op->isPlaceholder() && op->name != names.output) names.epilogue.push_back(op->name);
  }
  return names;
}

}  // namespace

ConfigSpace conv2dPackedSpace(const Conv2dWorkload& w) {
  ConfigSpace space;
  space.defineSplit("tile_b", w.batchBlocks);
  space.defineSplit("tile_h", w.outHeight);
  space.defineSplit("tile_w", w.outWidth);
  space.defineSplit("tile_ci", w.inputBlocks);
  space.defineSplit("tile_co", w.outputBlocks);
  space.defineKnob("oc_nthread", {1, 2});
  space.defineKnob("h_nthread", {1, 2});
  return space;
}

Conv2dTiling conv2dPackedTiling(const ConfigEntity& config, const PackedConvolution& group) {
  Conv2dTiling t;
  t.rows = innerFactor(config, "tile_h");
  t.columns = innerFactor(config, "tile_w");
  t.inputBlocks = innerFactor(config, "tile_ci");
  t.outputBlocks = innerFactor(config, "tile_co");
  int64_t threads = config.value("oc_nthread").get<int64_t>() * config.value("h_nthread").get<int64_t>();
  t.loadBufferSets = threads;
  t.accumulatorSets = group.storedBytes == 1 ? threads : 1;
  return t;
}

std::vector<StepPtr> conv2dPackedSteps(const te::ComputeDAG& dag, const Conv2dTiling& t) {
  using namespace schedule;
  StageNames n = stageNames(dag);
  std::vector<StepPtr> steps;
  auto add = [&](auto step) { steps.push_back(std::move(step)); };
  const std::string& o = n.output;
  // The output's axes by role, and the names its splits give them.
  const std::string &bo = n.outputAxes[0], &co = n.outputAxes[1], &yy = n.outputAxes[2], &xx = n.outputAxes[3];
  auto outer = [](const std::string& axis) { return axis + ".0"; };
  auto inner = [](const std::string& axis) { return axis + ".1"; };
  // The operands of the GEMM in the input and weight buffers; the DMA loads them.
  add(std::make_shared<CacheReadStep>(n.convolutionInput, "local.inp_buffer", std::vector<std::string>{n.convolution}));
  add(std::make_shared<CacheReadStep>(n.weight, "local.wgt_buffer", std::vector<std::string>{n.convolution}));
  // The output tile: TVM's (bo, h0, co0, w0, co1, h1, w1, bi, ci), virtual threads outermost.
  add(std::make_shared<SplitStep>(o, co, std::vector<int64_t>{t.outputBlocks}));
  add(std::make_shared<SplitStep>(o, yy, std::vector<int64_t>{t.rows}));
  add(std::make_shared<SplitStep>(o, xx, std::vector<int64_t>{t.columns}));
  // Threads: the sets the tiles rotate through (the loop order does not say which axis they
  // come from, see the header), written as TVM's h_nthread split.
  std::vector<std::string> order = {bo};
  std::string rowsOuter = outer(yy);
  if (t.loadBufferSets > 1) {
    add(std::make_shared<SplitStep>(o, outer(yy), std::vector<int64_t>{}, t.loadBufferSets));
    add(std::make_shared<AnnotateStep>(o, outer(outer(yy)), Annotation::VThread));
    order.push_back(outer(outer(yy)));
    rowsOuter = inner(outer(yy));
  }
  for (const std::string& it : {rowsOuter, outer(co), outer(xx), inner(co), inner(yy), inner(xx), n.outputAxes[4], n.outputAxes[5]})
    order.push_back(it);
  add(std::make_shared<ReorderStep>(o, order));
  add(std::make_shared<PragmaStep>(o, inner(co), "dma_copy", "store"));
  // The epilogue on the ALU and the convolution in the accumulator, at the tile.
  if (n.convolution != o) {
    for (auto e = n.epilogue.rbegin(); e != n.epilogue.rend(); ++e) {
      add(std::make_shared<ComputeAtStep>(*e, o, outer(xx)));
      add(std::make_shared<PragmaStep>(*e, firstAxis(dag, *e), "alu", "local.acc_buffer"));
    }
    add(std::make_shared<ComputeAtStep>(n.convolution, o, outer(xx)));
  }
  const std::string& c = n.convolution;
  add(std::make_shared<PragmaStep>(c, "bo", "storage_scope", "local.acc_buffer"));
  // Input-channel tiles outermost; a micro-op per (output block, input block, tap), the
  // kernel's two loops over the tile's rows and columns, the GEMM on the lanes.
  add(std::make_shared<SplitStep>(c, "ko", std::vector<int64_t>{t.inputBlocks}));
  add(std::make_shared<ReorderStep>(c, std::vector<std::string>{"ko.0", "bo", "co", "ko.1", "ry", "rx", "yy", "xx", "bi", "ci", "ki"}));
  add(std::make_shared<PragmaStep>(c, "bi", "tensorize", "vta.gemm"));
  for (const std::string& loaded : {n.convolutionInput + ".local.inp_buffer", n.weight + ".local.wgt_buffer"}) {
    add(std::make_shared<ComputeAtStep>(loaded, c, "ko.0"));
    add(std::make_shared<PragmaStep>(loaded, "ax0", "dma_copy", "load"));  // a cache_read stage's first axis
  }
  return steps;
}

Conv2dTiling conv2dTilingOfSteps(const Conv2dPackedProblem& problem, const std::vector<StepPtr>& steps) {
  schedule::replay(problem.dag, steps);  // throws, naming the step, when they do not apply
  StageNames n = stageNames(problem.dag);
  Conv2dTiling t;
  int found = 0;
  for (const StepPtr& step : steps) {
    auto split = std::dynamic_pointer_cast<const schedule::SplitStep>(step);
    if (!split) continue;
    auto factor = [&]() {
      TESSEL_CHECK(split->factors.size() == 1 && split->nparts == 0, "conv2d_packed: '{}' is not a two-way split by a factor",
                   split->print());
      ++found;
      return split->factors[0];
    };
    const std::vector<std::string>& axes = n.outputAxes;
    if (split->stage == n.output && split->iterator == axes[1]) t.outputBlocks = factor();
    else if (split->stage == n.output && split->iterator == axes[2]) t.rows = factor();
    else if (split->stage == n.output && split->iterator == axes[3]) t.columns = factor();
    else if (split->stage == n.convolution && split->iterator == "ko") t.inputBlocks = factor();
    else if (split->stage == n.output && split->iterator == axes[2] + ".0" && split->nparts > 0) t.loadBufferSets = split->nparts;
  }
  TESSEL_CHECK(found == 4, "conv2d_packed: the steps split {} of the tile's four axes (rows, columns, output and input blocks)",
               found);
  t.accumulatorSets = problem.group.storedBytes == 1 ? t.loadBufferSets : 1;
  return t;
}

double conv2dPackedFlops(const Conv2dWorkload& w, const HardwareConfig& config) {
  return 2.0 * double(w.gemmCount()) * config.batch() * config.blockIn() * config.blockOut();
}

Conv2dPackedProblem conv2dPackedProblem(const graph::Graph& graph, const graph::FusedGroup& group, const HardwareConfig& config) {
  Conv2dPackedProblem p;
  p.group = describePackedConvolution(graph, group);
  p.workload = Conv2dWorkload::of(graph, p.group.convolution);
  p.config = config;
  p.dag = graph::buildGroupDAG(graph, group);
  return p;
}

graph::Graph conv2dPackedTaskGraph(const Conv2dWorkload& w, const HardwareConfig& config, uint64_t seed) {
  graph::registerStandardOps();
  graph::Graph g;
  int data = g.addInput("data", {{w.batchBlocks, w.inputBlocks, w.height, w.width, config.batch(), config.blockIn()},
                                 DataType::int8()});
  auto weight = runtime::Tensor::empty({w.outputBlocks, w.inputBlocks, w.kernelHeight, w.kernelWidth, config.blockOut(),
                                        config.blockIn()},
                                       DataType::int8());
  // Small values of a linear congruential sequence: sums that use the whole int32 range
  // after the shift would clip everything to the same byte.
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (int64_t i = 0; i < weight.numel(); ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    weight.dataAs<int8_t>()[i] = int8_t(int64_t(state >> 59) - 16);
  }
  int kernel = g.addConstant("weight", std::move(weight));
  graph::Attrs attrs = {{"strides", {w.strideHeight, w.strideWidth}},
                        {"padding", {w.padding[0], w.padding[1], w.padding[2], w.padding[3]}},
                        {"out_dtype", "int32"}};
  int conv = g.addOp("conv2d_blocked", {data, kernel}, attrs, "conv2d_packed");
  int shifted = g.addOp("right_shift", {conv}, {{"bits", 8}}, "shifted");
  int clipped = g.addOp("clip", {shifted}, {{"min", 0.0}, {"max", 127.0}}, "clipped");
  g.markOutput(g.addOp("cast", {clipped}, {{"dtype", "int8"}}, "result"));
  return g;
}

Conv2dPackedProblem conv2dPackedTaskProblem(const Conv2dWorkload& workload, const HardwareConfig& config) {
  graph::Graph g = conv2dPackedTaskGraph(workload, config);
  auto groups = graph::fuseOperators(g);
  TESSEL_CHECK(groups.size() == 1, "conv2d_packed: the task's graph fused into {} groups, not one", groups.size());
  return conv2dPackedProblem(g, groups[0], config);
}

std::string conv2dPackedTaskName(const Conv2dWorkload& w, const HardwareConfig& config) {
  return fmt::format("conv2d_packed_{}x{}_{}_{}_{}x{}_s{}", w.height, w.width, w.inputBlocks * config.blockIn(),
                     w.outputBlocks * config.blockOut(), w.kernelHeight, w.kernelWidth, w.strideHeight);
}

std::string conv2dPackedShapeLine(const Conv2dWorkload& w, const HardwareConfig& config) {
  return fmt::format("({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})", w.batchBlocks * config.batch(), w.height, w.width,
                     w.inputBlocks * config.blockIn(), w.outputBlocks * config.blockOut(), w.kernelHeight, w.kernelWidth,
                     w.padding[0], w.padding[1], w.strideHeight, w.strideWidth);
}

tune::autotvm::TuningTaskPtr makeConv2dPackedTask(const std::string& name, const Conv2dPackedProblem& problem) {
  auto space = std::make_shared<const ConfigSpace>(conv2dPackedSpace(problem.workload));
  auto task = std::make_shared<tune::autotvm::TuningTask>();
  task->name = name;
  task->templateName = kConv2dPackedTemplate;
  task->measure = tune::makeMeasureTask(name, problem.dag, "vta");
  task->flops = conv2dPackedFlops(problem.workload, problem.config);
  task->space = space;
  task->unprunedSize = space->size();
  task->instantiate = [problem](const ConfigEntity& config) {
    Conv2dTiling tiling = conv2dPackedTiling(config, problem.group);
    if (auto reason = tilingProblem(problem.workload, tiling, problem.group, problem.config))
      fail("conv2d_packed config {}: {}", config.index(), *reason);
    return conv2dPackedSteps(problem.dag, tiling);
  };
  // The fallback: the rule-based tiling, which is in the space (its rows divide the height,
  // its threads are one or two).
  Conv2dTiling fallback = defaultConv2dTiling(problem.workload, problem.group, problem.config);
  std::vector<size_t> choices;
  auto choose = [&](const std::string& knob, const nlohmann::json& value) {
    auto index = space->optionIndex(knob, value);
    TESSEL_CHECK(index.has_value(), "conv2d_packed: the default tiling's {} {} is not in the space", knob, value.dump());
    choices.push_back(*index);
  };
  const Conv2dWorkload& w = problem.workload;
  choose("tile_b", std::vector<int64_t>{w.batchBlocks, 1});
  choose("tile_h", std::vector<int64_t>{w.outHeight / fallback.rows, fallback.rows});
  choose("tile_w", std::vector<int64_t>{w.outWidth / fallback.columns, fallback.columns});
  choose("tile_ci", std::vector<int64_t>{w.inputBlocks / fallback.inputBlocks, fallback.inputBlocks});
  choose("tile_co", std::vector<int64_t>{w.outputBlocks / fallback.outputBlocks, fallback.outputBlocks});
  choose("oc_nthread", fallback.loadBufferSets);
  choose("h_nthread", 1);
  task->fallbackIndex = space->fromChoices(choices).index();
  return task;
}

}  // namespace tessel::vta
