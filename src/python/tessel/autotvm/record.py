"""Records logs (autotvm.record)."""
from tessel import _tessel


def pick_best(in_file, out_file):
    """Writes the best valid record of each task of `in_file` to `out_file`, as `tessel records
    best` does; records that do not replay and damaged lines are left out with a warning.
    Returns how many records it wrote."""
    return _tessel.pick_best(str(in_file), str(out_file))
