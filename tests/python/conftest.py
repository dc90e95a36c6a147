"""Fixtures of the tessel Python package's tests (run by ctest: tests/python/CMakeLists.txt sets
PYTHONPATH to the built package and TESSEL_CLI to the `tessel` command)."""
import os
import signal

import numpy as np
import pytest

import tessel


@pytest.fixture(scope="session")
def cli():
    """The `tessel` command of the same build."""
    path = os.environ.get("TESSEL_CLI")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("TESSEL_CLI must name the tessel command (ctest sets it)")
    return path


@pytest.fixture(scope="session")
def small_network():
    """resnet-18 on 32x32 images: every kind of layer of a real network, built in seconds."""
    return tessel.zoo.load("resnet-18", image_size=32)


@pytest.fixture(scope="session")
def small_module(small_network):
    return tessel.build(small_network, target="cpu")


@pytest.fixture(scope="session")
def tiny_onnx(tmp_path_factory):
    """A two-layer perceptron as an ONNX file and its weights: y = relu(x W1 + b1) W2 + b2."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((8, 16)).astype(np.float32)
    b1 = rng.standard_normal(16).astype(np.float32)
    w2 = rng.standard_normal((16, 4)).astype(np.float32)
    b2 = rng.standard_normal(4).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h2"]),
        helper.make_node("MatMul", ["h2", "w2"], ["h3"]),
        helper.make_node("Add", ["h3", "b2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path_factory.mktemp("onnx") / "mlp.onnx"
    onnx.save(model, str(path))

    def reference(x):
        return np.maximum(x @ w1 + b1, 0) @ w2 + b2

    return str(path), reference


def stop_after_first(stop, seen):
    """A tuning callback (either tuner's: (tuner, inputs, results)) that keeps the first trial's
    result in `seen` and stops the run: `stop` "exception" raises ValueError from the callback,
    "ctrl-c" sends this process SIGINT, as a user's Ctrl-C would."""

    def callback(tuner, inputs, results):
        seen.append(results[0])
        if stop == "exception":
            raise ValueError("enough")
        os.kill(os.getpid(), signal.SIGINT)  # Python's handler runs when tessel checks, after this callback

    return callback


def stopped_by(stop):
    """What tune() raises when stop_after_first(stop, ...) stopped it."""
    return ValueError if stop == "exception" else KeyboardInterrupt
