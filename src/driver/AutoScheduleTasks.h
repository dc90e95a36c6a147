/// A network's tasks tuned by the template-free auto-scheduler (tune/ansor), the part of
/// driver::tuneNetwork for SearchKind::AutoScheduler: rounds that the task scheduler
/// (tune/TaskScheduler.h) gives to the task whose tuning lowers the network's estimated
/// latency most (its table after each goes to the options' tuneLinesTo). Per task the sketch
/// policy with the XGBoost cost model runs in the tuning loop and keeps what it learned across
/// rounds; every trial is logged before the policy learns of it. `nTrial` is the budget of the
/// whole network, as in seed 001. Resuming feeds each task's logged auto-scheduler trials to
/// its fresh policy and model first (the model is rebuilt from them) and counts them.
///
/// On a GPU target the tasks are searched with the GPU sketch rules (tune/ansor/GpuSketches.h)
/// within the target's limits, and the default schedule is the default GPU schedule.
///
/// Each task's first measurement is its default schedule (the untuned build's), and after the
/// rounds the best schedules of each task are confirmed against it by interleaved
/// re-measurement (tune/Confirmation.h), as template tuning does: a short or stopped run never
/// builds anything slower than the untuned network, and the confirmed decision is the record
/// that competes with a template's confirmed record for the same workload. The plan, each
/// round and each decision go to the session's callbacks.
#pragma once
#include "driver/TuningSession.h"

namespace tessel::driver {

/// The evolutionary search's population per round (TVM: 2048; 256 measured as good on
/// networks at a fraction of the search's time).
inline constexpr size_t kAutoSchedulePopulation = 256;

TuningSummary autoScheduleTasks(TuningSession& session);

}  // namespace tessel::driver
