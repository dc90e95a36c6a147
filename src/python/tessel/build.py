"""tessel.build: a model compiled into a module (relay.build)."""
from tessel import _tessel
from tessel.autotvm import dispatch


def build(model, target="cpu", records=None, shipped_records=True):
    """Compiles `model` for `target` ("cpu", or TVM's "llvm", with -mcpu=... as for `tessel
    compile`) and returns the Module, built in a temporary directory (Module.export writes it
    out). Records come from `records` (a log path) or, when it is None, from the innermost
    ``with tessel.autotvm.apply_history_best(log):``; the records tessel ships for the
    target's class fill the rest unless `shipped_records` is False. The build's lines (which
    records applied, the default schedules) are on ``Module.lines``."""
    if records is None:
        records = dispatch.current_log()
    return _tessel.build(model, target, records or "", shipped_records)
