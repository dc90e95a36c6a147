"""tessel.autotvm: template tuning as TVM's autotvm spells it (seeds 000, 002, 003).

    tasks = autotvm.task.extract_from_program(model, target="cpu")
    for task in tasks:
        tuner = autotvm.tuner.XGBTuner(task)
        tuner.tune(n_trial=..., early_stopping=..., measure_option=autotvm.measure_option(
                       builder=autotvm.LocalBuilder(), runner=autotvm.LocalRunner(number=4, repeat=3)),
                   callbacks=[autotvm.callback.progress_bar(n), autotvm.callback.log_to_file(log)])
    autotvm.record.pick_best(log, best_log)
    with autotvm.apply_history_best(best_log):
        module = tessel.build(model, target="cpu")
"""
from tessel.autotvm import callback, record, task, tuner
from tessel.autotvm.dispatch import apply_history_best
from tessel.autotvm.measure import LocalBuilder, LocalRunner, measure_option
from tessel.autotvm.task import Task, extract_from_program
from tessel.autotvm.tuner import GATuner, GridSearchTuner, RandomTuner, Tuner, XGBTuner

__all__ = ["GATuner", "GridSearchTuner", "LocalBuilder", "LocalRunner", "RandomTuner", "Task", "Tuner", "XGBTuner",
           "apply_history_best", "callback", "extract_from_program", "measure_option", "record", "task", "tuner"]
