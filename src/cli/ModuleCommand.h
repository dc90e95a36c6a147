/// The commands on compiled module directories (kernels.so, graph.json, params.bin):
///   tessel run DIR [--input FILE.npy | --random] [--seed N]   runs it once, prints the top-5
///                                                            classes of the first output
///   tessel benchmark DIR [--repeat N] [--number N] [--min-repeat-ms F] [--profile]
///                                                            prints `Mean inference time (std dev): X ms (Y ms)`
#pragma once
#include <CLI/CLI.hpp>

namespace tessel::cli {

void addModuleCommands(CLI::App& app);

}  // namespace tessel::cli
