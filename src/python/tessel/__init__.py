"""tessel: a deep-learning compiler with automatic tuning, from Python.

A thin layer over tessel's driver (the `_tessel` extension), under the names TVM's tutorials
use (docs/python.md maps each seed's calls): load a model (``tessel.zoo``, ``tessel.onnx``),
build it (``tessel.build``), run and time it (``tessel.runtime``), tune it (``tessel.autotvm``, ``tessel.auto_scheduler``),
and see how tuning went (``tessel.records.plot``).
"""
from tessel._tessel import Device, Model, Module, TesselError
from tessel import auto_scheduler, autotvm, onnx, records, runtime, zoo
from tessel.build import build


def device(text="cpu"):
    """A device by name: "cpu", "cuda:0", "opencl:0" (tvm.device)."""
    return Device(text)


def cpu(index=0):
    """This machine's CPU (tvm.cpu(0)): tessel runs a module on all of it, so only 0 exists."""
    if index != 0:
        raise TesselError(f"tessel.cpu({index}): the CPU is one device, tessel.cpu(0)")
    return Device("cpu")


def cuda(index=0):
    """CUDA device `index` (tvm.cuda(0)); a module built for "cuda" runs there."""
    return Device(f"cuda:{index}")


def opencl(index=0):
    """OpenCL device `index` (tvm.opencl(0)); a module built for "opencl" runs there."""
    return Device(f"opencl:{index}")


__all__ = ["Device", "Model", "Module", "TesselError", "auto_scheduler", "autotvm", "build", "cpu", "cuda", "device", "onnx", "opencl", "records", "runtime",
           "zoo"]
