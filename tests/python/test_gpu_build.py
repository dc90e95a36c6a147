"""tessel.build for GPU targets: OpenCL modules run on this machine's OpenCL device (PoCL in CI)
against the CPU build, a CUDA module compiled by NVRTC without a GPU, the GPU options checked
with `tessel compile`'s messages."""
import ctypes

import numpy as np
import pytest

import tessel
from tessel import runtime


def random_inputs(model, seed):
    """An input for each of the model's inputs: token ids below 100 for integer inputs (a
    transformer's), else uniform values in [0, 1)."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for name, (shape, dtype) in model.inputs.items():
        if np.dtype(dtype).kind in "iu":
            inputs[name] = rng.integers(0, 100, size=shape).astype(dtype)
        else:
            inputs[name] = rng.random(shape, dtype=np.float32).astype(dtype)
    return inputs


def outputs(module, device, inputs):
    graph = runtime.GraphModule(module, device)
    graph.run(**inputs)
    return [graph.get_output(i) for i in range(graph.get_num_outputs())]


@pytest.mark.parametrize("name, options", [("resnet-18", {"image_size": 32}), ("bert-base", {"layers": 1, "sequence": 16})])
def test_an_opencl_build_runs_on_the_opencl_device_as_the_cpu_build_does(name, options):
    model = tessel.zoo.load(name, **options)
    inputs = random_inputs(model, 3)
    module = tessel.build(model, target="opencl")
    assert module.functions > 0
    expected = outputs(tessel.build(model, target="cpu"), tessel.cpu(0), inputs)
    got = outputs(module, tessel.opencl(0), inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)
    with pytest.raises(tessel.TesselError, match="the module was built for opencl devices, not cpu:0"):
        runtime.GraphModule(module, tessel.cpu(0))


def cuda_driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.mark.skipif(cuda_driver_present(), reason="a CUDA driver is here: the refusal this test checks cannot happen")
def test_a_cuda_build_compiles_without_a_gpu_and_refuses_to_run_without_one(small_network, tmp_path):
    module = tessel.build(small_network, target="cuda", target_host="llvm")
    assert module.functions > 0 and module.distinct_kernels > 0
    module.export(str(tmp_path / "cuda"))
    assert (tmp_path / "cuda" / "graph.json").is_file()
    with pytest.raises(tessel.TesselError, match="no CUDA device: the NVIDIA driver library libcuda.so.1 cannot be loaded"):
        runtime.GraphModule(module, tessel.cuda(0))


def test_gpu_options_are_checked_with_the_clis_messages(small_network):
    with pytest.raises(tessel.TesselError, match=r"^--channel-tile: '3' is not auto, 1, 2 or 4$"):
        tessel.build(small_network, target="cuda", channel_tile=3)
    with pytest.raises(tessel.TesselError, match=r"^--reduction-parts: '5' is not auto, 1, 2, 4, 8 or 16$"):
        tessel.build(small_network, target="opencl", reduction_parts=5)
    with pytest.raises(tessel.TesselError, match=r"^--channel-tile applies to GPU targets \(cuda, opencl\)$"):
        tessel.build(small_network, target="cpu", channel_tile=2)
    with pytest.raises(tessel.TesselError, match="with --records the records choose them"):
        tessel.build(small_network, target="opencl", records="unused.log", channel_tile=2)
    with pytest.raises(tessel.TesselError, match=r"^--target-host 'mali' with --target 'opencl': not a CPU target"):
        tessel.build(small_network, target="opencl", target_host="mali")
    with pytest.raises(tessel.TesselError, match=r"^--target-host applies to GPU targets"):
        tessel.build(small_network, target="cpu", target_host="cpu -mcpu=skylake")
