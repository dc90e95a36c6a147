#include "driver/PreparedModel.h"

#include <fmt/format.h>

#include <map>

#include "graph/GpuTargetLimits.h"
#include "graph/TaskExtraction.h"
#include "graph/VariantChoice.h"
#include "ops/Winograd.h"

namespace tessel::driver {

namespace {

/// The fixed tile size of a Fixed mode as a choice; empty for Never and Auto.
graph::WinogradChoice fixedWinogradChoice(const WinogradMode& mode) {
  if (mode.kind != WinogradMode::Kind::Fixed) return {};
  return [m = mode.tileSize](const graph::Graph&, int) { return m; };
}

/// The CPU the graph's CPU rules are for: a CPU target's machine, else this machine's (the host
/// of a GPU or VTA target keeps its operators here).
const target::CpuMachine& cpuMachineOf(const target::Target& target) { return target.isCpu() ? target.cpu : target::hostCpu(); }

/// The Winograd choice of `mode` for a CPU target on `machine` (empty: none).
graph::WinogradChoice winogradChoice(const WinogradMode& mode, const target::CpuMachine& machine) {
  if (mode.kind != WinogradMode::Kind::Auto) return fixedWinogradChoice(mode);
  return graph::defaultWinogradChoice(size_t(machine.l2Bytes));
}

}  // namespace

ops::Layout defaultDesiredLayout(const target::Target& target) {
  // GPU threads along the image width read neighbouring inputs and share weights.
  return target.isGpu() ? ops::Layout::NCHW : ops::Layout::NHWC;
}

PreparedModel prepareModel(graph::Graph model, const PrepareOptions& o) {
  const bool gpu = o.target.isGpu();
  graph::OptimizeOptions options;
  options.desiredLayout = o.desiredLayout;
  options.simplify = o.optimize;
  options.fuseSeparable = o.fuseSeparable && !gpu;
  options.combineProducts = o.combineProducts;
  const graph::PassRunOptions& run = o.run;
  PreparedModel prepared;
  prepared.base = graph::optimizeGraph(std::move(model), options, run);
  if (gpu && o.optimize && o.splitReductions)
    prepared.base = graph::applyReductionSplits(
        prepared.base, graph::gpuReductionSplitChoice(graph::gpuLimitsForBuild(o.target).multiProcessorCount), run);
  // GPU only: the CPU schedules read a product's operands in place, with no copy for the layout
  // ops to hide in (BERT-base untuned, Zen 4, 2 threads: 140-156 ms with them in the products
  // against 116-127 as copies of their own, six rounds alternated, 2026-12-03).
  if (gpu && o.optimize && o.fuseLayouts) prepared.base = graph::runPasses(prepared.base, {"fuse_layouts_into_products"}, run);
  if (gpu && o.optimize && o.fuseAttention) prepared.base = graph::runPasses(prepared.base, {"fuse_attention"}, run);
  if (!o.optimize) {
    prepared.direct = prepared.chosen = prepared.chosenUnpacked = prepared.base;
    prepared.winograd = {prepared.base};
    return prepared;
  }
  if (o.packWeights && !gpu) prepared.pack = graph::defaultPackChoice(cpuMachineOf(o.target));
  prepared.direct = graph::applyPacking(prepared.base, prepared.pack, run);
  prepared.variants = o.winograd.kind == WinogradMode::Kind::Auto;
  if (gpu) {
    // The NCHW form on GPU targets. Untuned, auto stays direct (as TVM's CUDA builds without
    // records do); tuning measures every candidate both ways and the records choose.
    prepared.winogradLayout = ops::Layout::NCHW;
    graph::WinogradChoice choice = prepared.variants ? graph::gpuWinogradChoice() : fixedWinogradChoice(o.winograd);
    graph::Graph winograd = graph::applyWinograd(prepared.base, choice, run, ops::Layout::NCHW);
    prepared.chosenIsDirect = prepared.variants;
    prepared.chosenUnpacked = prepared.chosenIsDirect ? prepared.base : winograd;
    prepared.chosen = graph::applyPacking(prepared.chosenUnpacked, prepared.pack, run);
    prepared.winograd = {graph::applyPacking(winograd, prepared.pack, run)};
    return prepared;
  }
  const target::CpuMachine& machine = cpuMachineOf(o.target);
  if (!prepared.variants) {
    prepared.chosenUnpacked = graph::applyWinograd(prepared.base, winogradChoice(o.winograd, machine), run);
    prepared.chosen = graph::applyPacking(prepared.chosenUnpacked, prepared.pack, run);
    prepared.winograd = {prepared.chosen};
    return prepared;
  }
  std::vector<graph::Graph> unpacked = graph::cpuWinogradVariants(prepared.base, size_t(machine.l2Bytes), run);
  prepared.chosenUnpacked = unpacked[0];
  prepared.chosen = graph::applyPacking(unpacked[0], prepared.pack, run);
  prepared.winograd = {prepared.chosen};
  for (size_t i = 1; i < unpacked.size(); ++i) prepared.winograd.push_back(graph::applyPacking(unpacked[i], prepared.pack));
  return prepared;
}

std::string winogradSummary(const PreparedModel& prepared, const graph::Graph& built) {
  int candidates = 0;
  std::map<int, int> byTile;  // tile size -> convolutions
  for (size_t i = 0; i < prepared.base.nodes().size(); ++i)
    candidates += graph::winogradCandidate(prepared.base, int(i), prepared.winogradLayout);
  for (size_t i = 0; i < built.nodes().size(); ++i)
    if (int m = graph::winogradTileSize(built, int(i))) ++byTile[m];
  if (candidates == 0) return "";
  // Largest tile first; F(4x4) and F(2x2), the rule's two, even when none.
  int total = 0;
  std::string counts;
  for (auto m = std::rbegin(ops::kWinogradTileSizes); m != std::rend(ops::kWinogradTileSizes); ++m) {
    int n = byTile[*m];
    total += n;
    if (n > 0 || *m <= 4) counts += fmt::format("{}F({}x{}): {}", counts.empty() ? "" : ", ", *m, *m, n);
  }
  return fmt::format("Winograd for {} of {} stride-1 3x3 convolutions ({})", total, candidates, counts);
}

namespace {

/// The packing of `unpacked` (a variant before packing) that keeps HWIO weights where the
/// unpacked function has a record and the packed one has none: a log tuned before packing
/// existed still applies. `kept` counts those layers.
graph::Graph packByRecords(const PreparedModel& prepared, const graph::Graph& unpacked, const tune::HistoryBest& best, int& kept) {
  if (!prepared.pack) return unpacked;
  auto unpackedKeys = graph::workloadKeysByNode(unpacked);
  auto packedKeys = graph::workloadKeysByNode(graph::applyPacking(unpacked, prepared.pack));
  return graph::applyPacking(unpacked, [&](const graph::Graph& g, int id) {
    int64_t block = prepared.pack(g, id);
    const std::string& name = g.node(id).name;
    auto packed = packedKeys.find(name), hwio = unpackedKeys.find(name);
    bool packedRecord = packed != packedKeys.end() && best.find(packed->second);
    if (block == 0 || packedRecord || hwio == unpackedKeys.end() || !best.find(hwio->second)) return block;
    ++kept;
    return int64_t(0);
  });
}

}  // namespace

RecordsChoice chooseByRecords(const PreparedModel& prepared, const tune::HistoryBest& best) {
  int kept = 0;
  auto withPacking = [&](RecordsChoice r) {
    if (kept > 0)
      r.summary += fmt::format("{}HWIO weights kept for {} layer{} whose records were tuned without packing",
                               r.summary.empty() ? "" : "; ", kept, kept == 1 ? "" : "s");
    return r;
  };
  if (!prepared.variants) {
    graph::Graph g = packByRecords(prepared, prepared.chosenUnpacked, best, kept);
    return withPacking({g, winogradSummary(prepared, g)});
  }
  // A layer takes its fastest measured variant; a record of one variant is enough.
  graph::VariantChoice byCost = graph::chooseVariantsByCost(
      prepared.direct, prepared.winograd, prepared.chosen, [&best](const std::string& key) -> std::optional<double> {
        const tune::TuningRecord* record = best.find(key);
        return record ? std::optional<double>(record->cost()) : std::nullopt;
      });
  RecordsChoice result;
  result.graph = packByRecords(prepared, graph::applyWinograd(prepared.base, byCost.choice, {}, prepared.winogradLayout), best, kept);
  result.summary = winogradSummary(prepared, result.graph);
  if (!result.summary.empty()) result.summary += "; " + byCost.counts.describe();
  return withPacking(result);
}

}  // namespace tessel::driver
