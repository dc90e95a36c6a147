"""tessel.build: a model compiled into a module (relay.build)."""
from tessel import _tessel
from tessel.autotvm import dispatch


def build(model, target="cpu", records=None, shipped_records=True, target_host=None, channel_tile="auto",
          reduction_parts="auto"):
    """Compiles `model` for `target` and returns the Module, built in a temporary directory
    (Module.export writes it out). Targets are `tessel compile`'s: "cpu" (or TVM's "llvm") with
    -mcpu=... and the like, "cuda ..." and "opencl ..." (a GPU target's kernels are CUDA C
    compiled by NVRTC, which needs no GPU, or OpenCL C; run them on tessel.cuda(0) or
    tessel.opencl(0)). Records come from `records` (a log path) or, when it is None, from the
    innermost ``with tessel.autotvm.apply_history_best(log):``; the records tessel ships for the
    target's class fill the rest unless `shipped_records` is False. The build's lines (which
    records applied, the default schedules) are on ``Module.lines``.

    GPU targets only, as `tessel compile`'s flags of the same names: `target_host` (the CPU
    beside the device, "cpu ..."; None: "cpu"), and the default GPU schedule's rules
    `channel_tile` ("auto", 1, 2 or 4: output channels per thread of a direct convolution) and
    `reduction_parts` ("auto", 1, 2, 4, 8 or 16: parts a reduction with few outputs is split
    into), which exclude records."""
    if records is None:
        records = dispatch.current_log()
    return _tessel.build(model, target, records or "", shipped_records, target_host or "cpu", str(channel_tile),
                         str(reduction_parts))
