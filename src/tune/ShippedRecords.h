/// The tuning records shipped with tessel (the role of TVM's tophub): the best records of the
/// zoo networks for the devices tessel was tuned on, one log per device class under the
/// repository's `records/` ("cpu/x86_64-avx512.log", "cuda/sm_90.log", "vta/<configuration>.log"), embedded in the
/// program at build time so that an installed tessel needs no data files. A build uses them for
/// the workloads the user's own records do not cover.
#pragma once
#include "target/Target.h"
#include <set>
#include <string>
#include <vector>

#include "tune/Record.h"

namespace tessel::tune {

/// The names of the shipped logs ("cpu/x86_64-avx512", ...), sorted.
std::vector<std::string> shippedRecordSets();

/// The records of a shipped log; none for a name tessel ships nothing for. A line that does
/// not parse is an Error naming the log and the line (a test reads every log).
std::vector<TuningRecord> shippedRecords(const std::string& set);

/// The shipped log for a CPU target: "cpu/" + the record family of its machine model (its ISA
/// class, "-zen" added where its register tiles follow a Zen tuning: CpuMachine::recordFamily;
/// the family may have no log).
std::string shippedRecordSetForCpu(const target::Target& target);

/// The shipped log for a GPU target: "cuda/" + the CUDA architecture of a "cuda ..." target
/// (records tuned on one GPU of an architecture serve its others best of all); empty for an
/// OpenCL target, whose devices have nothing in common to ship for.
std::string shippedRecordSetForGpu(const target::Target& target);

/// `records`, plus the `shipped` records of every workload that has no valid record of the
/// same target kind among `records`: the user's own measurements always win. `added`, when
/// given, receives the workload keys the shipped records were added for.
std::vector<TuningRecord> withShippedRecords(std::vector<TuningRecord> records, std::vector<TuningRecord> shipped,
                                             std::set<std::string>* added = nullptr);

}  // namespace tessel::tune
