#include "vta/DensePackedTemplate.h"

#include <fmt/format.h>

#include "graph/Operators.h"
#include "support/Error.h"
#include "vta/PackedTemplate.h"

namespace tessel::vta {

using schedule::StepPtr;
using tune::autotvm::ConfigEntity;
using tune::autotvm::ConfigSpace;

namespace {

PackedStages denseStages(const te::ComputeDAG& dag) { return packedStages(dag, "dense_blocked", 4, kDensePackedTemplate); }

}  // namespace

ConfigSpace densePackedSpace(const DenseWorkload& w) {
  ConfigSpace space;
  space.defineSplit("tile_b", w.batchBlocks);
  space.defineSplit("tile_ci", w.inputBlocks);
  space.defineSplit("tile_co", w.outputBlocks);
  space.defineKnob("oc_nthread", {1, 2});
  return space;
}

DenseTiling densePackedTiling(const ConfigEntity& config, const PackedConvolution& group) {
  DenseTiling t;
  t.batchBlocks = config.split("tile_b").back();
  t.inputBlocks = config.split("tile_ci").back();
  t.outputBlocks = config.split("tile_co").back();
  t.loadBufferSets = config.value("oc_nthread").get<int64_t>();
  t.accumulatorSets = group.storedBytes == 1 ? t.loadBufferSets : 1;
  return t;
}

std::vector<StepPtr> densePackedSteps(const te::ComputeDAG& dag, const DenseTiling& t) {
  using namespace schedule;
  PackedStages n = denseStages(dag);
  std::vector<StepPtr> steps;
  auto add = [&](auto step) { steps.push_back(std::move(step)); };
  const std::string& o = n.output;
  const std::string &bo = n.outputAxes[0], &co = n.outputAxes[1];
  add(std::make_shared<CacheReadStep>(n.data, "local.inp_buffer", std::vector<std::string>{n.gemm}));
  add(std::make_shared<CacheReadStep>(n.weight, "local.wgt_buffer", std::vector<std::string>{n.gemm}));
  // The output tile: TVM's (bo.0, co.0, bo.1, co.1, bi, ci), the store at co.0.
  add(std::make_shared<SplitStep>(o, bo, std::vector<int64_t>{t.batchBlocks}));
  add(std::make_shared<SplitStep>(o, co, std::vector<int64_t>{t.outputBlocks}));
  std::vector<std::string> order;
  std::string channelTiles = co + ".0";
  if (t.loadBufferSets > 1) {
    // The virtual threads over the output-channel tiles, outermost, as TVM binds them.
    add(std::make_shared<SplitStep>(o, co + ".0", std::vector<int64_t>{}, t.loadBufferSets));
    add(std::make_shared<AnnotateStep>(o, co + ".0.0", Annotation::VThread));
    order.push_back(co + ".0.0");
    channelTiles = co + ".0.1";
  }
  for (const std::string& it : {bo + ".0", channelTiles, bo + ".1", co + ".1", n.outputAxes[2], n.outputAxes[3]})
    order.push_back(it);
  add(std::make_shared<ReorderStep>(o, order));
  add(std::make_shared<PragmaStep>(o, co + ".1", "dma_copy", "store"));
  if (n.gemm != o) {
    for (auto e = n.epilogue.rbegin(); e != n.epilogue.rend(); ++e) {
      add(std::make_shared<ComputeAtStep>(*e, o, channelTiles));
      add(std::make_shared<PragmaStep>(*e, dag.op(*e)->axes.at(0).var.name(), "alu", "local.acc_buffer"));
    }
    add(std::make_shared<ComputeAtStep>(n.gemm, o, channelTiles));
  }
  const std::string& d = n.gemm;
  add(std::make_shared<PragmaStep>(d, "bo", "storage_scope", "local.acc_buffer"));
  // Input-channel tiles outermost (one load of the tile's input and weight blocks each), the
  // micro-op kernel's loop over the batch blocks, a micro-op per (output block, input block).
  add(std::make_shared<SplitStep>(d, "ko", std::vector<int64_t>{t.inputBlocks}));
  add(std::make_shared<ReorderStep>(d, std::vector<std::string>{"ko.0", "bo", "co", "ko.1", "bi", "ci", "ki"}));
  add(std::make_shared<PragmaStep>(d, "bi", "tensorize", "vta.gemm"));
  for (const std::string& loaded : {n.data + ".local.inp_buffer", n.weight + ".local.wgt_buffer"}) {
    add(std::make_shared<ComputeAtStep>(loaded, d, "ko.0"));
    add(std::make_shared<PragmaStep>(loaded, "ax0", "dma_copy", "load"));
  }
  return steps;
}

DenseTiling denseTilingOfSteps(const DensePackedProblem& problem, const std::vector<StepPtr>& steps) {
  PackedStages n = denseStages(problem.dag);
  const std::vector<std::string>& axes = n.outputAxes;
  DenseTiling t;
  readTileSplits(problem.dag, steps,
                 {{n.output, axes[0], &t.batchBlocks}, {n.output, axes[1], &t.outputBlocks}, {n.gemm, "ko", &t.inputBlocks}},
                 n.output, axes[1] + ".0", &t.loadBufferSets, kDensePackedTemplate, "batch, output and input blocks");
  t.accumulatorSets = problem.group.storedBytes == 1 ? t.loadBufferSets : 1;
  return t;
}

double densePackedFlops(const DenseWorkload& w, const HardwareConfig& config) {
  return 2.0 * double(w.gemmCount()) * config.batch() * config.blockIn() * config.blockOut();
}

DensePackedProblem densePackedProblem(const graph::Graph& graph, const graph::FusedGroup& group, const HardwareConfig& config) {
  DensePackedProblem p;
  p.group = describePackedConvolution(graph, group, "dense_blocked");
  p.workload = DenseWorkload::of(graph, p.group.convolution);
  p.config = config;
  p.dag = graph::buildGroupDAG(graph, group);
  return p;
}

graph::Graph densePackedTaskGraph(const DenseWorkload& w, const HardwareConfig& config, uint64_t seed) {
  graph::registerStandardOps();
  graph::Graph g;
  int data = g.addInput("data", {{w.batchBlocks, w.inputBlocks, config.batch(), config.blockIn()}, DataType::int8()});
  auto weight = seededWeight({w.outputBlocks, w.inputBlocks, config.blockOut(), config.blockIn()}, seed);
  int kernel = g.addConstant("weight", std::move(weight));
  addTaskEpilogue(g, g.addOp("dense_blocked", {data, kernel}, {{"out_dtype", "int32"}}, "dense_packed"));
  return g;
}

DensePackedProblem densePackedTaskProblem(const DenseWorkload& workload, const HardwareConfig& config) {
  graph::Graph g = densePackedTaskGraph(workload, config);
  auto groups = graph::fuseOperators(g);
  TESSEL_CHECK(groups.size() == 1, "dense_packed: the task's graph fused into {} groups, not one", groups.size());
  return densePackedProblem(g, groups[0], config);
}

std::string densePackedTaskName(const DenseWorkload& w, const HardwareConfig& config) {
  return fmt::format("dense_packed_{}_{}_{}", w.batchBlocks * config.batch(), w.inputBlocks * config.blockIn(),
                     w.outputBlocks * config.blockOut());
}

std::string densePackedShapeLine(const DenseWorkload& w, const HardwareConfig& config) {
  return fmt::format("({}, {}, {})", w.batchBlocks * config.batch(), w.inputBlocks * config.blockIn(),
                     w.outputBlocks * config.blockOut());
}

tune::autotvm::TuningTaskPtr makeDensePackedTask(const std::string& name, const DensePackedProblem& problem) {
  auto instantiate = [problem](const ConfigEntity& config) {
    DenseTiling tiling = densePackedTiling(config, problem.group);
    if (auto reason = denseTilingProblem(problem.workload, tiling, problem.group, problem.config))
      fail("dense_packed config {}: {}", config.index(), *reason);
    return densePackedSteps(problem.dag, tiling);
  };
  // The fallback: the rule-based tiling, which is in the space (its factors divide their axes,
  // its threads are one or two).
  DenseTiling fallback = defaultDenseTiling(problem.workload, problem.group, problem.config);
  const DenseWorkload& w = problem.workload;
  using Split = std::vector<int64_t>;
  return makePackedTask(name, kDensePackedTemplate, problem.dag, densePackedFlops(w, problem.config), densePackedSpace(w),
                        instantiate,
                        {{"tile_b", Split{w.batchBlocks / fallback.batchBlocks, fallback.batchBlocks}},
                         {"tile_ci", Split{w.inputBlocks / fallback.inputBlocks, fallback.inputBlocks}},
                         {"tile_co", Split{w.outputBlocks / fallback.outputBlocks, fallback.outputBlocks}},
                         {"oc_nthread", fallback.loadBufferSets}});
}

}  // namespace tessel::vta
