#include "cli/TuningTasks.h"

#include <fmt/format.h>

#include "cli/OptionChecks.h"
#include "cli/VtaFlow.h"
#include "driver/GpuTargetHost.h"
#include "graph/GpuTargetLimits.h"
#include "support/Error.h"

namespace tessel::cli {

SearchKind searchKind(const std::string& scheduler) {
  TESSEL_CHECK(scheduler == "autotvm" || scheduler == "auto", "--scheduler: '{}' is not autotvm or auto", scheduler);
  return scheduler == "auto" ? SearchKind::AutoScheduler : SearchKind::Templates;
}

ColdCacheMode coldCacheMode(const std::string& text) {
  TESSEL_CHECK(text == "auto" || text == "always" || text == "never", "--cold-cache: '{}' is not auto, always or never", text);
  return text == "auto" ? ColdCacheMode::Auto : text == "always" ? ColdCacheMode::Always : ColdCacheMode::Never;
}

void addSchedulerOption(CLI::App* c, std::string& scheduler) {
  c->add_option("--scheduler", scheduler, "autotvm (templates) or auto (the template-free auto-scheduler)")
      ->transform(oneOf({"autotvm", "auto"}));
}

void printNetworkTasks(const ModelArgs& a, SearchKind search, ColdCacheMode coldCache, bool dags,
                       const std::vector<size_t>& numbers, const std::vector<std::string>& ops) {
  fmt::print("Extract tasks...\n");
  if (isVtaTarget(a.target)) {
    fmt::print("{}", vta::formatConv2dPackedTasks(prepareVtaNetwork(a).tasks));
    return;
  }
  TaskListOptions o;
  o.search = search;
  o.coldCache = coldCache;
  o.target = a.parsedTarget;
  const bool gpu = a.parsedTarget.isGpu();
  if (gpu) {
    // The limits of the device present, else of the target's profile: what a local run verifies against.
    o.gpuHost = target::Target::parse(driver::checkGpuTargetHost(a.target, a.targetHost));
    o.gpuLimits = graph::gpuLimitsForBuild(a.parsedTarget);
  } else {
    checkCpuTarget(a.target);
  }
  PreparedModel prepared = prepareModel(a);
  TaskList list = listTuningTasks(prepared, o);
  fmt::print("{}", formatTaskList(list, numbers, ops));
  if (dags) fmt::print("{}", formatTaskDags(selectTasks(list, numbers, ops)));
}

}  // namespace tessel::cli
