#include "AutoScheduleBench.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "BenchReport.h"
#include "ConvTiming.h"
#include "ops/Examples.h"
#include "ops/Schedules.h"
#include "support/Error.h"
#include "tune/ansor/SketchPolicy.h"
#include "tune/ansor/TuneAutoTask.h"
#include "tune/ansor/XGBoostStateModel.h"

namespace tessel::bench {

namespace {

Conv2dShape parseConv(const std::string& spec) {
  std::vector<int64_t> v;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(':', start);
    if (end == std::string::npos) end = spec.size();
    v.push_back(std::stoll(spec.substr(start, end - start)));
    start = end + 1;
  }
  TESSEL_CHECK(v.size() == 5, "auto conv '{}': expected size:in:out:kernel:stride", spec);
  return Conv2dShape{1, v[1], v[0], v[0], v[2], v[3], v[4], v[3] / 2};
}

}  // namespace

void autoScheduledConv(const AutoConvSettings& settings, tune::Builder& builder, tune::Runner& runner) {
  TESSEL_CHECK(!settings.checkpoints.empty() && std::is_sorted(settings.checkpoints.begin(), settings.checkpoints.end()),
               "auto conv: the checkpoints must be increasing");
  Conv2dShape shape = parseConv(settings.conv);
  te::ComputeDAG dag = ops::conv2dNHWC(1, shape.inChannels, shape.height, shape.width, shape.outChannels, shape.kernel,
                                       shape.kernel, shape.stride, shape.pad);
  auto task = tune::makeMeasureTask("conv2d_nhwc", dag, "cpu");
  const double flops = shape.flops();
  tune::autotvm::XGBoostOptions model;
  model.seed = settings.seed;
  tune::ansor::SketchPolicyOptions options;
  options.populationSize = settings.population;
  options.seed = settings.seed;
  tune::ansor::SketchPolicy policy(dag, std::make_shared<tune::ansor::XGBoostStateModel>(model), options);
  auto defaultSteps = ops::defaultCpuSchedule(dag, ops::cpuScheduleOptionsFor("cpu"));
  const std::string defaultKey = tune::ansor::scheduleKey(defaultSteps);
  fmt::print("\n== auto-scheduler: {} conv (NHWC, {} sketches, population {}, batches of {}) ==\n", settings.conv,
             policy.sketches().size(), settings.population, settings.batch);

  struct Best {
    double gflops = 0;
    std::vector<schedule::StepPtr> steps;
  };
  Best best, searched;  // searched: the best the search found itself (the default left out)
  std::vector<std::pair<int64_t, Best>> atCheckpoint;
  int64_t done = 0;
  double policySeconds = 0, buildSeconds = 0, runSeconds = 0, seconds = 0;
  for (int64_t checkpoint : settings.checkpoints) {
    tune::ansor::TuneAutoOptions o;
    o.nTrial = checkpoint - done;
    o.batchSize = settings.batch;
    if (done == 0) o.measureFirst = defaultSteps;
    o.progressPrefix = "[auto conv] ";
    auto r = tune::ansor::tuneAutoTask(task, flops, policy, builder, runner, o, {},
                                       [&](const tune::MeasureInput& input, const tune::MeasureResult& m) {
                                         double g = m.ok() && m.cost() > 0 ? flops / m.cost() / 1e9 : 0;
                                         if (g > best.gflops) best = {g, input.steps};
                                         if (g > searched.gflops && tune::ansor::scheduleKey(input.steps) != defaultKey)
                                           searched = {g, input.steps};
                                       });
    done += r.trials;
    policySeconds += r.policySeconds;
    buildSeconds += r.buildSeconds;
    runSeconds += r.runSeconds;
    seconds += r.seconds;
    atCheckpoint.emplace_back(checkpoint, best);
    report(fmt::format("auto_conv_best_gflops_at_{}", checkpoint), best.gflops, "GFLOPS");
    report(fmt::format("auto_conv_searched_gflops_at_{}", checkpoint), searched.gflops, "GFLOPS");
    if (r.trials == 0) break;  // the search found nothing new
  }
  report("auto_conv_trials", double(done), "trials");
  report("auto_conv_trials_per_s", double(done) / std::max(seconds, 1e-9), "trials/s");
  report("auto_conv_states_scored", double(policy.statesScored()), "states");
  report("auto_conv_states_per_s", double(policy.statesScored()) / std::max(policySeconds, 1e-9), "states/s");
  fmt::print("{} trials in {:.1f} s: search {:.1f} s ({} states scored), build {:.1f} s, run {:.1f} s\n", done, seconds,
             policySeconds, policy.statesScored(), buildSeconds, runSeconds);

  // Re-timed now, one after the other, in the same state of the machine as oneDNN.
  ConvFigures peer = oneDnnGflops(shape);
  ConvFigures defaults = kernelGflops(dag, defaultSteps, flops);
  fmt::print("{:>10} {:>14} {:>14} {:>10}\n", "trials", "best GFLOPS", "re-timed warm", "/ oneDNN");
  for (const auto& [checkpoint, b] : atCheckpoint) {
    ConvFigures mine = kernelGflops(dag, b.steps, flops);
    fmt::print("{:>10} {:>14.1f} {:>14.1f} {:>10.3f}\n", checkpoint, b.gflops, mine.warm, mine.warm / peer.warm);
    report(fmt::format("auto_conv_vs_onednn_warm_at_{}", checkpoint), mine.warm / peer.warm, "ratio");
  }
  fmt::print("oneDNN: {:.1f} GFLOPS warm; the default schedule: {:.1f}\n", peer.warm, defaults.warm);
  report("auto_conv_onednn_warm_gflops", peer.warm, "GFLOPS");
  report("auto_conv_default_warm_gflops", defaults.warm, "GFLOPS");
}

}  // namespace tessel::bench
