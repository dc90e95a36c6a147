#!/usr/bin/python3
"""Writes the ONNX files of tessel's tests that only a current PyTorch can write: a small CNN as
PyTorch 2.x's default exporter (torch.export, then ONNX IR version 10, opset 20) writes it, its
weights in model.onnx.data beside model.onnx (external data), an input and ONNX Runtime's output;
and tiny transformers (transformers' BertModel and GPT2Model with few small layers, random
weights) from the default exporter and, for BERT, the legacy one (TorchScript, opset 17).

    python3 tests/graph/onnx/exported/export_torch2.py tests/graph/onnx/exported

needs torch >= 2.6, transformers and onnxruntime (the GPU machine's Python has them; Debian's
torch 1.13 writes IR version 8). The files are committed: the tests need neither. Deterministic: a fixed seed.
The CNN has what the exporter writes for image networks: Conv, BatchNormalization folded or not,
Relu, MaxPool, ReduceMean for adaptive_avg_pool2d(1), Gemm and Softmax; the convolution's weight
(1,728 bytes) is large enough to go to the external file.
"""
import os
import sys

import numpy as np
import onnxruntime as ort
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = F.max_pool2d(y, 2)
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return torch.softmax(self.fc(y), -1)


class LastHidden(nn.Module):
    """A transformers model called by keyword, its last hidden state the one output."""

    def __init__(self, model, **extra):
        super().__init__()
        self.model = model
        self.extra = extra

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, **self.extra).last_hidden_state


def export_transformer(out, name, model, dynamo, opset=None):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    ids = torch.randint(0, 100, (1, 8))
    options = {"dynamo": dynamo, "input_names": ["input_ids"]}
    if opset:
        options["opset_version"] = opset
    torch.onnx.export(model.eval(), (ids,), path, **options)
    np.save(os.path.join(d, "input_input_ids.npy"), ids.numpy())
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    np.save(os.path.join(d, "output_0.npy"), session.run(None, {"input_ids": ids.numpy()})[0])


def transformers_models(out):
    import transformers as tr
    torch.manual_seed(1)
    small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, vocab_size=100,
                 max_position_embeddings=16)
    bert = LastHidden(tr.BertModel(tr.BertConfig(**small)).eval())
    export_transformer(out, "bert_tiny_default", bert, True)
    export_transformer(out, "bert_tiny_legacy17", bert, False, 17)
    gpt2 = tr.GPT2Model(tr.GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=100, n_positions=16)).eval()
    export_transformer(out, "gpt2_tiny_default", LastHidden(gpt2, use_cache=False), True)


def main(out):
    torch.manual_seed(0)
    model = SmallCnn()
    with torch.no_grad():  # statistics other than the defaults, so that the batch norm matters
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2)
        model.bn.weight.uniform_(0.5, 1.5)
        model.bn.bias.uniform_(-0.2, 0.2)
    model = model.eval()
    x = torch.randn(1, 3, 8, 8)
    d = os.path.join(out, "torch2_default")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(model, (x,), path, dynamo=True, external_data=True, input_names=["x"])
    np.save(os.path.join(d, "input_x.npy"), x.numpy())
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    np.save(os.path.join(d, "output_0.npy"), session.run(None, {"x": x.numpy()})[0])
    transformers_models(out)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
