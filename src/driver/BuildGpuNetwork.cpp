#include "driver/BuildGpuNetwork.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <initializer_list>
#include <optional>

#include "driver/BuildRecords.h"
#include "driver/GpuSchedules.h"
#include "driver/GpuTargetHost.h"
#include "driver/ModuleOutput.h"
#include "driver/ShippedRecordsUse.h"
#include "graph/GpuTargetLimits.h"
#include "ops/GpuSchedules.h"
#include "support/Error.h"
#include "tune/HistoryBest.h"
#include "tune/ShippedRecords.h"

namespace tessel::driver {

namespace {

/// A default-GPU-schedule rule as `tessel compile` spells it: nullopt for "auto", else one of
/// `allowed`. Error naming the flag and every value it takes.
std::optional<int> ruleValue(const char* flag, const std::string& value, std::initializer_list<int> allowed) {
  if (value == "auto") return std::nullopt;
  std::vector<std::string> names;
  for (int v : allowed) {
    if (value == std::to_string(v)) return v;
    names.push_back(std::to_string(v));
  }
  std::string last = names.back();
  names.pop_back();
  fail("{}: '{}' is not auto, {} or {}", flag, value, fmt::join(names, ", "), last);
}

/// The rules the options set (nullopt: auto), checked.
struct GivenRules {
  std::optional<int> channelTile, reductionParts;
  bool any() const { return channelTile || reductionParts; }
};

GivenRules givenRules(const BuildNetworkOptions& o) {
  return {ruleValue("--channel-tile", o.channelTile, {1, 2, 4}), ruleValue("--reduction-parts", o.reductionParts, {1, 2, 4, 8, 16})};
}

}  // namespace

std::string checkGpuBuildOptions(const BuildNetworkOptions& o) {
  TESSEL_CHECK(!o.naive, "--naive: a GPU kernel needs its loops bound to blocks and threads; the naive schedule has none");
  TESSEL_CHECK(o.records.empty() || (o.channelTile == "auto" && o.reductionParts == "auto"),
               "--channel-tile and --reduction-parts set the default GPU schedule; with --records the records choose them");
  givenRules(o);  // each value one the rule takes
  std::string host = checkGpuTargetHost(o.prepare.target.str(), o.targetHost);
  checkModuleOutput(o.output);
  return host;
}

BuildNetworkResult buildGpuNetwork(const BuildNetworkOptions& o) {
  std::string host = checkGpuBuildOptions(o);
  const target::Target& target = o.prepare.target;
  GivenRules given = givenRules(o);
  // Shipped records choose their own tiles: an explicit default-schedule rule leaves them out.
  BuildRecords records = applyRecords(
      o, !o.shippedRecords || given.any() ? ShippedRecordsUse{} : ShippedRecordsUse::of(tune::shippedRecordSetForGpu(target), target));
  const std::optional<tune::HistoryBest>& best = records.best;
  graph::BuildOptions options;
  options.target = target;
  options.fuse = o.fuse;
  options.gpuLimits = graph::gpuLimitsForBuild(target);
  const passes::GpuLimits& limits = *options.gpuLimits;
  ops::GpuScheduleOptions rules = ops::gpuScheduleOptionsFor(limits, target.matmulPrecision);
  if (given.channelTile) rules.channelTile = *given.channelTile;
  if (given.reductionParts) rules.reductionParts = *given.reductionParts;
  options.schedule = best ? gpuRecordsProvider(*best, limits, target) : defaultGpuSchedules(rules);
  BuildNetworkResult result;
  writeModule(o.output, [&](const std::string& directory) { result.report = graph::buildGraph(records.chosen.graph, directory, options); });

  reportRecords(o, records, result);
  result.addLine(records.chosen.summary);
  result.gpu = GpuBuildSummary{host, best ? "best records, else the default GPU schedule" : "default GPU schedule", limits.profile};
  return result;
}

}  // namespace tessel::driver
