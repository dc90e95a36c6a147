/// Building a VTA module that the runtime with the VTA device support runs alone
/// (ModuleRunner.h): the packed network compiled for the host by graph::buildGraph (every fused
/// function, the packed convolutions as plain loops: the CPU int8 reference of the same module),
/// and beside it `vta_programs.json` (ModulePrograms.h) with each packed convolution group's VTA
/// program for its tiling, recorded on a scratch simulator with relocatable DRAM segments: one
/// per call argument (data, weight, epilogue operands, output) and the micro-op kernels.
#pragma once
#include <string>

#include "graph/Build.h"
#include "vta/ModuleRunner.h"
#include "vta/NetworkRunner.h"

namespace tessel::vta {

/// The program of `group` (a conv2d_blocked group of `packed`) with `tiling`, as executor call
/// `call`: its arguments are the group's inputs in order, then its output. Self-contained: it
/// loads every micro-op kernel it uses.
CallProgram recordCallProgram(const graph::Graph& packed, const graph::FusedGroup& group, size_t call, const Conv2dTiling& tiling,
                              const HardwareConfig& config);

/// The program of a packed dense group (dense_blocked) with its rule-based tiling
/// (defaultDenseTiling), as recordCallProgram's.
CallProgram recordDenseCallProgram(const graph::Graph& packed, const graph::FusedGroup& group, size_t call,
                                   const HardwareConfig& config);

/// Writes the module directory `output`: the host side by graph::buildGraph with `host` (its
/// schedule provider is asked for every function but the packed convolutions, which keep the
/// naive schedule) and the programs of every packed convolution group, with `tilingOf`'s tiling
/// (empty: the default one), and of every packed dense group (its default tiling).
/// `tilingNotes`, when given, is the list `tilingOf` appends a note on each choice to
/// (tilingsFromRecords: "SHAPE: record (...)"): each program's description keeps its own as
/// "tiling_note". Returns the host build's report.
graph::BuildReport buildVtaModule(const graph::Graph& packed, const HardwareConfig& config, const TilingChoice& tilingOf,
                                  const std::string& output, graph::BuildOptions host = {},
                                  const std::vector<std::string>* tilingNotes = nullptr);

/// The profile rows of a module's last run (the tiling and GEMM count from each program's
/// description), for formatVtaProfile.
std::vector<VtaGroupRun> moduleGroupRuns(const ModulePrograms& programs, const std::vector<VtaCallRun>& runs);

}  // namespace tessel::vta
