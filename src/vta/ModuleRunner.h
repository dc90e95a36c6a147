/// Running a compiled VTA module with the runtime alone: the module's host functions in the
/// graph executor as for any module, and each call that has a VTA program (ModulePrograms.h)
/// run on a vta device instead of its host kernel. No compiler and no model are needed; this and
/// the simulator are the VTA device's runtime support, which a deployment links beside
/// tessel_runtime.
///
/// At load, every program segment gets a device allocation through the device API (so the
/// simulator's DRAM holds it), the micro-op kernels are written there once, and each LOAD and
/// STORE is relocated from its recorded address into the allocation of the segment its range
/// lies in; the relocated instruction stream is written to device memory once. A call then
/// copies its inputs in (parameters only the first time), runs the stream, and copies the output
/// back, joining an int32 result's byte planes.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/GraphExecutor.h"
#include "vta/ModulePrograms.h"
#include "vta/Simulator.h"

namespace tessel::vta {

/// What the last run of one call cost on the device.
struct VtaCallRun {
  std::string name;
  uint64_t cycles = 0;
  RunProfile profile;
};

class ModuleRunner {
 public:
  /// Allocates and relocates every program on `device` (a registered vta device). Errors name
  /// the call: a module for another configuration than the device's, an instruction whose DRAM
  /// range lies in none of the program's segments.
  ModuleRunner(ModulePrograms programs, runtime::Device device);
  ~ModuleRunner();
  ModuleRunner(const ModuleRunner&) = delete;
  ModuleRunner& operator=(const ModuleRunner&) = delete;

  /// Runs program `index` (of programs().calls) on the call's argument descriptors (inputs,
  /// then the output). Error when their number or sizes differ from the program's.
  void run(size_t index, const TesselTensor* args, int count);

  const ModulePrograms& programs() const { return programs_; }
  /// Per program, its last run.
  const std::vector<VtaCallRun>& lastRuns() const { return runs_; }
  Simulator& simulator() { return simulator_; }

 private:
  struct Loaded;
  void releaseAll();
  ModulePrograms programs_;
  std::shared_ptr<runtime::DeviceAPI> api_;
  Simulator& simulator_;
  std::vector<Loaded> loaded_;
  std::vector<VtaCallRun> runs_;
};

/// A module directory loaded for running: the executor with its VTA calls replaced by the
/// runner's programs (a directory without vta_programs.json loads as a plain module, runner
/// null).
struct VtaModuleExecutor {
  runtime::GraphExecutor executor;
  std::shared_ptr<ModuleRunner> runner;
};
/// Error naming the file and the call when a program does not fit the executor (a call index
/// past its calls, an argument count that differs).
VtaModuleExecutor loadVtaModuleExecutor(const std::string& directory,
                                        runtime::Device device = {runtime::DeviceKind::VTA, 0});

}  // namespace tessel::vta
