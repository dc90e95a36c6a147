"""The picture of a tuning run: `tessel records plot` and tessel.records.plot on the log of a real
short tuning run (the two-layer perceptron, two tasks, a few trials each), checked in the SVG they
write (one curve per task and the estimated latency, found by their ids), and their errors."""
import json
import os
import subprocess
import xml.etree.ElementTree as ElementTree

import pytest

import tessel

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def tuning_log(cli, tiny_onnx, tmp_path_factory):
    """The records of `tessel tune` on the perceptron: 3 trials per task and the confirmations."""
    path, _ = tiny_onnx
    log = str(tmp_path_factory.mktemp("plot") / "mlp.log")
    subprocess.run([cli, "tune", "--model", path, "--input-shape", "x:1,8", "--n-trial", "3", "--log", log, "--no-evaluate"],
                   check=True, capture_output=True, text=True)
    return log


def logged_tasks(log):
    """The workload keys of the log's records, in order of first appearance."""
    keys = []
    for line in open(log):
        key = json.loads(line)["task"]["workload_key"]
        if key not in keys:
            keys.append(key)
    return keys


def drawn_curves(svg):
    """The ids of the picture's curves (matplotlib writes a line's gid as its group's id), and
    whether each has a path with points."""
    curves = {}
    for group in ElementTree.parse(svg).getroot().iter(f"{SVG}g"):
        gid = group.get("id", "")
        if gid.startswith("task-") or gid == "network-latency":
            paths = list(group.iter(f"{SVG}path"))
            curves[gid] = bool(paths) and all(p.get("d") for p in paths)
    return curves


def run_plot(cli, *args, **env):
    return subprocess.run([cli, "records", "plot", *args], capture_output=True, text=True, env={**os.environ, **env})


def test_the_command_draws_one_curve_per_task_and_the_estimate(cli, tuning_log, tmp_path):
    tasks = logged_tasks(tuning_log)
    assert len(tasks) == 2
    svg = str(tmp_path / "mlp.svg")
    done = run_plot(cli, tuning_log, "-o", svg)
    assert done.returncode == 0, done.stderr
    assert drawn_curves(svg) == {"task-1": True, "task-2": True, "network-latency": True}
    # What the picture shows, said in words.
    assert f"{tuning_log}: " in done.stdout and " records of 2 tasks on cpu" in done.stdout
    assert "estimated network latency: " in done.stdout and "each task counted once" in done.stdout
    assert f"wrote {svg}" in done.stdout

    # A PNG by the extension; an existing picture is replaced only with --force.
    png = str(tmp_path / "mlp.png")
    done = run_plot(cli, tuning_log, "-o", png)
    assert done.returncode == 0, done.stderr
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    again = run_plot(cli, tuning_log, "-o", svg)
    assert again.returncode == 1 and "the file exists; pass --force" in again.stderr


def test_the_command_weighs_by_the_network(cli, tuning_log, tiny_onnx, tmp_path):
    path, _ = tiny_onnx
    svg = str(tmp_path / "weighted.svg")
    done = run_plot(cli, tuning_log, "-o", svg, "--model", path, "--input-shape", "x:1,8")
    assert done.returncode == 0, done.stderr
    assert f"weights from {path}" in done.stdout
    assert len(drawn_curves(svg)) == 3
    other = run_plot(cli, tuning_log, "-o", str(tmp_path / "other.svg"), "--model", "resnet-18", "--image-size", "32")
    assert other.returncode == 1 and "none of the log's 2 tasks of cpu is a task of the network" in other.stderr


def test_the_command_says_what_is_wrong(cli, tuning_log, tmp_path):
    pdf = run_plot(cli, tuning_log, "-o", str(tmp_path / "x.pdf"))
    assert pdf.returncode == 1
    assert f"error: -o {tmp_path / 'x.pdf'}: a picture is written as .svg or .png" in pdf.stderr
    assert "Traceback" not in pdf.stderr

    no_python = run_plot(cli, tuning_log, "-o", str(tmp_path / "a.svg"), TESSEL_PYTHON=str(tmp_path / "no-python"))
    assert no_python.returncode == 1
    assert "no-python: no such program; tessel records plot draws with Python 3 and matplotlib" in no_python.stderr

    # A Python without its site packages has no matplotlib.
    bare = tmp_path / "bare-python"
    bare.write_text("#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n")
    bare.chmod(0o755)
    no_matplotlib = run_plot(cli, tuning_log, "-o", str(tmp_path / "b.svg"), TESSEL_PYTHON=str(bare))
    assert no_matplotlib.returncode == 1
    assert "matplotlib is not installed" in no_matplotlib.stderr and "apt-get install python3-matplotlib" in no_matplotlib.stderr
    assert not (tmp_path / "b.svg").exists()

    missing = run_plot(cli, str(tmp_path / "none.log"), "-o", str(tmp_path / "c.svg"))
    assert missing.returncode == 1 and "none.log" in missing.stderr


def damaged_two_target_log(tuning_log, tmp_path):
    """The log with a garbage third line and a record of another target at its end."""
    lines = open(tuning_log).read().splitlines()
    other = json.loads(lines[0])
    other["target"] = "cpu -mcpu=haswell"
    other.pop("machine", None)
    path = tmp_path / "damaged.log"
    path.write_text("\n".join(lines[:2] + ["%%% not a record"] + lines[2:] + [json.dumps(other)]) + "\n")
    return str(path)


def test_damaged_lines_and_other_targets(cli, tuning_log, tmp_path):
    log = damaged_two_target_log(tuning_log, tmp_path)
    both = run_plot(cli, log, "-o", str(tmp_path / "d.svg"))
    assert both.returncode == 1
    assert "warning: " in both.stderr and "line 3: not valid JSON" in both.stderr
    assert "the log holds records of 2 targets (cpu, cpu -mcpu=haswell); name the one to draw" in both.stderr
    chosen = run_plot(cli, log, "-o", str(tmp_path / "d.svg"), "--target", "cpu")
    assert chosen.returncode == 0, chosen.stderr
    assert "(1 records of other targets left out)" in chosen.stdout
    assert len(drawn_curves(str(tmp_path / "d.svg"))) == 3
    absent = run_plot(cli, log, "-o", str(tmp_path / "e.svg"), "--target", "cuda")
    assert absent.returncode == 1 and "the log has no record of target 'cuda'" in absent.stderr


def test_python_draws_the_same_curves(tuning_log, tiny_onnx, tmp_path):
    path, _ = tiny_onnx
    model = tessel.onnx.load(path, {"x": [1, 8]})
    svg = str(tmp_path / "py.svg")
    figure = tessel.records.plot(tuning_log, svg, model=model, title="the perceptron")
    from matplotlib.text import Text
    assert "the perceptron" in [text.get_text() for text in figure.findobj(Text)]
    assert drawn_curves(svg) == {"task-1": True, "task-2": True, "network-latency": True}
    curves = tessel.records.curves(tuning_log, model=model)
    assert curves["weighted"] and curves["target"] == "cpu"
    assert [t["workload_key"] for t in curves["tasks"]] == logged_tasks(tuning_log)
    for task in curves["tasks"]:
        assert task["weight"] == 1 and task["in_network"]
        assert task["trial"][-1] == task["trials"] and task["gflops"] == sorted(task["gflops"])
    network = curves["network"]
    assert network["trial"][-1] == curves["records"] and network["latency"] == sorted(network["latency"], reverse=True)
    # Without a file, only the figure.
    assert tessel.records.plot(tuning_log).axes


def test_python_errors_and_warnings(tuning_log, tmp_path):
    with pytest.raises(ValueError, match=r"x\.pdf: a picture is written as \.svg or \.png"):
        tessel.records.plot(tuning_log, str(tmp_path / "x.pdf"))
    log = damaged_two_target_log(tuning_log, tmp_path)
    with pytest.warns(UserWarning, match="line 3: not valid JSON"):
        with pytest.raises(tessel.TesselError, match="records of 2 targets"):
            tessel.records.curves(log)
    with pytest.warns(UserWarning, match="line 3"):
        assert tessel.records.curves(log, target="cpu -mcpu=haswell")["records"] == 1
    with pytest.raises(tessel.TesselError, match="no-such.log"):
        tessel.records.curves(str(tmp_path / "no-such.log"))
