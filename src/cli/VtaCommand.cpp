#include "cli/VtaCommand.h"

#include <iostream>
#include <memory>
#include <span>

#include <fmt/format.h>

#include "cli/OptionChecks.h"
#include "support/Error.h"
#include "vta/Disassembler.h"
#include "vta/HardwareConfig.h"
#include "vta/Program.h"
#include "vta/Simulator.h"

namespace tessel::cli {

namespace {

struct VtaRunOptions {
  std::string programPath;
  std::string order = "timed";
  uint64_t seed = 0;
  double clockMegahertz = vta::TimingParameters{}.clockMegahertz;
  uint32_t dramBytesPerCycle = vta::TimingParameters{}.dramBytesPerCycle;
  uint32_t dramLatencyCycles = vta::TimingParameters{}.dramLatencyCycles;
  bool disassemble = false;
  bool printOutputs = false;
  uint64_t maxWork = vta::SimulatorOptions{}.maxWork;
};

void runConfig(const std::string& path) {
  const vta::HardwareConfig config =
      path.empty() ? vta::HardwareConfig{} : vta::HardwareConfig::fromFile(path);
  if (path.empty()) std::cout << "(built-in default configuration)\n";
  std::cout << config.describe();
}

void runProgram(const VtaRunOptions& options) {
  const vta::Program program = vta::Program::load(options.programPath);
  vta::SimulatorOptions simulatorOptions;
  TESSEL_CHECK(options.order == "timed" || options.order == "random",
               "--order must be 'timed' or 'random', got '{}'", options.order);
  simulatorOptions.order =
      options.order == "random" ? vta::ExecutionOrder::Random : vta::ExecutionOrder::Timed;
  simulatorOptions.seed = options.seed;
  simulatorOptions.maxWork = options.maxWork;
  simulatorOptions.timing.clockMegahertz = options.clockMegahertz;
  simulatorOptions.timing.dramBytesPerCycle = options.dramBytesPerCycle;
  simulatorOptions.timing.dramLatencyCycles = options.dramLatencyCycles;
  vta::Simulator simulator(program.config, simulatorOptions);

  if (options.disassemble) {
    std::vector<vta::Instruction> decoded;
    for (const vta::EncodedInstruction& bits : program.instructions)
      decoded.push_back(simulator.codec().decode(bits));
    std::cout << vta::disassemble(std::span<const vta::Instruction>(decoded)) << "\n";
  }
  program.runOn(simulator);

  const vta::Statistics& stats = simulator.stats();
  std::cout << "Execution statistics:\n" << stats.format();
  std::cout << fmt::format("Simulated time: {:.6f} ms ({} cycles at {} MHz)\n",
                           simulator.lastRunSeconds() * 1e3, stats.cycles,
                           simulatorOptions.timing.clockMegahertz);
  if (options.printOutputs) {
    for (const vta::Program::NamedRange& output : program.outputs) {
      std::vector<int8_t> bytes(output.bytes);
      simulator.memory().read(output.address, bytes.data(), bytes.size());
      std::cout << fmt::format("{} ({} bytes at {:#x}):", output.name, output.bytes, output.address);
      for (size_t i = 0; i < bytes.size(); ++i)
        std::cout << (i % 16 == 0 ? "\n  " : " ") << int(bytes[i]);
      std::cout << "\n";
    }
  }
}

}  // namespace

void addVtaCommands(CLI::App& app) {
  CLI::App* vta = app.add_subcommand("vta", "The VTA accelerator: configuration and simulator");
  vta->require_subcommand(1);

  auto configPath = std::make_shared<std::string>();
  CLI::App* config = vta->add_subcommand(
      "config", "Print a VTA configuration (vta_config.json form) and its derived sizes");
  config->add_option("FILE", *configPath, "vta_config.json (default: the built-in configuration)");
  config->callback([configPath] { runConfig(*configPath); });

  auto runOptions = std::make_shared<VtaRunOptions>();
  CLI::App* run = vta->add_subcommand(
      "run", "Run a serialized VTA program on the simulator and print its statistics");
  run->add_option("PROGRAM", runOptions->programPath, "program file (JSON, see src/vta/Program.h)")
      ->required();
  run->add_option("--order", runOptions->order,
                  "module interleaving: timed (the cycle model's order) or random (seeded)");
  run->add_option("--seed", runOptions->seed, "seed of the random interleaving")->check(integerIn(0, INT64_MAX));
  run->add_option("--clock-mhz", runOptions->clockMegahertz, "accelerator clock in MHz")->check(numberIn(0.001, 1e6));
  run->add_option("--dram-bytes-per-cycle", runOptions->dramBytesPerCycle, "DRAM bandwidth")->check(integerIn(1, int64_t(1) << 20));
  run->add_option("--dram-latency", runOptions->dramLatencyCycles, "DRAM latency in cycles")->check(integerIn(0, int64_t(1) << 30));
  run->add_flag("--disassemble", runOptions->disassemble, "print the instruction stream first");
  run->add_option("--max-work", runOptions->maxWork, "stop a program that would execute more element operations than this")
      ->check(integerIn(1, INT64_MAX));
  run->add_flag("--print-outputs", runOptions->printOutputs,
                "print the program's labelled output buffers after the run");
  run->callback([runOptions] { runProgram(*runOptions); });
}

}  // namespace tessel::cli
