#include "driver/BuildNetwork.h"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "driver/BuildGpuNetwork.h"
#include "driver/BuildRecords.h"
#include "driver/DefaultSchedules.h"
#include "driver/ModuleOutput.h"
#include "driver/ShippedRecordsUse.h"
#include "support/Error.h"
#include "tune/HistoryBest.h"
#include "tune/ShippedRecords.h"

namespace tessel::driver {

namespace {

/// Notes of records applied to the build that were measured on another class of CPU (another
/// record family: a Zen tuning's AVX2 tiles are not haswell's) or another core count than the
/// target's: their tiles and parallel loops are shaped for that machine.
std::vector<std::string> recordsOfOtherMachines(const tune::HistoryBest& best, const target::CpuMachine& machine) {
  std::map<std::string, int> kernelsByMachine;
  for (const auto& u : best.uses())
    if (u.fromRecord && u.machine && (u.machine->family != machine.recordFamily() || u.machine->cores != machine.cores))
      ++kernelsByMachine[fmt::format("{} with {} cores ({})", u.machine->family, u.machine->cores, u.machine->cpu)];
  std::vector<std::string> notes;
  for (const auto& [measured, kernels] : kernelsByMachine)
    notes.push_back(fmt::format("note: {} kernel{} took records measured on {}, not on this target's {} with {} cores: their "
                                "schedules are shaped for that machine",
                                kernels, kernels == 1 ? "" : "s", measured, machine.recordFamily(), machine.cores));
  return notes;
}

}  // namespace

void checkGpuRulesApply(const target::Target& target, const std::string& channelTile, const std::string& reductionParts) {
  TESSEL_CHECK(channelTile == "auto" || target.isGpu(), "--channel-tile applies to GPU targets (cuda, opencl)");
  TESSEL_CHECK(reductionParts == "auto" || target.isGpu(), "--reduction-parts applies to GPU targets (cuda, opencl)");
}

void checkBuildNetworkOptions(const BuildNetworkOptions& o) {
  const target::Target& target = o.prepare.target;
  checkGpuRulesApply(target, o.channelTile, o.reductionParts);
  if (target.isGpu()) {
    checkGpuBuildOptions(o);
    return;
  }
  TESSEL_CHECK(target.isCpu(), "--target {}: this build is for CPU and GPU targets (cuda, opencl)", target.str());
  TESSEL_CHECK(o.targetHost == "cpu", "--target-host applies to GPU targets (cuda, opencl)");
  checkModuleOutput(o.output);
  TESSEL_CHECK(o.records.empty() || !o.naive, "--records and --naive exclude each other");
}

BuildNetworkResult buildNetwork(const BuildNetworkOptions& o) {
  const target::Target& target = o.prepare.target;
  if (target.isGpu()) return buildGpuNetwork(o);
  checkBuildNetworkOptions(o);
  // Tessel's shipped records fill the workloads the user's records do not cover.
  BuildRecords records = applyRecords(
      o, o.naive || !o.shippedRecords ? ShippedRecordsUse{} : ShippedRecordsUse::of(tune::shippedRecordSetForCpu(target), target));
  const std::optional<tune::HistoryBest>& best = records.best;
  graph::BuildOptions options;
  options.target = target;
  options.fuse = o.fuse;
  DefaultSchedules defaults(target);
  if (best) options.schedule = best->provider(defaults.provider());
  else if (!o.naive) options.schedule = defaults.provider();
  BuildNetworkResult result;
  writeModule(o.output, [&](const std::string& directory) { result.report = graph::buildGraph(records.chosen.graph, directory, options); });

  reportRecords(o, records, result);
  if (best)
    for (std::string& note : recordsOfOtherMachines(*best, target.cpu)) result.addLine(std::move(note));
  result.addLine(records.chosen.summary);
  if (!o.naive) result.addLine(defaults.summary());
  return result;
}

}  // namespace tessel::driver
