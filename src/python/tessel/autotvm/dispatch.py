"""apply_history_best: the records a tessel.build inside the ``with`` block applies."""
import contextlib
import contextvars
import os

from tessel._tessel import TesselError

_log = contextvars.ContextVar("tessel_apply_history_best", default=None)


@contextlib.contextmanager
def apply_history_best(log):
    """Inside the block, tessel.build applies the best records of `log` (a records log path)."""
    if not os.path.isfile(log):
        raise TesselError(f"apply_history_best: {log}: no such records log")
    token = _log.set(os.fspath(log))
    try:
        yield
    finally:
        _log.reset(token)


def current_log():
    """The log of the innermost apply_history_best block, or None."""
    return _log.get()
