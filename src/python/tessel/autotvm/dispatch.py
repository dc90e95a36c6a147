"""apply_history_best: the records a tessel.build inside the ``with`` block applies. The
auto-scheduler's ApplyHistoryBest (tessel/auto_scheduler/dispatch.py) sets the same log: tessel
has one record format and one build for both tuners."""
import contextlib
import contextvars
import os

from tessel._tessel import TesselError

_log = contextvars.ContextVar("tessel_apply_history_best", default=None)


def checked_log(log, who):
    """`log` as a path, or a TesselError naming `who` when it is no file."""
    if not os.path.isfile(log):
        raise TesselError(f"{who}: {log}: no such records log")
    return os.fspath(log)


def enter(log):
    """Makes `log` the records of tessel.build until leave(the token returned)."""
    return _log.set(log)


def leave(token):
    _log.reset(token)


@contextlib.contextmanager
def apply_history_best(log):
    """Inside the block, tessel.build applies the best records of `log` (a records log path)."""
    token = enter(checked_log(log, "apply_history_best"))
    try:
        yield
    finally:
        leave(token)


def current_log():
    """The log of the innermost apply_history_best block, or None."""
    return _log.get()
