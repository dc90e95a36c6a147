/// The GPU tuning templates ("cuda ..." and "opencl ..." targets) and the one table that says
/// which applies to a fused function. A template is a row of gpuTemplates(): its name, whether
/// it applies to a DAG, and how it makes the tuning task; the first row that applies is the
/// function's template, so the specific templates (a shared-memory conv2d, a dense) stand above
/// `gpu_default`, which applies to every function. The tasks are the TuningTasks of the CPU
/// templates (TuningTask.h): the tuning loops do not know which device they tune for; the
/// task's MeasureTask carries the limits its candidates are verified against.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "passes/GpuLimits.h"
#include "tune/autotvm/TuningTask.h"

namespace tessel::tune::autotvm {

/// One GPU template: a row of the table.
struct GpuTemplate {
  std::string name;
  std::function<bool(const te::ComputeDAG&)> applies;
  std::function<TuningTaskPtr(const std::string& taskName, const te::ComputeDAG& dag, const target::Target& target,
                              const passes::GpuLimits& limits)>
      make;
  /// Its fallback is what the default GPU schedule gives the function: gpu_default would tune
  /// nothing it does not, so the function is tuned with this template alone.
  bool fallbackIsDefaultSchedule = false;
};

/// The table, most specific first; `gpu_default` (GpuDefaultTemplate.h) is the last row. A
/// row's `make` need not set the MeasureTask's limits: makeGpuTuningTask sets them.
const std::vector<GpuTemplate>& gpuTemplates();

std::vector<std::string> gpuTemplateNames();

/// The name of the first template of the table that applies to the DAG (every fused function
/// has one: gpu_default).
std::optional<std::string> gpuTemplateFor(const te::ComputeDAG& dag);

/// The templates a function is tuned with, in order: its own (gpuTemplateFor), then gpu_default
/// where that is another whose fallback is not the default schedule. The default schedule and
/// its knobs are the baseline a specific template's tiles must beat, and the build takes the
/// faster record of the two (history best).
std::vector<std::string> gpuTemplatesTuned(const te::ComputeDAG& dag);

/// A tuning task for the DAG on a GPU target with the named template (empty: gpuTemplateFor's).
/// Error naming the template and the task when the template is unknown or does not apply.
TuningTaskPtr makeGpuTuningTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                const passes::GpuLimits& limits, const std::string& templateName = "");

}  // namespace tessel::tune::autotvm
