"""The picture of a tuning run: each task's best throughput over its trials and the network's
estimated latency over time, drawn with matplotlib from the curves tessel computes from a records
log (tune/TuningCurves.h: tuningCurvesToJson). ``tessel.records.plot`` draws with it, and
``tessel records plot`` runs this file as a program (curves as JSON on stdin), so both draw the
same picture. It imports nothing of tessel: the command needs only Python and matplotlib.

Each line carries an SVG id: ``task-N`` for task N's curve, ``network-latency`` for the
estimate, so a test (or a script) finds them in the file.
"""
import json
import os
import sys

# What a picture is written as, by the output's extension.
FORMATS = ("svg", "png")

# Exit codes of the program, which `tessel records plot` turns into its error messages.
EXIT_BAD_OUTPUT = 2
EXIT_NO_MATPLOTLIB = 3


def output_format(path):
    """The format of `path` by its extension; ValueError naming it when tessel does not draw in it."""
    extension = os.path.splitext(str(path))[1].lower().lstrip(".")
    if extension not in FORMATS:
        raise ValueError(f"{path}: a picture is written as {' or '.join('.' + f for f in FORMATS)} (by the file's extension)")
    return extension


def _pyplot():
    # Agg: no display is needed (nor used when one is there), so it runs on a server or in a test.
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    return pyplot


def _task_label(task):
    label = f"{task['number']} {task['name']}"
    if task["weight"] != 1 and task["in_network"]:
        label += f" (x{task['weight']:g})"
    if not task["in_network"]:
        label += " (not the network's)"
    if not task["gflops"]:
        label += " (no valid trial)"
    return label


def draw(curves, title=None):
    """A matplotlib Figure of the curves (the dict tuningCurvesToJson writes): above, one line per
    task of its best GFLOPS after each of its trials; below, the estimated network latency (ms)
    against the seconds since the run's first trial, with the trial count on a second axis."""
    pyplot = _pyplot()
    figure, (throughput, latency) = pyplot.subplots(2, 1, figsize=(9, 8), constrained_layout=True)
    figure.suptitle(title or f"tuning on {curves['target']}: {curves['records']} trials of {len(curves['tasks'])} tasks")

    for task in curves["tasks"]:
        (line,) = throughput.plot(task["trial"], task["gflops"], drawstyle="steps-post", marker=".", label=_task_label(task))
        line.set_gid(f"task-{task['number']}")
    throughput.set_xlabel("trials of the task")
    throughput.xaxis.get_major_locator().set_params(integer=True)
    throughput.set_ylabel("best GFLOPS so far")
    throughput.set_title("each task's best throughput")
    throughput.grid(True, alpha=0.3)
    if len(curves["tasks"]) <= 24:
        throughput.legend(fontsize="small", ncol=2 if len(curves["tasks"]) > 8 else 1)

    network = curves["network"]
    # Microseconds for networks of tiny kernels, whose milliseconds would read 0.0000.
    unit, scale = ("ms", 1e3) if max(network["latency"], default=1) >= 1e-4 else ("us", 1e6)
    latencies = [seconds * scale for seconds in network["latency"]]
    label = None
    if latencies:
        label = (f"{latencies[-1]:.4g} {unit} after {network['trial'][-1]} trials "
                 f"(from {latencies[0]:.4g} {unit} at trial {network['trial'][0]})")
    (line,) = latency.plot(network["seconds"], latencies, drawstyle="steps-post", marker=".", color="black", label=label)
    line.set_gid("network-latency")
    latency.set_title("estimated network latency: sum over the log's tasks of weight x best latency")
    latency.set_xlim(left=0)
    latency.set_xlabel("seconds since the first trial")
    latency.set_ylabel(unit)
    latency.grid(True, alpha=0.3)
    weights = "weights: how often the network runs each task" if curves["weighted"] else "weights: each task once (no network given)"
    if latencies:
        latency.legend(title=weights, fontsize="small", title_fontsize="small")
    else:
        latency.text(0.5, 0.5, f"not every task has a valid trial yet\n{weights}", ha="center", va="center", transform=latency.transAxes)
    return figure


def save(figure, path):
    """Writes the figure to `path` in the format of its extension (FORMATS), whole or not at all:
    to a temporary file beside it, then renamed over it, as tessel writes every output."""
    path = str(path)
    kind = output_format(path)
    temporary = f"{path}.tmp-{os.getpid()}"
    try:
        figure.savefig(temporary, format=kind)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def main(argv):
    """`records_plot.py OUTPUT [TITLE]`, the curves' JSON on stdin: what `tessel records plot` runs."""
    if len(argv) not in (2, 3):
        print("usage: records_plot.py OUTPUT.svg|png [TITLE] < curves.json", file=sys.stderr)
        return EXIT_BAD_OUTPUT
    try:
        output_format(argv[1])
    except ValueError as error:
        print(error, file=sys.stderr)
        return EXIT_BAD_OUTPUT
    try:
        _pyplot()
    except ImportError as error:
        print(f"matplotlib is not installed for {sys.executable} ({error}); Debian: apt-get install python3-matplotlib",
              file=sys.stderr)
        return EXIT_NO_MATPLOTLIB
    save(draw(json.load(sys.stdin), argv[2] if len(argv) == 3 else None), argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
