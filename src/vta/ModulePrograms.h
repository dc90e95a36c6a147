/// The VTA programs of a compiled module (`vta_programs.json` beside kernels.so, graph.json and
/// params.bin): for each graph-executor call that runs on the accelerator, its instruction
/// stream, its micro-op kernels and how its buffers map onto the call's arguments, so that the
/// runtime with the VTA device support (ModuleRunner.h) runs the module without a compiler and
/// without the model.
///
/// A call's program is a `Program` (Program.h) recorded on a scratch simulator: its memory
/// segments are either one of the call's arguments (the recorded segment is only a placeholder,
/// its contents come from the argument at run time) or private (micro-op kernels, stored with
/// their contents). DRAM addresses in the instructions are the recorded ones; the runtime
/// relocates every LOAD and STORE into the segments it allocates, by the segment its range lies
/// in.
///
/// File format (JSON):
///   {"format": "tessel-vta-module-programs", "version": 1,
///    "config": { vta_config.json keys },
///    "calls": [{"call": C,                   // index among the executor's calls
///               "name": "...",               // the group's output node (profiles, errors)
///               "arguments": [{"segment": S, "bytes": B, "constant": true|false}, ...],
///                                            // the call's inputs then its output, in order
///               "stored_bytes": 1 | 4,       // 4: an int32 result left as four byte planes
///               "description": {...},        // for profiles (tiling, GEMM count), not read here
///               "program": { Program's JSON }}, ...]}
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vta/Program.h"

namespace tessel::vta {

/// One executor call as a VTA program.
struct CallProgram {
  struct Argument {
    size_t segment = 0;  ///< index into program.memory
    uint64_t bytes = 0;  ///< the argument tensor's size
    /// A parameter of the module (a weight, a bias): uploaded once, not before every run.
    bool constant = false;
  };
  size_t call = 0;
  std::string name;
  std::vector<Argument> arguments;  ///< inputs, then the output (last)
  int storedBytes = 1;
  nlohmann::json description = nlohmann::json::object();
  Program program;
};

struct ModulePrograms {
  HardwareConfig config;
  std::vector<CallProgram> calls;

  nlohmann::json toJson() const;
  /// Throws Error naming the call and the malformed part: a program for another configuration
  /// than the file's, an argument naming no segment or larger than it, a missing output, a
  /// call listed twice.
  static ModulePrograms fromJson(const nlohmann::json& json);
  void save(const std::string& path) const;
  /// Errors name the file.
  static ModulePrograms load(const std::string& path);
};

/// The file's name inside a module directory.
inline constexpr const char* kModuleProgramsFile = "vta_programs.json";

}  // namespace tessel::vta
