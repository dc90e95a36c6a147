/// `tessel tune`: the main job. Extracts a zoo network's tasks, tunes each with a template
/// tuner (measuring candidates on this machine), logs every trial, builds the network with the
/// best records and compares its latency with the untuned build:
///   tessel tune --model resnet-18 --tuner xgb --n-trial 1000 --early-stopping 450
///               --log resnet-18.cpu.log [--resume] [--ops conv2d,dense] [-o DIR]
#pragma once
#include <CLI/CLI.hpp>

namespace tessel::cli {

void addTuneCommand(CLI::App& app);

}  // namespace tessel::cli
