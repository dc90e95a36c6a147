"""A network's auto-scheduler tasks (auto_scheduler.extract_tasks)."""
from tessel import _tessel
from tessel._tessel import SearchTask


def extract_tasks(model, target="cpu", params=None):
    """The auto-scheduler tasks of `model` for `target` and their weights, numbered as `tessel
    tasks --scheduler auto` lists them: a task per fused function (.number, .desc, .workload_key,
    .compute_dag, .flops), its weight how many times the network runs it (the estimate of seed
    001: sum(latency[t] * weight[t])). `params` is accepted for TVM's signature and must be None:
    a tessel Model holds its parameters."""
    if not isinstance(target, str):
        # TVM's order is (mod, params, target): a seed's positional call lands here.
        raise _tessel.TesselError(f"extract_tasks: target must be a target string such as \"cpu\", got {type(target).__name__} "
                                  "(tessel's signature: extract_tasks(model, target=..., params=None))")
    if params is not None:
        raise _tessel.TesselError("extract_tasks: params must be None (the Model holds its parameters)")
    tasks = _tessel.extract_search_tasks(model, target)
    return tasks, [task.weight for task in tasks]


__all__ = ["SearchTask", "extract_tasks"]
