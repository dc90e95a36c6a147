"""tessel.runtime: modules loaded and run (tvm.runtime.load_module, graph_executor.GraphModule)."""
from tessel import _tessel
from tessel._tessel import TesselError, TimingResult


def load_module(directory):
    """The module in `directory` (Module.export or `tessel compile -o`)."""
    return _tessel.load_module(directory)


class GraphModule:
    """A module loaded on a device: set inputs, run, read outputs (graph_executor.GraphModule)."""

    def __init__(self, module, device=None):
        self.device = device if device is not None else _tessel.Device("cpu")
        self._graph = _tessel.GraphModule(module, self.device)
        # TVM reaches the time evaluator as m.module.time_evaluator(...): the same object here.
        self.module = self

    def set_input(self, key=None, value=None, **inputs):
        """Copies a numpy array (or anything numpy.asarray takes) into an input, by name or
        index; its dtype and shape must be the input's. Keyword arguments set inputs by name."""
        if key is not None:
            self._graph.set_input(key, value)
        for name, array in inputs.items():
            self._graph.set_input(name, array)

    def run(self, **inputs):
        """Runs the module once (inputs given as keywords are set first)."""
        if inputs:
            self.set_input(**inputs)
        self._graph.run()

    def get_output(self, index):
        """Output `index` of the last run as a new numpy array."""
        return self._graph.get_output(index)

    def get_num_inputs(self):
        return self._graph.num_inputs

    def get_num_outputs(self):
        return self._graph.num_outputs

    def time_evaluator(self, func_name, dev=None, number=1, repeat=1, min_repeat_ms=0):
        """A function that times `func_name` ("run") and returns a TimingResult (seconds:
        .mean, .median, .std, .min, .results per measurement), as TVM's time_evaluator does."""
        if func_name != "run":
            raise TesselError(f"time_evaluator: a module times 'run', not '{func_name}'")
        if dev is not None and str(dev) != str(self.device):
            raise TesselError(f"time_evaluator: the module runs on {self.device}, not {dev}")
        return lambda: self._graph.time_runs(number, repeat, min_repeat_ms)

    def benchmark(self, dev=None, number=1, repeat=10, min_repeat_ms=0):
        """The time evaluator's result at once (GraphModule.benchmark)."""
        return self.time_evaluator("run", dev, number, repeat, min_repeat_ms)()


__all__ = ["GraphModule", "TimingResult", "load_module"]
