/// How many times a network runs each of its tuning tasks, by the workload key the task's records
/// carry: the weights of its estimated latency (sum over tasks of weight x best cost, as the task
/// scheduler estimates it), which a records log alone does not know. Both tuners' tasks are
/// weighed, so a log of either (or both) finds its tasks.
#pragma once
#include <map>
#include <string>

#include "driver/PreparedModel.h"
#include "driver/TuningTasks.h"

namespace tessel::driver {

/// The weights of the tasks of `prepared` listed with `options` for each tuner (options.search is
/// replaced by each kind in turn).
std::map<std::string, double> networkTaskWeights(const PreparedModel& prepared, TaskListOptions options);

}  // namespace tessel::driver
