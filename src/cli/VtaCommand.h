/// The `tessel vta` commands:
///   tessel vta config [FILE]      prints a VTA configuration (a vta_config.json, or the built-in
///                                 default) and its derived sizes; rejects an invalid one
///   tessel vta run PROGRAM        runs a serialized VTA program (the JSON format of
///                                 src/vta/Program.h) on the simulator and prints the statistics
///                                 in seed 004's format, then the simulated cycles and time
/// Options of `run`: --order timed|random, --seed N, --clock-mhz F, --dram-bytes-per-cycle N,
/// --dram-latency N, --disassemble, --print-outputs.
#pragma once
#include <CLI/CLI.hpp>

namespace tessel::cli {

void addVtaCommands(CLI::App& app);

}  // namespace tessel::cli
