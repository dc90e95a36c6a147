"""tessel.autotvm: tasks, a tuner's trials seen by callbacks and logged, pick_best,
apply_history_best used by tessel.build, errors and interruption."""
import json
import re

import pytest

import tessel
from tessel import autotvm

from conftest import stop_after_first, stopped_by


@pytest.fixture(scope="module")
def tasks(small_network):
    return autotvm.extract_from_program(small_network, target="cpu")


@pytest.fixture(scope="module")
def small_task(tasks):
    """The task with the fewest FLOPs: its candidates build and run fastest."""
    return min(tasks, key=lambda t: t.flops)


def measure():
    return autotvm.measure_option(builder=autotvm.LocalBuilder(), runner=autotvm.LocalRunner(number=1, repeat=2))


def searched_records(log):
    """The log's records of the search (not its confirmation), as JSON."""
    records = [json.loads(line) for line in open(log)]
    return [r for r in records if not r["result"].get("confirmed")]


def test_tasks_are_numbered_as_tessel_tasks_lists_them(tasks, small_network, cli):
    import subprocess
    assert [t.number for t in tasks] == list(range(1, len(tasks) + 1))
    listed = subprocess.run([cli, "tasks", "--model", "resnet-18", "--image-size", "32"], check=True, capture_output=True,
                            text=True).stdout
    assert f"Extracted {len(tasks)} tasks" in listed
    for t in tasks:
        assert t.name in listed and t.template in listed
        assert t.flops > 0 and t.config_space_size > 1


def test_extract_refuses_params_and_bad_targets(small_network):
    with pytest.raises(tessel.TesselError, match="params must be None"):
        autotvm.extract_from_program(small_network, target="cpu", params={})
    with pytest.raises(tessel.TesselError, match="CPU targets"):
        autotvm.extract_from_program(small_network, target="opencl")


def test_a_tuning_run_logs_what_the_callback_sees_then_builds_with_the_best(small_network, small_task, tmp_path, capsys):
    log, best = str(tmp_path / "tune.log"), str(tmp_path / "best.log")
    seen = []
    tuner = autotvm.tuner.RandomTuner(small_task, seed=3)
    outcome = tuner.tune(n_trial=3, measure_option=measure(),
                         callbacks=[autotvm.callback.progress_bar(3), autotvm.callback.log_to_file(log),
                                    lambda t, inputs, results: seen.append((t, inputs[0], results[0]))])
    assert outcome.trials == 3 and len(seen) == 3
    assert all(t is tuner and inp.task is small_task for t, inp, _ in seen)
    assert all(len(res.costs) == 2 and res.error_no == 0 for _, _, res in seen)  # LocalRunner(repeat=2)
    searched = searched_records(log)
    assert [r["result"]["timestamp"] for r in searched] == [res.timestamp for _, _, res in seen]
    assert [r["schedule"]["config"]["index"] for r in searched] == [inp.config_index for _, inp, _ in seen]
    assert "Progress: (3/3)" in capsys.readouterr().out
    assert tuner.best_flops > 0 and tuner.best_config is not None

    assert autotvm.record.pick_best(log, best) == 1
    picked = [json.loads(line) for line in open(best)]
    assert picked[0]["task"]["workload_key"] == small_task.workload_key
    with autotvm.apply_history_best(best):
        module = tessel.build(small_network, target="cpu")
    # The task's one record serves every function of its workload.
    assert any(re.match(rf"{re.escape(best)}: applied tuned records to [1-9]\d* of", line) for line in module.lines), module.lines
    assert not any(line.startswith(best) for line in tessel.build(small_network, target="cpu").lines)


def test_tune_needs_exactly_one_log(small_task, tmp_path):
    with pytest.raises(tessel.TesselError, match=r"exactly one autotvm.callback.log_to_file\(path\).*\(got 0\)"):
        autotvm.tuner.GridSearchTuner(small_task).tune(n_trial=1, callbacks=[])
    with pytest.raises(tessel.TesselError, match="not callable"):
        autotvm.tuner.GridSearchTuner(small_task).tune(n_trial=1, callbacks=[autotvm.callback.log_to_file(tmp_path / "l"), 5])


def test_bad_tuner_and_budget_are_refused_before_any_trial(small_task, tmp_path):
    log = tmp_path / "never.log"
    with pytest.raises(tessel.TesselError, match="Invalid tuner: xgb_bogus"):
        autotvm.tuner.XGBTuner(small_task, feature_type="bogus").tune(n_trial=1, callbacks=[autotvm.callback.log_to_file(log)])
    with pytest.raises(tessel.TesselError, match="--n-trial must be at least 1, got 0"):
        autotvm.tuner.GATuner(small_task).tune(n_trial=0, callbacks=[autotvm.callback.log_to_file(log)])
    with pytest.raises(tessel.TesselError, match="LocalRunner: number must be between 1 and 1000000, got 0"):
        autotvm.tuner.RandomTuner(small_task).tune(n_trial=1, measure_option=autotvm.measure_option(runner=autotvm.LocalRunner(number=0)),
                                                   callbacks=[autotvm.callback.log_to_file(log)])
    with pytest.raises(tessel.TesselError, match="expected a task"):
        autotvm.tuner.RandomTuner("conv2d")
    assert not log.exists()


@pytest.mark.parametrize("stop", ["exception", "ctrl-c"])
def test_a_stopped_run_leaves_whole_trials_in_the_log(small_task, tmp_path, stop):
    log = str(tmp_path / "stopped.log")
    seen = []
    with pytest.raises(stopped_by(stop)):
        autotvm.tuner.RandomTuner(small_task).tune(n_trial=8, measure_option=measure(),
                                                   callbacks=[autotvm.callback.log_to_file(log), stop_after_first(stop, seen)])
    assert len(seen) == 1
    assert [r["result"]["timestamp"] for r in searched_records(log)] == [seen[0].timestamp]


def test_pick_best_of_a_missing_log_is_named(tmp_path):
    with pytest.raises(tessel.TesselError, match="none.log"):
        autotvm.record.pick_best(str(tmp_path / "none.log"), str(tmp_path / "best.log"))


def test_apply_history_best_needs_a_log(tmp_path):
    with pytest.raises(tessel.TesselError, match="no such records log"):
        with autotvm.apply_history_best(str(tmp_path / "none.log")):
            pass
