/// A network's tasks tuned with templates (AutoTVM's way), the part of driver::tuneNetwork for
/// SearchKind::Templates: each task in turn with the whole `nTrial` budget (TVM's AutoTVM
/// tutorials; with transfer learning, a model-based tuner learns from the tasks before), or,
/// with a task scheduler, `nTrial` for the network spent in rounds on the task that lowers the
/// estimated latency most. Every trial is logged before the tuner learns of it; a resumed run's
/// logged trials count towards the budget and teach the tuners first. After its search each task
/// is confirmed against its default config (tune/Confirmation.h). The plan, each task's
/// tuning and each decision go to the session's callbacks; the progress lines and the task
/// scheduler's table to the options' tuneLinesTo.
#pragma once
#include "driver/TuningSession.h"

namespace tessel::driver {

TuningSummary tuneTemplateTasks(TuningSession& session);

}  // namespace tessel::driver
