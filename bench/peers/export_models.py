#!/usr/bin/python3
"""Exports tessel's zoo networks from their torchvision definitions for the peers.

Each network gets deterministic random weights (seeded) and is scaled so that its
activations stay O(1): every batch norm's running statistics are set from one random
batch, and in networks without batch norm (VGG, SqueezeNet) every conv / dense layer is
rescaled so that its output on that batch has unit standard deviation. Like tessel's zoo
(and TVM's relay.testing networks) each network ends in a softmax.

For every model NAME it writes OUT/NAME/:
  model.onnx            the network, static shape (batch, 3, H, W) -> (batch, 1000)
  input.npy             a reference input (float32, N(0, 1), seeded)
  output.npy            the network's output on it (the softmax), float32
  logits.npy            the logits before the softmax (more sensitive for comparisons)
  weights/PARAM.npy     every parameter and batch-norm statistic, by its torchvision name
  manifest.json         model, batch, shapes, seed, opset, versions, parameter list

A model whose manifest matches the requested batch/seed/opset is not exported again
(use --force). Run with /usr/bin/python3 (Debian's python3-torch, python3-torchvision).
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torchvision

MODELS = [
    "resnet-18", "resnet-34", "resnet-50", "resnet-101", "resnet-152",
    "mobilenet", "mobilenet-v2",
    "vgg-11", "vgg-13", "vgg-16", "vgg-19",
    "squeezenet_v1.0", "squeezenet_v1.1",
    "inception_v3",
]
DEFAULT_MODELS = ["resnet-18", "resnet-50", "mobilenet", "mobilenet-v2", "vgg-16",
                  "squeezenet_v1.1", "inception_v3"]
FORMAT_VERSION = 1


class MobileNetV1(nn.Module):
    """MobileNet v1, width 1.0, 224x224, as in the paper and Gluon's mobilenet1.0:
    a 3x3 stride-2 conv to 32 channels, 13 depthwise-separable blocks (3x3 depthwise,
    1x1 pointwise), global average pool, dense 1024 -> 1000. Every conv is bias-free and
    followed by batch norm and ReLU."""

    # (output channels of the pointwise conv, stride of the depthwise conv)
    BLOCKS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
              (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]

    def __init__(self, num_classes=1000):
        super().__init__()

        def conv_bn(cin, cout, k, stride, groups):
            return [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
                    nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

        layers = conv_bn(3, 32, 3, 2, 1)
        cin = 32
        for cout, stride in self.BLOCKS:
            layers += conv_bn(cin, cin, 3, stride, cin)   # depthwise
            layers += conv_bn(cin, cout, 1, 1, 1)         # pointwise
            cin = cout
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(1024, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.pool(self.features(x))
        return self.fc(torch.flatten(x, 1))


class WithSoftmax(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return torch.softmax(self.net(x), dim=1)


def image_size(name):
    return 299 if name == "inception_v3" else 224


def input_shape(name, batch):
    s = image_size(name)
    return (batch, 3, s, s)


def definition(name):
    """The bare torchvision network (logits), default-initialized from the current seed."""
    tv = torchvision.models
    if name.startswith("resnet-"):
        depth = int(name.split("-")[1])
        return getattr(tv, "resnet%d" % depth)(weights=None)
    if name == "mobilenet":
        return MobileNetV1()
    if name == "mobilenet-v2":
        return tv.mobilenet_v2(weights=None)
    if name.startswith("vgg-"):
        return getattr(tv, "vgg%s" % name.split("-")[1])(weights=None)
    if name == "squeezenet_v1.0":
        return tv.squeezenet1_0(weights=None)
    if name == "squeezenet_v1.1":
        return tv.squeezenet1_1(weights=None)
    if name == "inception_v3":
        return tv.inception_v3(weights=None, aux_logits=False, transform_input=False,
                               init_weights=True)
    raise SystemExit("export_models.py: unknown model '%s'; available: %s"
                     % (name, ", ".join(MODELS)))


def calibrate(net, calib):
    """Keeps activations O(1) under random weights (see the module docstring)."""
    bns = [m for m in net.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        if bns:
            for bn in bns:
                bn.reset_running_stats()
                bn.momentum = None  # cumulative average: after one batch, its statistics
            net.train()
            net(calib)
            for bn in bns:
                bn.momentum = 0.1
        else:
            # One pass in execution order: each conv/dense layer divides its weight and
            # bias by the standard deviation of its output, and passes the rescaled output
            # on, so every layer sees inputs already normalized by the layers before it.
            def rescale(module, _inputs, out):
                s = float(out.std())
                if not np.isfinite(s) or s == 0.0:
                    return out
                module.weight.div_(s)
                if module.bias is not None:
                    module.bias.div_(s)
                return out / s

            hooks = [m.register_forward_hook(rescale) for m in net.modules()
                     if isinstance(m, (nn.Conv2d, nn.Linear))]
            net.eval()
            net(calib)
            for h in hooks:
                h.remove()
    net.eval()
    return net


def build(name, seed=0, batch=1):
    """The calibrated network with softmax, in eval mode; deterministic for (name, seed)."""
    torch.manual_seed(seed)
    net = definition(name)
    g = torch.Generator().manual_seed(seed + 1)
    # Batch norm needs more than one value per channel even after global pooling.
    calib = torch.randn((4,) + input_shape(name, batch)[1:], generator=g)
    calibrate(net, calib)
    return WithSoftmax(net).eval()


def reference_input(name, batch, seed=0):
    g = torch.Generator().manual_seed(seed + 2)
    return torch.randn(input_shape(name, batch), generator=g)


def load_exported(model_dir):
    """The network of an export directory, with the weights it saved (for time_torch.py)."""
    with open(os.path.join(model_dir, "manifest.json")) as f:
        man = json.load(f)
    torch.manual_seed(man["seed"])
    net = definition(man["model"])
    state = net.state_dict()
    for p in man["params"]:
        arr = np.load(os.path.join(model_dir, "weights", p["name"] + ".npy"))
        if list(arr.shape) != list(state[p["name"]].shape):
            raise SystemExit("%s: weight %s has shape %s, the network wants %s"
                             % (model_dir, p["name"], arr.shape, tuple(state[p["name"]].shape)))
        state[p["name"]] = torch.from_numpy(arr)
    net.load_state_dict(state)
    return WithSoftmax(net).eval(), man


def export(name, out_dir, batch, seed, opset, force):
    d = os.path.join(out_dir, name)
    man_path = os.path.join(d, "manifest.json")
    if not force and os.path.exists(man_path):
        with open(man_path) as f:
            old = json.load(f)
        if (old.get("format") == FORMAT_VERSION and old.get("batch") == batch
                and old.get("seed") == seed and old.get("opset") == opset
                and os.path.exists(os.path.join(d, "model.onnx"))):
            print("export_models.py: %s up to date in %s" % (name, d), flush=True)
            return
    t0 = time.time()
    model = build(name, seed, batch)
    x = reference_input(name, batch, seed)
    with torch.no_grad():
        logits = model.net(x)
        y = torch.softmax(logits, dim=1)
    os.makedirs(os.path.join(d, "weights"), exist_ok=True)
    if os.path.exists(man_path):
        os.remove(man_path)  # an interrupted export must not look complete
    params = []
    for k, v in model.net.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        arr = v.detach().cpu().numpy().astype(np.float32)
        np.save(os.path.join(d, "weights", k + ".npy"), arr)
        params.append({"name": k, "shape": list(arr.shape)})
    np.save(os.path.join(d, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(d, "output.npy"), y.numpy().astype(np.float32))
    np.save(os.path.join(d, "logits.npy"), logits.numpy().astype(np.float32))
    with torch.no_grad():
        torch.onnx.export(model, x, os.path.join(d, "model.onnx"), opset_version=opset,
                          input_names=["data"], output_names=["output"],
                          do_constant_folding=True)
    import onnx
    onnx.checker.check_model(os.path.join(d, "model.onnx"))
    lg = logits.numpy()
    man = {
        "format": FORMAT_VERSION, "model": name, "batch": batch, "seed": seed,
        "opset": opset, "input_name": "data", "output_name": "output",
        "input_shape": list(x.shape), "output_shape": list(y.shape),
        "layout": "NCHW", "dtype": "float32", "softmax": True,
        "logits_std": float(lg.std()), "logits_absmax": float(np.abs(lg).max()),
        "torch": torch.__version__, "torchvision": torchvision.__version__,
        "num_params": int(sum(int(np.prod(p["shape"])) for p in params
                              if not p["name"].endswith(("running_mean", "running_var")))),
        "params": params,
    }
    with open(man_path, "w") as f:
        json.dump(man, f, indent=1)
    print("export_models.py: %s -> %s (%.1f s, %.1fM params, logits std %.3g)"
          % (name, d, time.time() - t0, man["num_params"] / 1e6, man["logits_std"]),
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", help="zoo names (default: %s; 'all' for every one)"
                    % " ".join(DEFAULT_MODELS))
    ap.add_argument("--out", default="build/peers", help="output directory (build/peers)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--opset", type=int, default=13)
    ap.add_argument("--force", action="store_true", help="export even if up to date")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    a = ap.parse_args()
    if a.list:
        print("\n".join(MODELS))
        return
    if a.batch < 1:
        raise SystemExit("export_models.py: --batch must be at least 1, got %d" % a.batch)
    models = a.models or DEFAULT_MODELS
    if models == ["all"]:
        models = MODELS
    for m in models:
        if m not in MODELS:
            raise SystemExit("export_models.py: unknown model '%s'; available: %s"
                             % (m, ", ".join(MODELS)))
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    for m in models:
        export(m, a.out, a.batch, a.seed, a.opset, a.force)


if __name__ == "__main__":
    main()
