/// What a network build (BuildNetwork.cpp for CPU targets, BuildGpuNetwork.cpp for GPU targets)
/// applies the same way whatever the target: the records read first (the user's log with the
/// shipped records filling the rest), the network prepared and each layer's variant chosen by
/// them, and afterwards the lines that say which records applied.
#pragma once
#include <optional>

#include "driver/BuildNetwork.h"
#include "driver/PreparedModel.h"
#include "driver/ShippedRecordsUse.h"
#include "tune/HistoryBest.h"

namespace tessel::driver {

struct BuildRecords {
  ShippedRecordsUse shipped;
  std::optional<tune::HistoryBest> best;  ///< nullopt: no records at all
  RecordsChoice chosen;                   ///< the network to build, its variants chosen by `best` (or the rules)
};

/// The log is read before the network is prepared: a bad log fails before any work.
BuildRecords applyRecords(const BuildNetworkOptions& options, ShippedRecordsUse shipped);

/// After the build: the user's log's summary and the shipped records' line into `result.lines`,
/// the shipped records that did not replay into `result.warnings`.
void reportRecords(const BuildNetworkOptions& options, const BuildRecords& records, BuildNetworkResult& result);

}  // namespace tessel::driver
