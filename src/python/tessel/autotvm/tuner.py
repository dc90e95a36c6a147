"""Tuners (autotvm.tuner): each tunes one task through tessel's driver, as `tessel tune --tasks N
--tuner NAME` does, appending every trial to the log of its log_to_file callback."""
import collections

from tessel import _tessel
from tessel._tessel import TesselError
from tessel.autotvm.callback import log_to_file
from tessel.autotvm.measure import measure_option as default_measure_option

MeasureInput = collections.namedtuple("MeasureInput", ["task", "config_index", "config"])
MeasureResult = collections.namedtuple("MeasureResult", ["costs", "error_no", "all_cost", "timestamp", "error_msg"])


class Tuner:
    """A tuner of `task` by tessel's name for it (random, gridsearch, ga, xgb[_FEATURE][-LOSS])."""

    def __init__(self, task, name, seed=0):
        if not isinstance(task, _tessel.Task):
            raise TesselError(f"{type(self).__name__}: expected a task of extract_from_program, got {type(task).__name__}")
        self.task, self.name, self.seed = task, name, seed
        self.best_flops, self.best_config, self.trials = 0.0, None, 0

    def tune(self, n_trial, early_stopping=None, measure_option=None, callbacks=()):
        """Measures up to `n_trial` candidates (capped by the task's config space), stopping
        after `early_stopping` trials without a better one (None: never). Each trial is in the
        log before the callbacks see it; an exception a callback raises ends the tuning, and so
        does Ctrl-C (KeyboardInterrupt), the log ending at the last whole trial."""
        logs = [cb.path for cb in callbacks if isinstance(cb, log_to_file)]
        if len(logs) != 1:
            raise TesselError("tune: tessel logs every trial; pass exactly one autotvm.callback.log_to_file(path) "
                              f"among the callbacks (got {len(logs)})")
        others = [cb for cb in callbacks if not isinstance(cb, log_to_file)]
        for cb in others:
            if not callable(cb):
                raise TesselError(f"tune: callback {cb!r} is not callable")
        option = measure_option or default_measure_option()

        def on_trial(trial):
            inputs = [MeasureInput(self.task, trial.config_index, trial.config)]
            results = [MeasureResult(list(trial.costs), trial.error_no, trial.all_cost, trial.timestamp, trial.error_msg)]
            for cb in others:
                cb(self, inputs, results)

        outcome = _tessel.tune_task(self.task, self.name, int(n_trial), int(early_stopping or 0), logs[0], self.seed,
                                    option.builder, option.runner, on_trial)
        for cb in others:
            if hasattr(cb, "finish"):
                cb.finish()
        self.trials = outcome.trials
        if outcome.best_cost != float("inf"):
            self.best_flops = self.task.flops / outcome.best_cost
        self.best_config = outcome.best_config
        return outcome


class GridSearchTuner(Tuner):
    def __init__(self, task, seed=0):
        super().__init__(task, "gridsearch", seed)


class RandomTuner(Tuner):
    def __init__(self, task, seed=0):
        super().__init__(task, "random", seed)


class GATuner(Tuner):
    def __init__(self, task, seed=0):
        super().__init__(task, "ga", seed)


class XGBTuner(Tuner):
    """loss_type "rank" or "reg", feature_type "knob", "itervar" or "curve"; None: tessel's default."""

    def __init__(self, task, loss_type=None, feature_type=None, seed=0):
        name = "xgb" + (f"_{feature_type}" if feature_type else "") + (f"-{loss_type}" if loss_type else "")
        super().__init__(task, name, seed)


__all__ = ["GATuner", "GridSearchTuner", "MeasureInput", "MeasureResult", "RandomTuner", "Tuner", "XGBTuner"]
