"""tessel.build, Module.export, tessel.runtime: numpy round trips against numpy and the CLI."""
import os
import subprocess

import numpy as np
import pytest

import tessel
from tessel import runtime


def test_tiny_model_matches_numpy(tiny_onnx):
    path, reference = tiny_onnx
    module = tessel.build(tessel.onnx.load(path, {"x": (3, 8)}), target="llvm")
    graph = runtime.GraphModule(module, tessel.cpu(0))
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    graph.set_input("x", x)
    graph.run()
    y = graph.get_output(0)
    assert y.dtype == np.float32 and y.shape == (3, 4)
    np.testing.assert_allclose(y, reference(x), rtol=1e-5, atol=1e-5)
    # A strided view is made compact first, by index too, and gives the same numbers.
    wide = np.zeros((3, 16), np.float32)
    wide[:, ::2] = x
    graph.set_input(0, wide[:, ::2])
    graph.run()
    np.testing.assert_array_equal(graph.get_output(0), y)


def test_output_is_a_new_array_each_time(tiny_onnx):
    path, _ = tiny_onnx
    graph = runtime.GraphModule(tessel.build(tessel.onnx.load(path, {"x": (1, 8)})))
    graph.run(x=np.ones((1, 8), np.float32))
    first = graph.get_output(0)
    graph.run(x=np.zeros((1, 8), np.float32))
    assert not np.array_equal(first, graph.get_output(0))


def test_outputs_equal_the_clis_run_on_the_same_input(small_module, cli, tmp_path):
    module_dir = tmp_path / "module"
    small_module.export(str(module_dir))
    x = np.random.default_rng(2).random((1, 3, 32, 32), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    subprocess.run([cli, "run", str(module_dir), "--input", f"data={tmp_path / 'x.npy'}", "--output", str(tmp_path / "y.npy")],
                   check=True, capture_output=True)
    graph = runtime.GraphModule(runtime.load_module(str(module_dir)), tessel.cpu(0))
    graph.set_input("data", x)
    graph.run()
    np.testing.assert_allclose(graph.get_output(0), np.load(tmp_path / "y.npy"), rtol=1e-5, atol=1e-5)


def test_set_input_refuses_what_the_input_is_not(small_module):
    graph = runtime.GraphModule(small_module)
    with pytest.raises(tessel.TesselError, match=r"input 'data': expected float32 \[1, 3, 32, 32\], got float64"):
        graph.set_input("data", np.zeros((1, 3, 32, 32)))
    with pytest.raises(tessel.TesselError, match=r"expected float32 \[1, 3, 32, 32\], got float32 \[1, 3, 32, 31\]"):
        graph.set_input("data", np.zeros((1, 3, 32, 31), np.float32))
    with pytest.raises(tessel.TesselError, match=r"the graph has no input 'image' \(inputs: data\)"):
        graph.set_input("image", np.zeros((1, 3, 32, 32), np.float32))
    with pytest.raises(tessel.TesselError, match="input index 3 out of range"):
        graph.set_input(3, np.zeros((1, 3, 32, 32), np.float32))
    with pytest.raises(tessel.TesselError, match="complex"):
        graph.set_input("data", np.zeros((1, 3, 32, 32), np.complex64))
    with pytest.raises(tessel.TesselError, match="output"):
        graph.get_output(1)


def test_time_evaluator_times_every_repeat(small_module):
    graph = runtime.GraphModule(small_module, tessel.cpu(0))
    timer = graph.module.time_evaluator("run", tessel.cpu(0), number=2, repeat=4)
    result = timer()
    assert len(result.results) == 4 and result.number == 2
    assert all(cost > 0 for cost in result.results)
    assert min(result.results) <= result.mean <= max(result.results)
    with pytest.raises(tessel.TesselError, match="repeat"):
        graph.module.time_evaluator("run", repeat=0)()
    with pytest.raises(tessel.TesselError, match="times 'run', not 'forward'"):
        graph.module.time_evaluator("forward")


def test_build_refuses_a_target_it_cannot_build(small_network):
    with pytest.raises(tessel.TesselError, match="vta"):
        tessel.build(small_network, target="vta")


def test_export_writes_a_module_and_refuses_other_directories(small_module, tmp_path):
    target = tmp_path / "exported"
    small_module.export(str(target))
    assert os.path.isfile(target / "graph.json")
    small_module.export(str(target))  # a module is replaced whole
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("the user's")
    with pytest.raises(tessel.TesselError, match="holds no graph.json, so it is not a module"):
        small_module.export(str(tmp_path / "mine"))
    assert (tmp_path / "mine" / "notes.txt").read_text() == "the user's"


def test_load_module_refuses_a_directory_without_a_module(tmp_path):
    with pytest.raises(tessel.TesselError, match="not a module directory"):
        runtime.load_module(str(tmp_path))


def test_cpu_has_one_device():
    assert str(tessel.cpu(0)) == "cpu:0"
    with pytest.raises(tessel.TesselError, match=r"tessel.cpu\(1\)"):
        tessel.cpu(1)
