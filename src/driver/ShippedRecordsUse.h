/// The records a network build applies: the user's log, if any, with the records tessel ships
/// for the target's class (tune/ShippedRecords.h) filling the workloads it does not cover — unless
/// they do not fit the target (a CPU log measured with another core count), or none ships.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "target/Target.h"
#include "tune/HistoryBest.h"
#include "tune/Record.h"

namespace tessel::driver {

struct ShippedRecordsUse {
  std::string set;  ///< the class's log name; empty when shipped records are off
  std::vector<tune::TuningRecord> records;
  bool available = false;  ///< tessel ships records for the class, and they fit the target
  std::string unfit;       ///< why the class's records do not fit the target (then none is used)

  /// The shipped log `set` (tune::shippedRecordSetForCpu / ForGpu of the target; empty: off) for
  /// `target`. A CPU log's records were measured on one machine of the class: its kernels are
  /// divided among that machine's cores (and tiled for its caches), so for a target of another
  /// core count the default schedules, made for its own cores, are the better start (on a 16-core
  /// Xeon, resnet-50 with the records of a 2-core machine ran 15.1 ms against 8.0 untuned,
  /// 2026-11-29).
  static ShippedRecordsUse of(const std::string& set, const target::Target& target);

  /// The user's `log` (empty: none) with the shipped records filling what it does not cover;
  /// nullopt when there are no records at all. Takes the shipped records (call once).
  std::optional<tune::HistoryBest> historyBest(const std::string& log, const target::Target& target);

  /// After the build with `best`: "using shipped records for T (S): 5 of 16 kernels", why none
  /// was used, or that none ships for the class; empty when shipped records were off.
  std::string summary(const std::optional<tune::HistoryBest>& best, const std::string& target) const;

  /// The shipped records that did not replay on their function, one line each (kernel: why).
  std::vector<std::string> skipped(const std::optional<tune::HistoryBest>& best) const;
};

}  // namespace tessel::driver
