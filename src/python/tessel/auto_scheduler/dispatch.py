"""ApplyHistoryBest: the records a tessel.build inside the ``with`` block applies (the records of
both tuners are one format, so this is autotvm.apply_history_best under the auto-scheduler's name)."""
from tessel.autotvm import dispatch


class ApplyHistoryBest:
    """``with ApplyHistoryBest(log):``, tessel.build applies the best records of `log`."""

    def __init__(self, records):
        self.log = dispatch.checked_log(records, "ApplyHistoryBest")
        self._tokens = []

    def __enter__(self):
        self._tokens.append(dispatch.enter(self.log))
        return self

    def __exit__(self, *exc):
        dispatch.leave(self._tokens.pop())


__all__ = ["ApplyHistoryBest"]
