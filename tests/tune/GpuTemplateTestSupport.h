/// Test support for the GPU tuning templates (test_gpu_templates, test_gpu_depthwise_dense,
/// test_gpu_winograd): the configs of a template's space a test builds and runs, and a short
/// tuning run whose records must replay.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "te/ComputeDAG.h"
#include "tune/autotvm/GpuTemplateSpace.h"

namespace tessel::tunetest {

/// True when the config instantiates (false: over the device's thread, register or shared
/// memory budget, an error record in tuning).
bool instantiates(const tune::autotvm::GpuTemplateSpace& t, const tune::autotvm::ConfigEntity& config);

/// The fallback and up to `randomCount` random configs that instantiate, drawn with `seed`
/// (`tries` draws at most).
std::vector<tune::autotvm::ConfigEntity> fallbackAndRandomConfigs(const tune::autotvm::GpuTemplateSpace& t, int randomCount,
                                                                  uint64_t seed, int tries = 2000);

/// A few trials of the function's template (the template table's choice for `dag`, which must be
/// `templateName`) through the tuning loop on OpenCL, logged as the CLI logs them: every record
/// of the log is of the template, its config's index is the record's, the config instantiates
/// the record's steps again, and they replay and build. `fallbackIsDefault`: what the task must
/// say of its fallback. Gtest failures, no return value.
void tuneAndReplay(const te::ComputeDAG& dag, const std::string& templateName, bool fallbackIsDefault, uint64_t tunerSeed);

}  // namespace tessel::tunetest
