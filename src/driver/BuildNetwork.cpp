#include "driver/BuildNetwork.h"

#include <fmt/format.h>

#include <map>
#include <optional>

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

BuildNetworkResult buildNetwork(const BuildNetworkOptions& o) {
  const target::Target& target = o.prepare.target;
  TESSEL_CHECK(target.isCpu(), "--target {}: this build is for CPU targets", target.str());
  checkModuleOutput(o.output);
  TESSEL_CHECK(o.records.empty() || !o.naive, "--records and --naive exclude each other");
  // Tessel's shipped records fill the workloads the user's records do not cover.
  ShippedRecordsUse shipped =
      o.naive || !o.shippedRecords ? ShippedRecordsUse{} : ShippedRecordsUse::of(tune::shippedRecordSetForCpu(target), target);
  // The log is read before the network is prepared: a bad log fails before any work.
  std::optional<tune::HistoryBest> best = shipped.historyBest(o.records, target);
  PreparedModel prepared = prepareModel(o.model, o.prepare);
  RecordsChoice chosen = best ? chooseByRecords(prepared, *best) : RecordsChoice{prepared.chosen, winogradSummary(prepared, prepared.chosen)};
  graph::BuildOptions options;
  options.target = target;
  options.fuse = o.fuse;
  DefaultSchedules defaults(target);
  if (best) options.schedule = best->provider(defaults.provider());
  else if (!o.naive) options.schedule = defaults.provider();
  BuildNetworkResult result;
  writeModule(o.output, [&](const std::string& directory) { result.report = graph::buildGraph(chosen.graph, directory, options); });

  auto line = [&](std::string text) {
    if (!text.empty()) result.lines.push_back(std::move(text));
  };
  if (!o.records.empty()) line(fmt::format("{}: {}", o.records, best->summary()));
  line(shipped.summary(best, target.str()));
  result.warnings = shipped.skipped(best);
  if (best)
    for (std::string& note : recordsOfOtherMachines(*best, target.cpu)) line(std::move(note));
  line(chosen.summary);
  if (!o.naive) line(defaults.summary());
  return result;
}

}  // namespace tessel::driver
