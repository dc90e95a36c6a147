#!/usr/bin/python3
"""Exports tessel's zoo networks from their torchvision definitions for the peers, and BERT-base,
GPT-2 small and ViT-B/16 from their torch.nn definitions in transformers.py (at opset 17; their
output is the last hidden state, or ViT's logits, with no softmax; their input.npy holds int64
token ids, or ViT's image; their tessel params keep the state dict's names, which the zoo's
transformers use, and BERT's and GPT-2's, with no image, have the NCHW file only).

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
  tessel_nchw.params    the same weights under tessel's zoo names, as a tessel params file
  tessel_nhwc.params    (`tessel compile --model NAME --layout L --params FILE`): the very
                        network the peers run, weights included, for either layout
                        (--onnx-only writes neither unless --tessel-params asks)

A model whose manifest matches the requested batch/seed/opset is not exported again
(use --force). Run with /usr/bin/python3 (Debian's python3-torch, python3-torchvision).
"""
import argparse
import inspect
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transformers as tf_models  # noqa: E402  (bench/peers/transformers.py, not Hugging Face's)


MODELS = [
    "resnet-18", "resnet-34", "resnet-50", "resnet-101", "resnet-152",
    "mobilenet", "mobilenet-v2",
    "vgg-11", "vgg-13", "vgg-16", "vgg-19",
    "squeezenet_v1.0", "squeezenet_v1.1",
    "inception_v3",
]
# MODELS are tessel's zoo networks (the same names); the transformers are in its zoo too (by
# the same names), but the benches compile them from their ONNX files, as their users do.
ONNX_ONLY_MODELS = list(tf_models.CONFIGS)
ALL_MODELS = MODELS + ONNX_ONLY_MODELS
DEFAULT_MODELS = ["resnet-18", "resnet-50", "mobilenet", "mobilenet-v2", "vgg-16",
                  "squeezenet_v1.1", "inception_v3", "bert-base", "gpt2", "vit-b16"]
FORMAT_VERSION = 3  # 2: the tessel params files; 3: transformers, per-model input names
# The opset each model is exported at unless --opset says otherwise: the transformers at 17,
# the first with LayerNormalization (what today's exporters write for nn.LayerNorm).
DEFAULT_OPSET = {"bert-base": 17, "gpt2": 17, "vit-b16": 17}


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


def definition(name, layers=None):
    """The bare torchvision network (logits), default-initialized from the current seed; the
    transformers from bench/peers/transformers.py (with `layers` of their layers if given)."""
    if tf_models.is_transformer(name):
        return tf_models.definition(name, layers)
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
                     % (name, ", ".join(ALL_MODELS)))


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


def build(name, seed=0, batch=1, layers=None):
    """The calibrated network with softmax, in eval mode; deterministic for (name, seed).
    A transformer is returned as defined (its output is a hidden state or logits), with
    `layers` of its layers when given."""
    torch.manual_seed(seed)
    net = definition(name, layers)
    if tf_models.is_transformer(name):
        return net
    g = torch.Generator().manual_seed(seed + 1)
    # Batch norm needs more than one value per channel even after global pooling.
    calib = torch.randn((4,) + input_shape(name, batch)[1:], generator=g)
    calibrate(net, calib)
    return WithSoftmax(net).eval()


def reference_input(name, batch, seed=0):
    if tf_models.is_transformer(name):
        return tf_models.reference_input(name, batch, seed)
    g = torch.Generator().manual_seed(seed + 2)
    return torch.randn(input_shape(name, batch), generator=g)


def load_exported(model_dir):
    """The network of an export directory, with the weights it saved (for time_torch.py)."""
    with open(os.path.join(model_dir, "manifest.json")) as f:
        man = json.load(f)
    torch.manual_seed(man["seed"])
    net = definition(man["model"], man.get("layers"))
    state = net.state_dict()
    for p in man["params"]:
        arr = np.load(os.path.join(model_dir, "weights", p["name"] + ".npy"))
        if list(arr.shape) != list(state[p["name"]].shape):
            raise SystemExit("%s: weight %s has shape %s, the network wants %s"
                             % (model_dir, p["name"], arr.shape, tuple(state[p["name"]].shape)))
        state[p["name"]] = torch.from_numpy(arr)
    net.load_state_dict(state)
    return (net if tf_models.is_transformer(man["model"]) else WithSoftmax(net)).eval(), man


# ---- tessel params files: torchvision's state dict under the zoo's names ---------------------

BN_FIELDS = {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
             "running_var": "moving_var"}
VGG_CONVS = {"11": [1, 1, 2, 2, 2], "13": [2, 2, 2, 2, 2], "16": [2, 2, 3, 3, 3],
             "19": [2, 2, 4, 4, 4]}


def tessel_name(model, key, net):
    """The zoo's name (src/graph/Zoo*.cpp) of torchvision parameter `key`, or None for
    buffers tessel has no use for (num_batches_tracked). The zoo's transformers use the state
    dict's own names."""
    import re
    if tf_models.is_transformer(model):
        return key
    parts = key.split(".")
    field = parts[-1]
    if field == "num_batches_tracked":
        return None
    module = net.get_submodule(".".join(parts[:-1]))
    bn = isinstance(module, nn.modules.batchnorm._BatchNorm)
    suffix = BN_FIELDS[field] if bn else field

    def unit(layer):  # a conv + batch norm pair: <layer>_conv_weight, <layer>_bn_<field>
        return "%s_%s_%s" % (layer, "bn" if bn else "conv", suffix)

    if model.startswith("resnet-"):
        if parts[0] == "conv1" or parts[0] == "bn1":
            return unit("conv1")
        if parts[0] == "fc":
            return "fc_" + field
        m = re.match(r"layer(\d)\.(\d+)\.(conv|bn)(\d)\.", key)
        if m:
            return unit("layer%s_%s_%s" % (m.group(1), m.group(2), m.group(4)))
        m = re.match(r"layer(\d)\.(\d+)\.downsample\.[01]\.", key)
        if m:
            return unit("layer%s_%s_downsample" % (m.group(1), m.group(2)))
    elif model == "mobilenet":
        if parts[0] == "fc":
            return "fc_" + field
        layer = int(parts[1]) // 3  # features: [conv, bn, relu] x 27
        name = "conv0" if layer == 0 else ("conv%d_dw" % ((layer + 1) // 2) if layer % 2
                                           else "conv%d_pw" % (layer // 2))
        return unit(name)
    elif model == "mobilenet-v2":
        if parts[0] == "classifier":
            return "fc_" + field
        block = int(parts[1])
        if block == 0:
            return unit("conv0")
        if block == 18:
            return unit("conv_last")
        j = int(parts[3])  # features.B.conv.J...
        stages = ["expand", "dw", "project", "project"] if block > 1 else ["dw", "project", "project"]
        return unit("block%d_%s" % (block, stages[j]))
    elif model.startswith("vgg-"):
        if parts[0] == "classifier":
            return "fc%d_%s" % ({"0": 6, "3": 7, "6": 8}[parts[1]], field)
        convs = [int(k) for k, m in net.features.named_children() if isinstance(m, nn.Conv2d)]
        n = convs.index(int(parts[1]))
        for stage, count in enumerate(VGG_CONVS[model.split("-")[1]]):
            if n < count:
                return "conv%d_%d_%s" % (stage + 1, n + 1, field)
            n -= count
    elif model.startswith("squeezenet"):
        if parts[0] == "classifier":
            return "conv10_" + field
        if parts[1] == "0":
            return "conv1_" + field
        fires = [int(k) for k, m in net.features.named_children() if type(m).__name__ == "Fire"]
        return "fire%d_%s_%s" % (fires.index(int(parts[1])) + 2, parts[2], field)
    elif model == "inception_v3":
        if parts[0] == "fc":
            return "fc_" + field
        return unit("_".join(parts[:-2]))  # Mixed_5b.branch1x1.conv.weight
    raise SystemExit("export_models.py: no tessel name for %s parameter %s" % (model, key))


def tessel_params(model, net, layout):
    """{zoo name: float32 array} in the layout's weight shapes: NHWC convolutions are HWIO
    (depthwise [KH, KW, C, 1]), and a dense layer reading a flattened NHWC image with more
    than one pixel (VGG's fc6) has its columns in (h, w, c) order."""
    out = {}
    modules = dict(net.named_modules())
    for key, value in net.state_dict().items():
        name = tessel_name(model, key, net)
        if name is None:
            continue
        arr = value.detach().cpu().numpy().astype(np.float32)
        module = modules[key.rsplit(".", 1)[0]] if "." in key else net  # ViT's cls_token
        if layout == "NHWC" and isinstance(module, nn.Conv2d) and arr.ndim == 4:
            depthwise = module.groups > 1 and module.groups == module.in_channels
            arr = arr.transpose(2, 3, 0, 1) if depthwise else arr.transpose(2, 3, 1, 0)
        if (layout == "NHWC" and model.startswith("vgg-") and name == "fc6_weight"):
            units = arr.shape[0]
            arr = arr.reshape(units, 512, 7, 7).transpose(0, 2, 3, 1).reshape(units, -1)
        out[name] = np.ascontiguousarray(arr)
    return out


def write_tessel_params(params, path):
    """tessel's params format (src/runtime/Params.h): "TESSELPR", u32 version 1, u64 count,
    then per tensor in name order: u32 name length, name, u8 dtype code (2: float), u8 bits,
    u16 lanes, u32 rank, i64 shape[rank], u64 byte count, the bytes; little-endian."""
    import struct
    with open(path + ".tmp", "wb") as f:
        f.write(b"TESSELPR" + struct.pack("<IQ", 1, len(params)))
        for name in sorted(params):
            arr = params[name]
            data = arr.astype("<f4").tobytes()
            f.write(struct.pack("<I", len(name)) + name.encode())
            f.write(struct.pack("<BBHI", 2, 32, 1, arr.ndim))
            f.write(struct.pack("<%dq" % arr.ndim, *arr.shape))
            f.write(struct.pack("<Q", len(data)) + data)
    os.replace(path + ".tmp", path)


def params_layouts(name):
    """The layouts whose tessel params files are written: a network without an image has one."""
    if tf_models.is_transformer(name) and tf_models.input_spec(name, 1)[1] == torch.int64:
        return ("NCHW",)
    return ("NCHW", "NHWC")


def export(name, out_dir, batch, seed, opset, force, onnx_only=False, layers=None,
           tessel_params_too=False):
    d = os.path.join(out_dir, name)
    man_path = os.path.join(d, "manifest.json")
    transformer = tf_models.is_transformer(name)
    tessel_files = tessel_params_too or not onnx_only
    params_files = [os.path.join(d, "tessel_%s.params" % layout.lower()) for layout in params_layouts(name)]
    if not force and os.path.exists(man_path):
        with open(man_path) as f:
            old = json.load(f)
        if (old.get("format") == FORMAT_VERSION and old.get("batch") == batch
                and old.get("seed") == seed and old.get("opset") == opset
                and old.get("layers") == layers
                and os.path.exists(os.path.join(d, "model.onnx"))
                and (not tessel_files or all(os.path.exists(f) for f in params_files))):
            print("export_models.py: %s up to date in %s" % (name, d), flush=True)
            return
    t0 = time.time()
    model = build(name, seed, batch, layers)
    net = model if transformer else model.net  # what the weights are named after
    x = reference_input(name, batch, seed)
    with torch.no_grad():
        logits = None if transformer else model.net(x)
        y = model(x) if transformer else torch.softmax(logits, dim=1)
    os.makedirs(d if onnx_only else os.path.join(d, "weights"), exist_ok=True)
    if os.path.exists(man_path):
        os.remove(man_path)  # an interrupted export must not look complete
    params = []
    for k, v in net.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        if not onnx_only:  # a float32 copy of each weight only where it is saved
            np.save(os.path.join(d, "weights", k + ".npy"), v.detach().cpu().numpy().astype(np.float32))
        params.append({"name": k, "shape": list(v.shape)})
    if tessel_files:
        for layout, path in zip(params_layouts(name), params_files):
            write_tessel_params(tessel_params(name, net, layout), path)
    np.save(os.path.join(d, "input.npy"), x.numpy())
    np.save(os.path.join(d, "output.npy"), y.numpy().astype(np.float32))
    if logits is not None:
        np.save(os.path.join(d, "logits.npy"), logits.numpy().astype(np.float32))
    input_name = tf_models.input_spec(name, batch)[2] if transformer else "data"
    # The TorchScript exporter where torch has both (2.5 and later default to the dynamo one,
    # which asked for opset 17 writes an opset-18 Split attribute the checker refuses): the files
    # are then the same on every machine, Debian's PyTorch included.
    legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    with torch.no_grad():
        torch.onnx.export(model, x, os.path.join(d, "model.onnx"), opset_version=opset,
                          input_names=[input_name], output_names=["output"],
                          do_constant_folding=True, **legacy)
    import onnx
    onnx.checker.check_model(os.path.join(d, "model.onnx"))
    out = (logits if logits is not None else y).numpy()
    man = {
        "format": FORMAT_VERSION, "model": name, "batch": batch, "seed": seed,
        "opset": opset, "layers": layers, "input_name": input_name, "output_name": "output",
        "input_shape": list(x.shape), "input_dtype": str(x.numpy().dtype),
        "output_shape": list(y.shape),
        "layout": "tokens" if x.dtype == torch.int64 else "NCHW", "dtype": "float32",
        "softmax": not transformer,
        "logits_std": float(out.std()), "logits_absmax": float(np.abs(out).max()),
        "torch": torch.__version__, "torchvision": torchvision.__version__,
        "num_params": int(sum(int(np.prod(p["shape"])) for p in params
                              if not p["name"].endswith(("running_mean", "running_var")))),
        "params": params,
    }
    with open(man_path, "w") as f:
        json.dump(man, f, indent=1)
    print("export_models.py: %s -> %s (%.1f s, %.1fM params, output std %.3g)"
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
    ap.add_argument("--opset", type=int, default=None,
                    help="ONNX opset (default: 13; 17 for the transformers)")
    ap.add_argument("--force", action="store_true", help="export even if up to date")
    ap.add_argument("--onnx-only", action="store_true",
                    help="write model.onnx, the input and the outputs only, not the weights as .npy "
                         "files nor as tessel params (what a test against ONNX Runtime reads)")
    ap.add_argument("--tessel-params", action="store_true",
                    help="with --onnx-only: write the tessel params files all the same (a test of "
                         "the zoo's network with the exported weights)")
    ap.add_argument("--layers", type=int, default=None,
                    help="the transformers with this many layers (default: their own, 12); the "
                         "other models are exported whole")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    ap.add_argument("--list-onnx-only", action="store_true",
                    help="print the models tessel compiles from their ONNX files (not in its zoo) and exit")
    a = ap.parse_args()
    if a.list or a.list_onnx_only:
        print("\n".join(ONNX_ONLY_MODELS if a.list_onnx_only else ALL_MODELS))
        return
    if a.batch < 1:
        raise SystemExit("export_models.py: --batch must be at least 1, got %d" % a.batch)
    if a.layers is not None and a.layers < 1:
        raise SystemExit("export_models.py: --layers must be at least 1, got %d" % a.layers)
    models = a.models or DEFAULT_MODELS
    if models == ["all"]:
        models = ALL_MODELS
    for m in models:
        if m not in ALL_MODELS:
            raise SystemExit("export_models.py: unknown model '%s'; available: %s"
                             % (m, ", ".join(ALL_MODELS)))
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    for m in models:
        opset = a.opset if a.opset is not None else DEFAULT_OPSET.get(m, 13)
        layers = a.layers if tf_models.is_transformer(m) else None
        export(m, a.out, a.batch, a.seed, opset, a.force, a.onnx_only, layers, a.tessel_params)


if __name__ == "__main__":
    main()
