/// `tessel tune`: the main job. Extracts a network's tasks, tunes each with a template tuner or
/// the auto-scheduler (measuring candidates on this machine or on devices behind a tracker),
/// logs every trial, builds the network with the best records and compares its latency with the
/// untuned build:
///   tessel tune --model resnet-18 --tuner xgb --n-trial 1000 --early-stopping 450
///               --log resnet-18.cpu.log [--resume] [--ops conv2d,dense] [-o DIR]
/// The flow is driver::tuneNetwork's (driver/TuneNetwork.h); here its flags are parsed into the
/// driver's options once and its lines printed from the driver's callbacks. --target vta tunes
/// VTA's packed tasks (cli/VtaFlow.h).
#pragma once
#include <CLI/CLI.hpp>

namespace tessel::cli {

void addTuneCommand(CLI::App& app);

}  // namespace tessel::cli
