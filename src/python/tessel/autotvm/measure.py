"""Where and how candidates are measured (autotvm.measure_option, LocalBuilder, LocalRunner):
the options of tessel's own builder and runner (tune/LocalBuilder.h, tune/LocalRunner.h)."""
from dataclasses import dataclass

from tessel import _tessel


def LocalBuilder(n_parallel=None, timeout=10):
    """Builds candidates on this machine: n_parallel builds at once (None: the cores), each
    given `timeout` seconds."""
    options = _tessel.LocalBuilderOptions()
    options.n_parallel = n_parallel or 0
    options.timeout = timeout
    return options


def LocalRunner(number=4, repeat=3, min_repeat_ms=0, timeout=10):
    """Runs candidates on this machine in tessel's measurement worker: `repeat` measurements
    of `number` calls (number raised to last min_repeat_ms), each candidate given `timeout` seconds."""
    options = _tessel.LocalRunnerOptions()
    options.number, options.repeat, options.min_repeat_ms, options.timeout = number, repeat, min_repeat_ms, timeout
    return options


@dataclass
class MeasureOption:
    builder: _tessel.LocalBuilderOptions
    runner: _tessel.LocalRunnerOptions


def measure_option(builder=None, runner=None):
    """How a tuner measures its candidates (autotvm.measure_option)."""
    return MeasureOption(builder or LocalBuilder(), runner or LocalRunner())
