#include "vta/PackedTemplate.h"

#include "graph/Operators.h"
#include "support/Error.h"

namespace tessel::vta {

PackedStages packedStages(const te::ComputeDAG& dag, const std::string& tag, size_t outputRank, const std::string& templateName) {
  PackedStages names;
  for (const te::Operation& op : dag.ops())
    if (op->tag == tag) names.gemm = op->name;
  TESSEL_CHECK(!names.gemm.empty(), "{}: the DAG has no {} stage", templateName, tag);
  TESSEL_CHECK(dag.outputNames().size() == 1, "{}: the DAG has {} outputs, not one", templateName, dag.outputNames().size());
  names.output = dag.outputNames()[0];
  for (const ir::IterVar& axis : dag.op(names.output)->axes) names.outputAxes.push_back(axis.var.name());
  TESSEL_CHECK(names.outputAxes.size() == outputRank, "{}: the output '{}' has {} axes, not {}", templateName, names.output,
               names.outputAxes.size(), outputRank);
  auto reads = te::ComputeDAG::accesses(*dag.op(names.gemm));
  TESSEL_CHECK(reads.size() == 2, "{}: the {} stage reads {} tensors, not data and weight", templateName, tag, reads.size());
  names.data = reads[0].producer;
  names.weight = reads[1].producer;
  bool after = false;
  for (const te::Operation& op : dag.ops()) {
    if (op->name == names.gemm) after = true;
    else if (after && !op->isPlaceholder() && op->name != names.output) names.epilogue.push_back(op->name);
  }
  return names;
}

void readTileSplits(const te::ComputeDAG& dag, const std::vector<schedule::StepPtr>& steps, const std::vector<TileSplit>& splits,
                    const std::string& threadStage, const std::string& threadIterator, int64_t* threads,
                    const std::string& templateName, const std::string& what) {
  schedule::replay(dag, steps);  // throws, naming the step, when they do not apply
  *threads = 1;
  size_t found = 0;
  for (const schedule::StepPtr& step : steps) {
    auto split = std::dynamic_pointer_cast<const schedule::SplitStep>(step);
    if (!split) continue;
    if (split->stage == threadStage && split->iterator == threadIterator && split->nparts > 0) *threads = split->nparts;
    for (const TileSplit& s : splits) {
      if (split->stage != s.stage || split->iterator != s.iterator) continue;
      TESSEL_CHECK(split->factors.size() == 1 && split->nparts == 0, "{}: '{}' is not a two-way split by a factor", templateName,
                   split->print());
      *s.factor = split->factors[0];
      ++found;
    }
  }
  TESSEL_CHECK(found == splits.size(), "{}: the steps split {} of the tile's {} axes ({})", templateName, found, splits.size(), what);
}

runtime::Tensor seededWeight(const std::vector<int64_t>& shape, uint64_t seed) {
  auto weight = runtime::Tensor::empty(shape, DataType::int8());
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (int64_t i = 0; i < weight.numel(); ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    weight.dataAs<int8_t>()[i] = int8_t(int64_t(state >> 59) - 16);
  }
  return weight;
}

void addTaskEpilogue(graph::Graph& g, int gemm) {
  int shifted = g.addOp("right_shift", {gemm}, {{"bits", 8}}, "shifted");
  int clipped = g.addOp("clip", {shifted}, {{"min", 0.0}, {"max", 127.0}}, "clipped");
  g.markOutput(g.addOp("cast", {clipped}, {{"dtype", "int8"}}, "result"));
}

tune::autotvm::TuningTaskPtr makePackedTask(const std::string& name, const std::string& templateName, const te::ComputeDAG& dag,
                                           double flops, tune::autotvm::ConfigSpace space,
                                           std::function<std::vector<schedule::StepPtr>(const tune::autotvm::ConfigEntity&)> instantiate,
                                           const std::vector<std::pair<std::string, nlohmann::json>>& fallback) {
  auto shared = std::make_shared<const tune::autotvm::ConfigSpace>(std::move(space));
  auto task = std::make_shared<tune::autotvm::TuningTask>();
  task->name = name;
  task->templateName = templateName;
  task->measure = tune::makeMeasureTask(name, dag, target::Target::parse("vta"));
  task->flops = flops;
  task->space = shared;
  task->unprunedSize = shared->size();
  task->instantiate = std::move(instantiate);
  std::vector<size_t> choices;
  for (const auto& [knob, value] : fallback) {
    auto index = shared->optionIndex(knob, value);
    TESSEL_CHECK(index.has_value(), "{}: the default tiling's {} {} is not in the space", templateName, knob, value.dump());
    choices.push_back(*index);
  }
  task->fallbackIndex = shared->fromChoices(choices).index();
  return task;
}

}  // namespace tessel::vta
