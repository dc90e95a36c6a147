"""tessel.auto_scheduler: template-free tuning as TVM's auto_scheduler spells it (seed 001).

    tasks, task_weights = auto_scheduler.extract_tasks(model, target="cpu")
    for task in tasks:
        print("========== Task %d  (workload key: %s) ==========" % (task.number, task.workload_key))
        print(task.compute_dag)
    tuner = auto_scheduler.TaskScheduler(tasks, task_weights)
    tuner.tune(auto_scheduler.TuningOptions(num_measure_trials=200,
                                            runner=auto_scheduler.LocalRunner(repeat=10, enable_cpu_cache_flush=True),
                                            measure_callbacks=[auto_scheduler.RecordToFile(log)]))
    with auto_scheduler.ApplyHistoryBest(log):
        module = tessel.build(model, target="cpu")
"""
from tessel.auto_scheduler.dispatch import ApplyHistoryBest
from tessel.auto_scheduler.measure import LocalBuilder, LocalRunner, MeasureInput, MeasureResult, RecordToFile, TuningOptions
from tessel.auto_scheduler.task import SearchTask, extract_tasks
from tessel.auto_scheduler.task_scheduler import TaskScheduler

__all__ = ["ApplyHistoryBest", "LocalBuilder", "LocalRunner", "MeasureInput", "MeasureResult", "RecordToFile", "SearchTask",
           "TaskScheduler", "TuningOptions", "extract_tasks"]
