"""The task scheduler (auto_scheduler.TaskScheduler): the network's tasks tuned in rounds through
tessel's driver, as `tessel tune --scheduler auto --tasks ...` tunes them, without the build
(ApplyHistoryBest and tessel.build make the module)."""
import os

from tessel import _tessel
from tessel._tessel import TesselError
from tessel.auto_scheduler.measure import MeasureInput, MeasureResult, TuningOptions


class TaskScheduler:
    """Tunes `tasks` (of one extract_tasks call), giving each round to the task whose tuning
    lowers the network's estimated latency most ("gradient") or to each in turn ("round-robin";
    another strategy is refused by tune(), before any work). tessel weighs a task by how many
    times the network runs it: `task_weights` (None or extract_tasks's) must be those weights. `load_log_file` resumes: the log's trials
    of these tasks count against the budget and teach the search first; it must be the log the
    RecordToFile callback appends to."""

    def __init__(self, tasks, task_weights=None, strategy="gradient", load_log_file=None, seed=None):
        tasks = list(tasks)
        if not tasks:
            raise TesselError("TaskScheduler: no tasks to tune (extract_tasks found none, or the list passed is empty)")
        for task in tasks:
            if not isinstance(task, _tessel.SearchTask):
                raise TesselError(f"TaskScheduler: expected tasks of auto_scheduler.extract_tasks, got {type(task).__name__}")
        if task_weights is not None:
            task_weights = list(task_weights)
            if len(task_weights) != len(tasks):
                raise TesselError(f"TaskScheduler: {len(task_weights)} task_weights for {len(tasks)} tasks")
            for task, weight in zip(tasks, task_weights):
                if weight != task.weight:
                    raise TesselError(f"TaskScheduler: task {task.number} ({task.desc}) runs {task.weight} times in the network, "
                                      f"weight {weight} given (tessel weighs tasks by the network: pass extract_tasks's weights)")
        self.tasks, self.task_weights = tasks, [task.weight for task in tasks]
        self.strategy, self.load_log_file, self.seed = strategy, load_log_file, seed
        self.outcomes = []

    def tune(self, tuning_options):
        """Measures up to num_measure_trials candidates over the tasks (the log's trials of them
        counted when resuming), each task's best confirmed against its default schedule. Each
        trial is in the log before the callbacks see it; an exception a callback raises ends the
        run, and so does Ctrl-C (KeyboardInterrupt), the log ending at the last whole trial.
        Returns each task's outcome (also on .outcomes)."""
        if not isinstance(tuning_options, TuningOptions):
            raise TesselError(f"TaskScheduler.tune: expected auto_scheduler.TuningOptions, got {type(tuning_options).__name__}")
        o = tuning_options
        resume = self.load_log_file is not None
        if resume and os.path.realpath(self.load_log_file) != os.path.realpath(o.log):
            raise TesselError(f"TaskScheduler: load_log_file {self.load_log_file} is not the log RecordToFile appends to ({o.log}): "
                              "tessel resumes from the log it appends to")
        by_number = {task.number: task for task in self.tasks}

        def on_trial(trial):
            inputs = [MeasureInput(by_number[trial.task], trial.steps)]
            results = [MeasureResult(list(trial.costs), trial.error_no, trial.error_msg, trial.all_cost, trial.timestamp)]
            for cb in o.callbacks:
                cb(self, inputs, results)

        seed = o.seed if self.seed is None else self.seed
        self.outcomes = _tessel.schedule_tasks(self.tasks, self.strategy, int(o.num_measure_trials),
                                               o.num_measures_per_round, o.log, resume, int(seed), bool(o.verbose),
                                               o.builder, o.runner, on_trial if o.callbacks else None)
        return self.outcomes


__all__ = ["TaskScheduler"]
