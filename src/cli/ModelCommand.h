/// The commands on zoo networks:
///   tessel tasks --model NAME [--layout NCHW|NHWC] [--batch N] [--target cpu]
///       lists the tuning tasks as seed 001 prints them
///   tessel compile --model NAME [--layout ..] [--batch N] [--target cpu] [--no-fuse] -o DIR
///       builds the network into a module directory (kernels.so, graph.json, params.bin)
#pragma once
#include <CLI/CLI.hpp>

namespace tessel::cli {

void addModelCommands(CLI::App& app);

}  // namespace tessel::cli
