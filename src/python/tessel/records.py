"""tessel.records: a picture of a tuning run (``tessel records plot`` from Python).

``plot(log)`` draws each task's best throughput over its trials and the network's estimated
latency over time — the thing to look at when deciding whether to tune longer. The curves are
computed by tessel (tune/TuningCurves.h, the same numbers the command draws), the picture by
matplotlib (tessel.records_plot).
"""
import json

from tessel import _tessel, records_plot


def curves(log, target=None, model=None):
    """The curves of a records log as a dict: per task (``curves["tasks"]``) the trials where its
    best GFLOPS changed and that best (``trial``, ``gflops``), and for the network
    (``curves["network"]``) the estimated latency in seconds (``latency``) after record
    ``trial``, ``seconds`` after the first. `target`: whose records (None: the log's only target);
    `model`: the network the log tuned (tessel.zoo.load, tessel.onnx.load), whose task weights
    (how often it runs each task) weigh the estimate; None counts each task once. Damaged lines of
    the log are skipped with a warning."""
    text = _tessel.tuning_curves(str(log), target or "", model)
    return json.loads(text)


def plot(log, output=None, target=None, model=None, title=None):
    """Draws the curves of `log` (see `curves` for `target` and `model`) and returns the
    matplotlib Figure; with `output`, also writes it there as .svg or .png by its extension
    (whole or not at all). ValueError for another extension, before any work."""
    if output is not None:
        records_plot.output_format(output)
    figure = records_plot.draw(curves(log, target, model), title)
    if output is not None:
        records_plot.save(figure, output)
    return figure


__all__ = ["curves", "plot"]
