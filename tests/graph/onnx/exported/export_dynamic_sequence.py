#!/usr/bin/python3
"""Writes bert_dynamic_sequence/: a small BERT (bench/peers/transformers.py's layers: 2 layers,
hidden 64, 4 heads, vocabulary 512, 64 positions, random weights, seed 0) exported by Debian's PyTorch 1.13
(the TorchScript exporter, opset 17) with its sequence length left symbolic ('sequence'), and
for two lengths, 16 and 40, token ids and PyTorch's output (the last hidden state):
input_ids_16.npy, output_16.npy, input_ids_40.npy, output_40.npy. The test compiles the file at
each length with --input-shape and compares.

    /usr/bin/python3 tests/graph/onnx/exported/export_dynamic_sequence.py tests/graph/onnx/exported
"""
import os
import sys

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "..", "bench", "peers"))
import transformers as tfm  # noqa: E402  (bench/peers/transformers.py)


def main():
    out = os.path.join(sys.argv[1] if len(sys.argv) > 1 else here, "bert_dynamic_sequence")
    os.makedirs(out, exist_ok=True)
    config = dict(tfm.CONFIGS["bert-base"], layers=2, hidden=64, heads=4, ffn=128, vocab=512,
                  positions=64)
    torch.manual_seed(0)
    net = tfm.Bert(config).eval()
    for m in net.modules():  # as transformers.definition initializes them
        if isinstance(m, (torch.nn.Linear, torch.nn.Embedding)):
            torch.nn.init.normal_(m.weight, 0.0, 0.02)
    g = torch.Generator().manual_seed(1)
    example = torch.randint(0, config["vocab"], (1, 8), generator=g)
    with torch.no_grad():
        torch.onnx.export(net, example, os.path.join(out, "model.onnx"), input_names=["input_ids"],
                          output_names=["output"], opset_version=17,
                          dynamic_axes={"input_ids": {1: "sequence"}, "output": {1: "sequence"}})
        for length in (16, 40):
            ids = torch.randint(0, config["vocab"], (1, length), generator=g)
            np.save(os.path.join(out, "input_ids_%d.npy" % length), ids.numpy())
            np.save(os.path.join(out, "output_%d.npy" % length), net(ids).numpy().astype(np.float32))
    print("wrote", out)


if __name__ == "__main__":
    main()
