"""How the auto-scheduler's candidates are measured and logged (auto_scheduler.TuningOptions,
LocalBuilder, LocalRunner, RecordToFile): the options of tessel's own builder and runner, as
for tessel.autotvm (tessel/autotvm/measure.py)."""
import collections

from tessel import _tessel
from tessel.autotvm import measure as autotvm_measure

MeasureInput = collections.namedtuple("MeasureInput", ["task", "state"])
MeasureResult = collections.namedtuple("MeasureResult", ["costs", "error_no", "error_msg", "all_cost", "timestamp"])


def LocalBuilder(timeout=15, n_parallel=None):
    """Builds candidates on this machine: n_parallel at once (None: the cores), each given
    `timeout` seconds."""
    return autotvm_measure.LocalBuilder(n_parallel=n_parallel, timeout=timeout)


def LocalRunner(timeout=10, number=3, repeat=1, min_repeat_ms=100, cooldown_interval=0.0, enable_cpu_cache_flush=False):
    """Runs candidates on this machine in tessel's measurement worker, with TVM's defaults:
    `repeat` measurements of `number` calls (raised until one lasts min_repeat_ms), with
    `cooldown_interval` seconds between candidates and, with enable_cpu_cache_flush, the caches
    flushed before every call."""
    options = autotvm_measure.LocalRunner(number=number, repeat=repeat, min_repeat_ms=min_repeat_ms, timeout=timeout)
    options.cooldown_interval, options.enable_cpu_cache_flush = cooldown_interval, enable_cpu_cache_flush
    return options


class RecordToFile:
    """Every trial appended to the records log `filename`. tessel appends each trial as it is
    measured (before the search learns of it), so the task scheduler takes the path from this
    callback rather than calling it; a tune() call needs exactly one."""

    def __init__(self, filename):
        self.filename = str(filename)

    def callback(self, policy, inputs, results):
        pass  # written by tessel itself, before the trial reaches the callbacks

    __call__ = callback


class TuningOptions:
    """What TaskScheduler.tune spends and where it logs: `num_measure_trials` for the whole
    network, `num_measures_per_round` candidates measured per round (None: `tessel tune`'s --batch-size),
    `measure_callbacks` (exactly one RecordToFile; any callable cb(scheduler, inputs, results),
    or an object with such a .callback, sees each trial), `builder` and `runner` ("local" or
    LocalBuilder()/LocalRunner()), `verbose` (1: tessel's progress lines and the task scheduler's
    table on stdout; 0: silent) and tessel's `seed`."""

    def __init__(self, num_measure_trials=0, num_measures_per_round=None, verbose=1, builder="local", runner="local",
                 measure_callbacks=None, seed=0):
        self.num_measure_trials, self.num_measures_per_round = num_measure_trials, num_measures_per_round
        self.verbose, self.seed = verbose, seed
        self.builder = _measure_part(builder, _tessel.LocalBuilderOptions, LocalBuilder, "builder")
        # Without a runner of its own, a run measures as `tessel tune` does (its LocalRunner options).
        self.runner = _measure_part(runner, _tessel.LocalRunnerOptions, _tessel.LocalRunnerOptions, "runner")
        self.measure_callbacks = list(measure_callbacks or [])
        logs = [cb.filename for cb in self.measure_callbacks if isinstance(cb, RecordToFile)]
        if len(logs) != 1:
            raise _tessel.TesselError("TuningOptions: tessel logs every trial; pass exactly one auto_scheduler.RecordToFile(log) "
                                      f"among the measure_callbacks (got {len(logs)})")
        self.log = logs[0]
        self.callbacks = []
        for cb in self.measure_callbacks:
            if isinstance(cb, RecordToFile):
                continue
            call = cb if callable(cb) else getattr(cb, "callback", None)
            if not callable(call):
                raise _tessel.TesselError(f"TuningOptions: measure callback {cb!r} is neither callable nor has a callback method")
            self.callbacks.append(call)


def _measure_part(value, kind, make_default, name):
    if isinstance(value, str):
        if value != "local":
            raise _tessel.TesselError(f"TuningOptions: {name} \"{value}\": only \"local\" (or Local{name.title()}(...)) here; "
                                      "remote devices: tessel tune --runner rpc")
        return make_default()
    if not isinstance(value, kind):
        raise _tessel.TesselError(f"TuningOptions: {name} must be \"local\" or auto_scheduler.Local{name.title()}(...), "
                                  f"got {type(value).__name__}")
    return value


__all__ = ["LocalBuilder", "LocalRunner", "MeasureInput", "MeasureResult", "RecordToFile", "TuningOptions"]
