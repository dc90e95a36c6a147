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
#include "tune/Confirmation.h"
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
  auto task = tune::makeMeasureTask("conv2d_nhwc", dag, target::Target::parse("cpu"));
  const double flops = shape.flops();
  tune::autotvm::XGBoostOptions model;
  model.seed = settings.seed;
  tune::ansor::SketchPolicyOptions options;
  options.populationSize = settings.population;
  options.seed = settings.seed;
  tune::ansor::SketchPolicy policy(dag, std::make_shared<tune::ansor::XGBoostStateModel>(task->target.cpu, model), options);
  auto defaultSteps = ops::defaultCpuSchedule(dag, ops::cpuScheduleOptionsFor(target::Target::host()));
  const std::string defaultKey = tune::ansor::scheduleKey(defaultSteps);
  fmt::print("\n== auto-scheduler: {} conv (NHWC, {} sketches, population {}, batches of {}) ==\n", settings.conv,
             policy.sketches().size(), settings.population, settings.batch);

  struct Best {
    double gflops = 0;
    std::vector<schedule::StepPtr> steps;
  };
  Best best, searched;  // searched: the best the search found itself (the default left out)
  std::vector<tune::ansor::MeasuredSchedule> measured;  // every one, for the confirmation
  struct Checkpoint {
    int64_t trials;
    double searchGflops;
    std::vector<schedule::StepPtr> searched;  ///< the search's own best (the default left out)
    std::vector<schedule::StepPtr> confirmed;
    bool keptDefault;
  };
  std::vector<Checkpoint> atCheckpoint;
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
                                         measured.push_back({input.steps, g * 1e9});
                                         if (g > best.gflops) best = {g, input.steps};
                                         if (g > searched.gflops && tune::ansor::scheduleKey(input.steps) != defaultKey)
                                           searched = {g, input.steps};
                                       });
    done += r.trials;
    policySeconds += r.policySeconds;
    buildSeconds += r.buildSeconds;
    runSeconds += r.runSeconds;
    seconds += r.seconds;
    // What `tessel tune --scheduler auto` would build after this many trials: its task
    // confirmation (driver/AutoScheduleTasks.cpp), the best measured schedules re-measured
    // against the default in interleaved rounds; the default when none is a contender.
    Checkpoint c{checkpoint, best.gflops, searched.steps, defaultSteps, true};
    std::vector<tune::MeasureInput> inputs = tune::ansor::contendersAgainstDefault(task, measured, defaultSteps, settings.confirmTop);
    if (!inputs.empty()) {
      tune::ConfirmOptions co{settings.confirmRounds, 0.01, settings.seed, nullptr};
      if (auto decision = tune::confirmAgainstFallback(inputs, builder, runner, co); decision && !decision->keptFallback) {
        c.confirmed = inputs[decision->winner].steps;
        c.keptDefault = false;
      }
    }
    atCheckpoint.push_back(c);
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

  // Re-timed now, in alternation with oneDNN and the default schedule, so that the machine's
  // drift between minutes (tens of percent on a shared host) hits every figure alike: oneDNN,
  // the default, then each checkpoint's confirmed schedule and the search's own best (what the
  // sketches reached without the default; the default when they found nothing).
  std::vector<ScheduledKernel> kernels{{&dag, defaultSteps}};
  for (const auto& c : atCheckpoint) {
    kernels.push_back({&dag, c.confirmed});
    kernels.push_back({&dag, c.searched.empty() ? defaultSteps : c.searched});
  }
  std::vector<double> g;
  for (const ConvFigures& f : interleavedGflops(shape, kernels, settings.retimeRounds, false)) g.push_back(f.warm);
  const double peer = g[0], defaults = g[1];
  fmt::print("re-timed warm in {} interleaved rounds (median), load average {}:\n", settings.retimeRounds, machineLoad());
  fmt::print("{:>8} {:>12} {:>16} {:>10} {:>10} {:>16} {:>10}\n", "trials", "search best", "confirmed", "re-timed", "/ oneDNN",
             "search's own", "/ oneDNN");
  for (size_t i = 0; i < atCheckpoint.size(); ++i) {
    const Checkpoint& c = atCheckpoint[i];
    const double mine = g[2 * i + 2], own = g[2 * i + 3];
    fmt::print("{:>8} {:>12.1f} {:>16} {:>10.1f} {:>10.3f} {:>16.1f} {:>10.3f}\n", c.trials, c.searchGflops,
               c.keptDefault ? "the default" : "a searched one", mine, mine / peer, own, own / peer);
    report(fmt::format("auto_conv_vs_onednn_warm_at_{}", c.trials), mine / peer, "ratio");
    report(fmt::format("auto_conv_searched_vs_onednn_warm_at_{}", c.trials), own / peer, "ratio");
  }
  fmt::print("oneDNN: {:.1f} GFLOPS warm; the default schedule: {:.1f} ({:.3f} of oneDNN)\n", peer, defaults, defaults / peer);
  report("auto_conv_onednn_warm_gflops", peer, "GFLOPS");
  report("auto_conv_default_warm_gflops", defaults, "GFLOPS");
}

}  // namespace tessel::bench
