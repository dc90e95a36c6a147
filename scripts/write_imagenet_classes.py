#!/usr/bin/python3
"""Writes src/cli/ImageNetClasses.txt: the 1000 ImageNet-1k class names, one per line in class
order, as torchvision (Debian's python3-torchvision) lists them for its pretrained weights.
`tessel classify` embeds the file; run this only to regenerate it."""
import os

from torchvision.models import _meta

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "cli", "ImageNetClasses.txt")
names = list(_meta._IMAGENET_CATEGORIES)
assert len(names) == 1000 and all("\n" not in n for n in names)
with open(out, "w") as f:
    f.write("\n".join(names) + "\n")
