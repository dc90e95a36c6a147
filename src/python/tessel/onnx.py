"""tessel.onnx: ONNX models (relay.frontend.from_onnx)."""
from tessel import _tessel


def load(path, shape_dict=None):
    """The ONNX model in `path`; `shape_dict` maps input names to shapes where the model's are
    symbolic (or to override its batch)."""
    return _tessel.load_onnx(path, {name: list(shape) for name, shape in (shape_dict or {}).items()})
