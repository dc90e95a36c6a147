"""tessel.zoo.load and tessel.onnx.load: good and bad arguments."""
import pytest

import tessel


def test_zoo_network_has_its_input_and_parameters(small_network):
    assert small_network.source == "resnet-18"
    assert small_network.inputs == {"data": ([1, 3, 32, 32], "float32")}
    assert small_network.num_params > 50


def test_zoo_batch_and_layout_reach_the_input():
    model = tessel.zoo.load("mobilenet", batch=2, layout="NHWC", image_size=32)
    assert model.inputs == {"data": ([2, 32, 32, 3], "float32")}


def test_unknown_zoo_network_names_the_known_ones():
    with pytest.raises(tessel.TesselError, match=r"unknown model 'resnet-9000x' \(known: .*resnet-18"):
        tessel.zoo.load("resnet-9000x")


def test_bad_zoo_layout_is_an_error():
    with pytest.raises(tessel.TesselError, match="NCWH"):
        tessel.zoo.load("resnet-18", layout="NCWH")


def test_tessel_error_is_a_runtime_error():
    assert issubclass(tessel.TesselError, RuntimeError)


def test_onnx_model_takes_its_shape_from_shape_dict(tiny_onnx):
    path, _ = tiny_onnx
    assert tessel.onnx.load(path, {"x": (3, 8)}).inputs == {"x": ([3, 8], "float32")}


def test_onnx_model_with_a_symbolic_batch_needs_a_shape(tiny_onnx):
    path, _ = tiny_onnx
    with pytest.raises(tessel.TesselError, match="batch"):
        tessel.onnx.load(path)


def test_missing_onnx_file_is_named(tmp_path):
    missing = tmp_path / "none.onnx"
    with pytest.raises(tessel.TesselError, match=str(missing)):
        tessel.onnx.load(str(missing), {"x": (1, 8)})
