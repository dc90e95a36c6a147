/// A network tuned as `tessel tune` does it (seeds 000-003 for templates, 001 for the
/// auto-scheduler), the flow the CLI, the benches and the bindings share:
///
///   1. the options checked and the log read (resumed trials, and the check that an existing
///      file is a records log), before any work;
///   2. where candidates are measured (NetworkMeasurement.h);
///   3. the network prepared and its tasks listed and selected (TuningTasks.h);
///   4. the tasks tuned, every trial appended to the log: with templates (TemplateTuning.h) or
///      the auto-scheduler (AutoScheduleTasks.h), each task's search confirmed against its
///      default schedule;
///   5. the network built with the log's best records (each layer's variant chosen by them);
///   6. the tuned module timed against the untuned build.
///
/// Options are plain values (TuneNetworkOptions.h); what the run reports comes through the
/// callbacks as it happens (TuneCallbacks.h) and in the result at its end (TuneNetworkResult.h).
#pragma once
#include "driver/TuneCallbacks.h"
#include "driver/TuneNetworkOptions.h"
#include "driver/TuneNetworkResult.h"

namespace tessel::driver {

/// Tunes the network of `options`. Throws Error for a bad option before any work (naming it as
/// `tessel tune`'s flag for it, the name a user of either knows it by), and for what fails in
/// the run.
TuneNetworkResult tuneNetwork(const TuneNetworkOptions& options, const TuneCallbacks& callbacks = {});

}  // namespace tessel::driver
