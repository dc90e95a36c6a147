#!/usr/bin/env python3
"""PyTorch's batch-1 latency of the zoo networks and of the transformers (BERT-base, GPT-2 small,
ViT-B/16: bench/peers/transformers.py) on a CUDA GPU, in strict fp32 (TF32 off for matmuls and
cuDNN convolutions), eager and replayed as a CUDA graph, cuDNN autotuned (cudnn.benchmark), and
replayed with TF32 allowed for both (what PyTorch users get with `allow_tf32`, its default for
convolutions). Prints one `BENCH <model>_torch_<eager|graph|tf32_graph>_ms <ms> ms` line per figure.
With --convs, also each distinct convolution of the networks alone (cuDNN, 20 calls replayed
as one CUDA graph, so that launches do not count): `BENCH cudnn_conv_<key> <GFLOP/s> GFLOP/s`,
the key `c<in>_h<height>_w<width>_f<out>_k<kernel>_s<stride>_p<pad>` (bench_gpu_conv's).

    time_torch_gpu.py [--runs N] [--convs] MODEL...      (resnet-18, resnet-50, mobilenet-v2, bert-base, gpt2, vit-b16)

The networks come from torchvision when it is installed, else from the definitions below
(torchvision's architectures layer for layer, with random weights: latency does not depend on
the weights' values)."""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn


# ---- torchvision's architectures, for machines without torchvision -----------------------------

class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    def __init__(self, block, layers, classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._layer(block, 64, layers[0], 1)
        self.layer2 = self._layer(block, 128, layers[1], 2)
        self.layer3 = self._layer(block, 256, layers[2], 2)
        self.layer4 = self._layer(block, 512, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512 * block.expansion, classes)

    def _layer(self, block, planes, blocks, stride):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                                       nn.BatchNorm2d(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def conv_bn_relu6(inp, out, kernel, stride, groups=1):
    return nn.Sequential(nn.Conv2d(inp, out, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(out), nn.ReLU6(inplace=True))


class InvertedResidual(nn.Module):
    def __init__(self, inp, out, stride, expand):
        super().__init__()
        hidden = inp * expand
        self.use_residual = stride == 1 and inp == out
        layers = [conv_bn_relu6(inp, hidden, 1, 1)] if expand != 1 else []
        layers += [conv_bn_relu6(hidden, hidden, 3, stride, groups=hidden),
                   nn.Conv2d(hidden, out, 1, 1, 0, bias=False), nn.BatchNorm2d(out)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_residual else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
        layers = [conv_bn_relu6(3, 32, 3, 2)]
        inp = 32
        for t, c, n, s in settings:
            for i in range(n):
                layers.append(InvertedResidual(inp, c, s if i == 0 else 1, t))
                inp = c
        layers.append(conv_bn_relu6(inp, 1280, 1, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


TRANSFORMERS = ("bert-base", "gpt2", "vit-b16")


def build(name):
    """The network and where its definition comes from."""
    if name in TRANSFORMERS:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
        import transformers as definitions  # bench/peers/transformers.py, not Hugging Face's
        torch.manual_seed(0)
        return definitions.definition(name), "bench/peers/transformers.py"
    try:
        import torchvision.models as tv
        return {"resnet-18": tv.resnet18, "resnet-50": tv.resnet50, "mobilenet-v2": tv.mobilenet_v2}[name](), "torchvision"
    except ImportError:
        pass
    own = {"resnet-18": lambda: ResNet(BasicBlock, [2, 2, 2, 2]), "resnet-50": lambda: ResNet(Bottleneck, [3, 4, 6, 3]),
           "mobilenet-v2": MobileNetV2}
    return own[name](), "torch.nn definitions (no torchvision)"


# ---- timing ------------------------------------------------------------------------------------

def time_ms(step, runs):
    """Median of `runs` measurements, each long enough (>= 20 ms) to hide the clock."""
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            step()
        torch.cuda.synchronize()
        if time.perf_counter() - start >= 0.02:
            break
        number *= 2
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(number):
            step()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) / number * 1e3)
    samples.sort()
    return samples[len(samples) // 2]


def conv_shapes(model):
    """The distinct direct convolutions (groups 1) a 224x224 image meets: key -> (module, input)."""
    shapes = {}

    def hook(module, inputs, _):
        x = inputs[0]
        if module.groups != 1:
            return
        n, c, h, w = x.shape
        key = f"c{c}_h{h}_w{w}_f{module.out_channels}_k{module.kernel_size[0]}_s{module.stride[0]}_p{module.padding[0]}"
        shapes.setdefault(key, (module, x.detach().clone()))

    handles = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, nn.Conv2d)]
    with torch.inference_mode():
        model(torch.randn(1, 3, 224, 224, device="cuda"))
    for h in handles:
        h.remove()
    return shapes


def capture(step, calls=1):
    """`calls` calls of step() as one CUDA graph: warmed up on a side stream (as
    torch.cuda.graphs asks), captured once. Returns the graph and step()'s last result."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            result = step()
    return graph, result


def time_convs(model, runs):
    """cuDNN's GFLOP/s on each distinct convolution, 20 calls captured in one CUDA graph."""
    for key, (conv, x) in conv_shapes(model).items():
        with torch.inference_mode():
            graph, y = capture(lambda: conv(x), 20)
            ms = time_ms(graph.replay, runs) / 20
        flops = 2.0 * y.numel() * x.shape[1] * conv.kernel_size[0] * conv.kernel_size[1]
        print(f"BENCH cudnn_conv_{key} {flops / ms / 1e6:.1f} GFLOP/s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--convs", action="store_true", help="also time each distinct convolution alone")
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("time_torch_gpu.py: no CUDA device for PyTorch", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    print(f"# PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name(0)}, TF32 off")
    for name in args.models:
        model, source = build(name)
        model = model.cuda().eval()
        if name in TRANSFORMERS:
            import transformers as definitions
            x = definitions.reference_input(name, 1, 0).cuda()
        else:
            x = torch.randn(1, 3, 224, 224, device="cuda")
        with torch.inference_mode():
            eager = time_ms(lambda: model(x), args.runs)
            graph, _ = capture(lambda: model(x))
            replay = time_ms(graph.replay, args.runs)
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
            graph, _ = capture(lambda: model(x))
            tf32 = time_ms(graph.replay, args.runs)
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        print(f"# {name}: {source}")
        print(f"BENCH {name}_torch_eager_ms {eager:.3f} ms")
        print(f"BENCH {name}_torch_graph_ms {replay:.3f} ms")
        print(f"BENCH {name}_torch_tf32_graph_ms {tf32:.3f} ms")
        if args.convs and name not in TRANSFORMERS:
            time_convs(model, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
