"""A network's tuning tasks (autotvm.task.extract_from_program)."""
from tessel import _tessel
from tessel._tessel import Task


def extract_from_program(model, target="cpu", params=None):
    """The template tuning tasks of `model` for `target`, numbered as `tessel tasks` lists them:
    each a fused function and its template (.number, .name, .template, .workload_key, .flops,
    .config_space_size). `params` is accepted for TVM's signature and must be None: a tessel
    Model holds its parameters."""
    if params is not None:
        raise _tessel.TesselError("extract_from_program: params must be None (the Model holds its parameters)")
    return _tessel.extract_tasks(model, target)


__all__ = ["Task", "extract_from_program"]
