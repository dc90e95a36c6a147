#include "vta/Conv2dPackedTemplate.h"

#include <fmt/format.h>

#include "graph/Operators.h"
#include "support/Error.h"
#include "vta/PackedTemplate.h"

namespace tessel::vta {

using schedule::StepPtr;
using tune::autotvm::ConfigEntity;
using tune::autotvm::ConfigSpace;

namespace {

/// The inner factor of a two-way split knob.
int64_t innerFactor(const ConfigEntity& config, const std::string& knob) { return config.split(knob).back(); }

std::string firstAxis(const te::ComputeDAG& dag, const std::string& stage) { return dag.op(stage)->axes.at(0).var.name(); }

PackedStages stageNames(const te::ComputeDAG& dag) { return packedStages(dag, "conv2d_blocked", 6, kConv2dPackedTemplate); }

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
  PackedStages n = stageNames(dag);
  std::vector<StepPtr> steps;
  auto add = [&](auto step) { steps.push_back(std::move(step)); };
  const std::string& o = n.output;
  // The output's axes by role, and the names its splits give them.
  const std::string &bo = n.outputAxes[0], &co = n.outputAxes[1], &yy = n.outputAxes[2], &xx = n.outputAxes[3];
  auto outer = [](const std::string& axis) { return axis + ".0"; };
  auto inner = [](const std::string& axis) { return axis + ".1"; };
  // The operands of the GEMM in the input and weight buffers; the DMA loads them.
  add(std::make_shared<CacheReadStep>(n.data, "local.inp_buffer", std::vector<std::string>{n.gemm}));
  add(std::make_shared<CacheReadStep>(n.weight, "local.wgt_buffer", std::vector<std::string>{n.gemm}));
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
  if (n.gemm != o) {
    for (auto e = n.epilogue.rbegin(); e != n.epilogue.rend(); ++e) {
      add(std::make_shared<ComputeAtStep>(*e, o, outer(xx)));
      add(std::make_shared<PragmaStep>(*e, firstAxis(dag, *e), "alu", "local.acc_buffer"));
    }
    add(std::make_shared<ComputeAtStep>(n.gemm, o, outer(xx)));
  }
  const std::string& c = n.gemm;
  add(std::make_shared<PragmaStep>(c, "bo", "storage_scope", "local.acc_buffer"));
  // Input-channel tiles outermost; a micro-op per (output block, input block, tap), the
  // kernel's two loops over the tile's rows and columns, the GEMM on the lanes.
  add(std::make_shared<SplitStep>(c, "ko", std::vector<int64_t>{t.inputBlocks}));
  add(std::make_shared<ReorderStep>(c, std::vector<std::string>{"ko.0", "bo", "co", "ko.1", "ry", "rx", "yy", "xx", "bi", "ci", "ki"}));
  add(std::make_shared<PragmaStep>(c, "bi", "tensorize", "vta.gemm"));
  for (const std::string& loaded : {n.data + ".local.inp_buffer", n.weight + ".local.wgt_buffer"}) {
    add(std::make_shared<ComputeAtStep>(loaded, c, "ko.0"));
    add(std::make_shared<PragmaStep>(loaded, "ax0", "dma_copy", "load"));  // a cache_read stage's first axis
  }
  return steps;
}

Conv2dTiling conv2dTilingOfSteps(const Conv2dPackedProblem& problem, const std::vector<StepPtr>& steps) {
  PackedStages n = stageNames(problem.dag);
  const std::vector<std::string>& axes = n.outputAxes;
  Conv2dTiling t;
  readTileSplits(problem.dag, steps,
                 {{n.output, axes[1], &t.outputBlocks}, {n.output, axes[2], &t.rows}, {n.output, axes[3], &t.columns},
                  {n.gemm, "ko", &t.inputBlocks}},
                 n.output, axes[2] + ".0", &t.loadBufferSets, kConv2dPackedTemplate, "rows, columns, output and input blocks");
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
  auto weight = seededWeight({w.outputBlocks, w.inputBlocks, w.kernelHeight, w.kernelWidth, config.blockOut(), config.blockIn()}, seed);
  int kernel = g.addConstant("weight", std::move(weight));
  graph::Attrs attrs = {{"strides", {w.strideHeight, w.strideWidth}},
                        {"padding", {w.padding[0], w.padding[1], w.padding[2], w.padding[3]}},
                        {"out_dtype", "int32"}};
  addTaskEpilogue(g, g.addOp("conv2d_blocked", {data, kernel}, attrs, "conv2d_packed"));
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
  auto instantiate = [problem](const ConfigEntity& config) {
    Conv2dTiling tiling = conv2dPackedTiling(config, problem.group);
    if (auto reason = tilingProblem(problem.workload, tiling, problem.group, problem.config))
      fail("conv2d_packed config {}: {}", config.index(), *reason);
    return conv2dPackedSteps(problem.dag, tiling);
  };
  // The fallback: the rule-based tiling, which is in the space (its rows divide the height,
  // its threads are one or two).
  Conv2dTiling fallback = defaultConv2dTiling(problem.workload, problem.group, problem.config);
  const Conv2dWorkload& w = problem.workload;
  using Split = std::vector<int64_t>;
  return makePackedTask(name, kConv2dPackedTemplate, problem.dag, conv2dPackedFlops(w, problem.config), conv2dPackedSpace(w),
                        instantiate,
                        {{"tile_b", Split{w.batchBlocks, 1}},
                         {"tile_h", Split{w.outHeight / fallback.rows, fallback.rows}},
                         {"tile_w", Split{w.outWidth / fallback.columns, fallback.columns}},
                         {"tile_ci", Split{w.inputBlocks / fallback.inputBlocks, fallback.inputBlocks}},
                         {"tile_co", Split{w.outputBlocks / fallback.outputBlocks, fallback.outputBlocks}},
                         {"oc_nthread", fallback.loadBufferSets},
                         {"h_nthread", 1}});
}

}  // namespace tessel::vta
