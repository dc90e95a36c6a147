/// How many times a network runs each of its tuning tasks, by the workload key the task's records
/// carry: the weights of its estimated latency (sum over tasks of weight x best cost, as the task
/// scheduler estimates it), which a records log alone does not know. Both tuners' tasks are
/// weighed, so a log of either (or both) finds its tasks.
#pragma once
#include <map>
#include <string>

#include "driver/PreparedModel.h"
#include "target/Target.h"

namespace tessel::driver {

/// The weights of the tasks of `prepared` (prepared for `target`) on `target`, a CPU or a GPU
/// (whose templates' tasks are listed for the limits of the device present, else of its profile).
std::map<std::string, double> networkTaskWeights(const PreparedModel& prepared, const target::Target& target);

}  // namespace tessel::driver
