#include "tune/autotvm/GpuTemplates.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/GpuBuild.h"
#include "support/Error.h"
#include "tune/autotvm/GpuConvTemplates.h"
#include "tune/autotvm/GpuDefaultTemplate.h"
#include "tune/autotvm/GpuDenseLargeBatchTemplate.h"
#include "tune/autotvm/GpuDenseSmallBatchTemplate.h"
#include "tune/autotvm/GpuDepthwiseTemplate.h"
#include "tune/autotvm/GpuWinogradTemplate.h"

namespace tessel::tune::autotvm {

const std::vector<GpuTemplate>& gpuTemplates() {
  // Most specific first: a function takes the first template that applies. A template is one
  // row: {name, applies(dag), make(name, dag, target, limits)}.
  static const std::vector<GpuTemplate> table = {
      {kGpuWinogradTemplate, &gpuWinogradTemplateApplies, &makeGpuWinogradTask, /*fallbackIsDefaultSchedule=*/true},
      {kGpuConv2dTemplate, &gpuConv2dTemplateApplies, &makeGpuConv2dTask},
      {kGpuConv2dNhwcTemplate, &gpuConv2dNhwcTemplateApplies, &makeGpuConv2dNhwcTask},
      {kGpuDepthwiseTemplate, &gpuDepthwiseTemplateApplies, &makeGpuDepthwiseTask},
      {kGpuDenseSmallBatchTemplate, &gpuDenseSmallBatchTemplateApplies, &makeGpuDenseSmallBatchTask},
      {kGpuDenseLargeBatchTemplate, &gpuDenseLargeBatchTemplateApplies, &makeGpuDenseLargeBatchTask},
      {kGpuBatchMatmulTemplate, &gpuBatchMatmulTemplateApplies, &makeGpuBatchMatmulTask, /*fallbackIsDefaultSchedule=*/true},
      {kGpuDefaultTemplate, [](const te::ComputeDAG&) { return true; }, &makeGpuDefaultTask},
  };
  return table;
}

std::vector<std::string> gpuTemplateNames() {
  std::vector<std::string> names;
  for (const auto& t : gpuTemplates()) names.push_back(t.name);
  return names;
}

std::optional<std::string> gpuTemplateFor(const te::ComputeDAG& dag) {
  for (const auto& t : gpuTemplates())
    if (t.applies(dag)) return t.name;
  return std::nullopt;
}

std::vector<std::string> gpuTemplatesTuned(const te::ComputeDAG& dag) {
  for (const auto& t : gpuTemplates()) {
    if (!t.applies(dag)) continue;
    if (t.name == kGpuDefaultTemplate || t.fallbackIsDefaultSchedule) return {t.name};
    return {t.name, kGpuDefaultTemplate};
  }
  return {kGpuDefaultTemplate};
}

TuningTaskPtr makeGpuTuningTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                const passes::GpuLimits& limits, const std::string& templateName) {
  TESSEL_CHECK(target.isGpu(), "task '{}': target '{}' is not a GPU target (cuda ..., opencl ...)", name, target.str());
  std::string chosen = templateName.empty() ? gpuTemplateFor(dag).value_or("") : templateName;
  for (const auto& t : gpuTemplates()) {
    if (t.name != chosen) continue;
    TESSEL_CHECK(t.applies(dag), "task '{}': GPU template '{}' does not apply to this function", name, chosen);
    // Whatever the template, its candidates are verified against the limits it was made for.
    auto task = std::make_shared<TuningTask>(*t.make(name, dag, target, limits));
    auto measure = std::make_shared<MeasureTask>(*task->measure);
    measure->gpuLimits = limits;
    task->measure = measure;
    return task;
  }
  fail("task '{}': no GPU template '{}' (templates: {})", name, chosen, fmt::join(gpuTemplateNames(), ", "));
}

}  // namespace tessel::tune::autotvm
