"""tessel.zoo: the built-in networks (relay.testing.<net>.get_workload)."""
from tessel import _tessel


def load(name, batch=1, layout="NCHW", image_size=0, sequence=0, layers=0):
    """The zoo network `name` (resnet-18, mobilenet, bert-base, ...; `tessel tasks --help` lists
    them) with random weights. image_size: the input's (0: the network's own, 224); sequence:
    tokens of bert-base and gpt2 (0: 128); layers: a transformer's encoder layers (0: 12)."""
    return _tessel.load_zoo(name, batch, layout, image_size, sequence, layers)
