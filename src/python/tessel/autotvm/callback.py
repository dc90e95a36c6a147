"""Callbacks of Tuner.tune (autotvm.callback). Any callable taking (tuner, inputs, results)
is one; these two are tessel's."""
import sys
import time


class log_to_file:
    """Every trial appended to the records log `path`. tessel logs every trial as it is
    measured (before the search learns of it), so the tuner takes the path from this callback
    rather than calling it; a tune() call needs exactly one."""

    def __init__(self, path):
        self.path = str(path)

    def __call__(self, tuner, inputs, results):
        pass  # written by tessel itself, before the trial reaches the callbacks


class progress_bar:
    """A line rewritten in place: current and best GFLOPS, trials out of `total`, seconds."""

    def __init__(self, total, prefix="", out=None):
        self.total, self.prefix, self.out = total, prefix, out or sys.stdout
        self.count, self.best, self.start = 0, 0.0, time.time()

    def __call__(self, tuner, inputs, results):
        for inp, res in zip(inputs, results):
            self.count += 1
            flops = 0.0
            if res.error_no == 0 and res.costs:
                flops = inp.task.flops / (sum(res.costs) / len(res.costs)) / 1e9
            self.best = max(self.best, flops)
            self.out.write(f"\r{self.prefix}Current/Best: {flops:7.2f}/{self.best:7.2f} GFLOPS | "
                           f"Progress: ({self.count}/{self.total}) | {time.time() - self.start:.2f} s")
            self.out.flush()

    def finish(self):
        self.out.write(" Done.\n")
        self.out.flush()
