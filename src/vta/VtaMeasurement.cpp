#include "vta/VtaMeasurement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "support/Error.h"
#include "support/HelperPrograms.h"
#include "vta/CommandStream.h"
#include "vta/Simulator.h"

namespace tessel::vta {

VtaBuilder::VtaBuilder() : dir_("tessel-vta-build") {}

void VtaBuilder::addProblem(const std::string& workloadKey, Conv2dPackedProblem problem) {
  problems_.insert_or_assign(workloadKey, std::move(problem));
}

void VtaBuilder::addProblem(const std::string& workloadKey, DensePackedProblem problem) {
  denseProblems_.insert_or_assign(workloadKey, std::move(problem));
}

namespace {

/// Zero-filled DRAM buffers of one call: `inputs`, `weights` and `outputs` elements (the output
/// `storedBytes` planes of them), and each epilogue operand (per channel: `channelBlocks`
/// elements; an image: `outputs`).
Conv2dBuffers zeroBuffers(CommandStream& stream, const HardwareConfig& c, const PackedConvolution& group, uint64_t inputs,
                          uint64_t weights, uint64_t outputs, uint64_t channelBlocks) {
  Conv2dBuffers buffers;
  buffers.data = stream.allocate(inputs * uint64_t(c.inputElementBytes()));
  buffers.weight = stream.allocate(weights * uint64_t(c.weightElementBytes()));
  buffers.output = stream.allocate(uint64_t(group.storedBytes) * outputs * uint64_t(c.outputElementBytes()));
  for (const AluStep& s : group.epilogue) {
    if (s.immediate) continue;
    uint64_t elements = s.perChannel ? channelBlocks : outputs;
    uint64_t laneBytes = s.operandInt8 ? 1 : uint64_t(c.accumulatorWidth() / 8);
    buffers.operands.push_back(stream.allocate(elements * uint64_t(c.accumulatorLanes()) * laneBytes));
  }
  return buffers;
}

}  // namespace

Program conv2dPackedProgram(const Conv2dPackedProblem& problem, const Conv2dTiling& tiling) {
  const Conv2dWorkload& w = problem.workload;
  Simulator device(problem.config);
  CommandStream stream(device);
  Conv2dBuffers buffers =
      zeroBuffers(stream, problem.config, problem.group, uint64_t(w.batchBlocks * w.inputBlocks * w.height * w.width),
                  uint64_t(w.outputBlocks * w.inputBlocks * w.kernelHeight * w.kernelWidth),
                  uint64_t(w.batchBlocks * w.outputBlocks * w.outHeight * w.outWidth), uint64_t(w.outputBlocks));
  emitConv2d(stream, w, tiling, problem.group, buffers);
  return stream.finishProgram();
}

Program densePackedProgram(const DensePackedProblem& problem, const DenseTiling& tiling) {
  const DenseWorkload& w = problem.workload;
  Simulator device(problem.config);
  CommandStream stream(device);
  Conv2dBuffers buffers = zeroBuffers(stream, problem.config, problem.group, uint64_t(w.batchBlocks * w.inputBlocks),
                                      uint64_t(w.outputBlocks * w.inputBlocks), uint64_t(w.batchBlocks * w.outputBlocks),
                                      uint64_t(w.outputBlocks));
  emitDense(stream, w, tiling, problem.group, buffers);
  return stream.finishProgram();
}

tune::BuildResult VtaBuilder::buildOne(const tune::MeasureInput& input) {
  auto start = std::chrono::steady_clock::now();
  tune::BuildResult result;
  try {
    Program program;
    if (auto it = problems_.find(input.task->workloadKey); it != problems_.end()) {
      const Conv2dPackedProblem& problem = it->second;
      Conv2dTiling tiling = conv2dTilingOfSteps(problem, input.steps);
      if (auto reason = tilingProblem(problem.workload, tiling, problem.group, problem.config)) fail("VTA conv2d: {}", *reason);
      program = conv2dPackedProgram(problem, tiling);
    } else if (auto dense = denseProblems_.find(input.task->workloadKey); dense != denseProblems_.end()) {
      const DensePackedProblem& problem = dense->second;
      DenseTiling tiling = denseTilingOfSteps(problem, input.steps);
      if (auto reason = denseTilingProblem(problem.workload, tiling, problem.group, problem.config)) fail("VTA dense: {}", *reason);
      program = densePackedProgram(problem, tiling);
    } else {
      fail("VTA builder: task '{}' is not a packed convolution or dense it knows", input.task->name);
    }
    result.libraryPath = fmt::format("{}/candidate_{}.vta.json", dir_.path(), built_++);
    program.save(result.libraryPath);
    result.kernelName = input.task->name;
  } catch (const Error& e) {
    result.errorNo = tune::MeasureErrorNo::InstantiationError;
    result.errorMessage = e.what();
    result.libraryPath.clear();
  }
  result.buildSeconds = result.lowerSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::vector<tune::BuildResult> VtaBuilder::build(const std::vector<tune::MeasureInput>& inputs) {
  std::vector<tune::BuildResult> results;
  for (const tune::MeasureInput& input : inputs) results.push_back(buildOne(input));
  return results;
}

void VtaBuilder::discard(const tune::BuildResult& result) {
  if (result.libraryPath.empty()) return;
  std::error_code ec;
  std::filesystem::remove(result.libraryPath, ec);
}

std::string findVtaWorker() {
  constexpr const char* kName = "tessel-vta-worker";
  std::vector<std::string> tried;
  if (auto found = findHelperProgram({kName, "TESSEL_VTA_WORKER", TESSEL_VTA_WORKER_PATH}, tried)) return *found;
  fail("cannot find the VTA measurement worker '{}' (tried {}); set TESSEL_VTA_WORKER to its path", kName, fmt::join(tried, ", "));
}

}  // namespace tessel::vta
