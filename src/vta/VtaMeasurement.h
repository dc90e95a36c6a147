/// Measuring VTA candidates the way the tuner measures CPU kernels, through the same Builder and
/// Runner interfaces: VtaBuilder turns a conv2d_packed or dense_packed candidate (its step list) into a
/// self-contained VTA program file — the tiling read back from the steps, emitConv2d's code on
/// zero-filled buffers (the cycle model does not depend on values) — and the VTA measurement
/// worker, tessel-vta-worker (vta/worker/main.cpp: the line protocol of tessel-measure-worker),
/// runs a program file on a fresh simulator and answers its modelled time, cycles / clock, as
/// the cost of every repeat. A LocalRunner with that worker measures on this machine; a device
/// server started with `--device vta` measures with it behind a tracker.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "support/TempDir.h"
#include "tune/MeasureBatch.h"
#include "vta/Conv2dPackedTemplate.h"
#include "vta/DensePackedTemplate.h"

namespace tessel::vta {

class VtaBuilder : public tune::Builder {
 public:
  VtaBuilder();
  /// Candidates of the measure task with this workload key are programs of `problem`.
  void addProblem(const std::string& workloadKey, Conv2dPackedProblem problem);
  /// Candidates of this measure task are programs of a packed dense (dense_packed.vta).
  void addProblem(const std::string& workloadKey, DensePackedProblem problem);
  /// One program file per input; a task without a problem, steps that do not describe a tiling
  /// or a tiling that does not fit are InstantiationErrors naming the reason.
  std::vector<tune::BuildResult> build(const std::vector<tune::MeasureInput>& inputs) override;
  void discard(const tune::BuildResult& result) override;

 private:
  tune::BuildResult buildOne(const tune::MeasureInput& input);
  TempDir dir_;
  std::map<std::string, Conv2dPackedProblem> problems_;
  std::map<std::string, DensePackedProblem> denseProblems_;
  int64_t built_ = 0;
};

/// The program of one tiling of a problem, on zero-filled buffers, as a file-ready Program.
Program conv2dPackedProgram(const Conv2dPackedProblem& problem, const Conv2dTiling& tiling);
Program densePackedProgram(const DensePackedProblem& problem, const DenseTiling& tiling);

/// tessel-vta-worker: $TESSEL_VTA_WORKER, beside the running program, or in the build tree when
/// running from it (support/HelperPrograms.h).
/// Error naming the places tried.
std::string findVtaWorker();

}  // namespace tessel::vta
