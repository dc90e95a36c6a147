#include "driver/BuildRecords.h"

#include <fmt/format.h>

namespace tessel::driver {

BuildRecords applyRecords(const BuildNetworkOptions& o, ShippedRecordsUse shipped) {
  std::optional<tune::HistoryBest> best = shipped.historyBest(o.records, o.prepare.target);
  PreparedModel prepared = prepareModel(o.model, o.prepare);
  RecordsChoice chosen = best ? chooseByRecords(prepared, *best) : RecordsChoice{prepared.chosen, winogradSummary(prepared, prepared.chosen)};
  return {std::move(shipped), std::move(best), std::move(chosen)};
}

void reportRecords(const BuildNetworkOptions& o, const BuildRecords& r, BuildNetworkResult& result) {
  if (!o.records.empty()) result.addLine(fmt::format("{}: {}", o.records, r.best->summary()));
  result.addLine(r.shipped.summary(r.best, o.prepare.target.str()));
  result.warnings = r.shipped.skipped(r.best);
}

}  // namespace tessel::driver
