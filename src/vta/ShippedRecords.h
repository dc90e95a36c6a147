/// The tuning records shipped with tessel, as TVM ships tophub's for VTA: for the default
/// hardware configuration, the best conv2d_packed config of each of resnet-18's ten tasks
/// (bench/vta/bench_vta_tasks --records, every config of each space measured on the cycle
/// model; records/vta/<configuration>.log, embedded at build time by tune/ShippedRecords). A build
/// applies them to the tasks its own records do not cover.
#pragma once
#include <vector>

#include "tune/Record.h"
#include "vta/VtaTasks.h"

namespace tessel::vta {

/// The shipped records of a configuration, by its name (none for a configuration tessel has
/// none for).
std::vector<tune::TuningRecord> shippedRecords(const HardwareConfig& config);

/// `records`, plus the shipped record of every task in `tasks` that has no valid record of
/// target "vta" among them. `added` (optional) receives how many were added.
std::vector<tune::TuningRecord> withShippedRecords(std::vector<tune::TuningRecord> records, const std::vector<VtaConv2dTask>& tasks,
                                                   const HardwareConfig& config, int* added = nullptr);

}  // namespace tessel::vta
