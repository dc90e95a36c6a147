#include "driver/ShippedRecordsUse.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "tune/ShippedRecords.h"

namespace tessel::driver {

ShippedRecordsUse ShippedRecordsUse::of(const std::string& set, const target::Target& target) {
  if (set.empty()) return {};
  auto records = tune::shippedRecords(set);
  bool available = !records.empty();
  ShippedRecordsUse use{set, std::move(records), available, ""};
  if (!target.isCpu() || use.records.empty() || !use.records.front().machine) return use;
  const tune::RecordMachine& measured = *use.records.front().machine;
  if (measured.cores == target.cpu.cores) return use;
  use.unfit = fmt::format("they were measured on a {}-core {} and this target has {} cores; the default schedules are made for its "
                          "cores (tune for it, or compile for -num-cores={} to use them)",
                          measured.cores, measured.cpu, target.cpu.cores, measured.cores);
  use.records.clear();
  use.available = false;
  return use;
}

std::optional<tune::HistoryBest> ShippedRecordsUse::historyBest(const std::string& log, const target::Target& target) {
  if (!log.empty()) return tune::HistoryBest::fromLog(log, target, std::move(records));
  if (available) return tune::HistoryBest({}, target, std::move(records));
  return std::nullopt;
}

std::string ShippedRecordsUse::summary(const std::optional<tune::HistoryBest>& best, const std::string& target) const {
  if (set.empty()) return "";
  if (!unfit.empty()) return fmt::format("shipped records for {} ({}) not used: {}", target, set, unfit);
  if (!available || !best)
    return fmt::format("no shipped records for {} ({}): tessel ships records for {}", target, set, fmt::join(tune::shippedRecordSets(), ", "));
  auto uses = best->uses();
  auto fromShipped = std::count_if(uses.begin(), uses.end(), [](const tune::DispatchUse& u) { return u.fromRecord && u.shipped; });
  return fmt::format("using shipped records for {} ({}): {} of {} kernels", target, set, fromShipped, uses.size());
}

std::vector<std::string> ShippedRecordsUse::skipped(const std::optional<tune::HistoryBest>& best) const {
  std::vector<std::string> lines;
  if (set.empty() || !unfit.empty() || !available || !best) return lines;
  for (const tune::DispatchUse& u : best->uses())
    if (u.shipped && !u.fromRecord) lines.push_back(fmt::format("shipped records of {} skipped: {}", u.name, u.note));
  return lines;
}

}  // namespace tessel::driver
