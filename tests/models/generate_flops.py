"""Writes tests/models/expected/flops.json: PyTorch's own FLOP counts (torch.utils.flop_counter.
FlopCounterMode, 2 FLOPs per multiply-add) of every model of the zoo at 32x32 (the kuangliu/pytorch-cifar
definitions in scripts/reference/kuangliu_models.py) and of torchvision's ResNet-50 and VGG-16 (with batch
norm, as dtbench's VGGs have it) at 224x224, per image: the forward pass, and the training step (forward,
cross-entropy loss and backward). test_flop_count.cpp compares dtbench's counts (models/flop_count.h)
with them; tests/models/test_flop_reference.sh runs this script again and checks that the file still
says what this torch says.

Also one case of its own: a 32-channel depthwise 3x3 convolution on 16x16 whose input needs a gradient,
where FlopCounterMode's backward of a grouped convolution counts as if it were ungrouped (dtbench counts
3x the forward; docs/report.md, "FLOPs and the speed of light").

Run with the torch dtbench builds against (it needs torchvision, which scripts/install_deps.sh installs
beside it):
    scripts/torch_python tests/models/generate_flops.py [OUTPUT]      (default: expected/flops.json)
"""
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.flop_counter import FlopCounterMode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "reference"))
from kuangliu_models import MODELS  # noqa: E402

GROUPED = {"mobilenetv2"}  # the models with grouped (depthwise) convolutions


def count(model, image_size, classes):
    """FlopCounterMode's forward and training-step FLOPs for one image (eval mode: batch norm over one
    image; the counts do not depend on the mode)."""
    model.eval()
    x = torch.zeros(1, 3, image_size, image_size)
    y = torch.zeros(1, dtype=torch.long)
    with FlopCounterMode(display=False) as forward:
        logits = model(x)
    assert logits.shape == (1, classes), logits.shape
    with FlopCounterMode(display=False) as training:
        F.cross_entropy(model(x), y).backward()
    return {"forward_flops": forward.get_total_flops(), "training_flops": training.get_total_flops()}


def depthwise_case():
    conv = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
    x = torch.zeros(1, 32, 16, 16, requires_grad=True)
    with FlopCounterMode(display=False) as forward:
        out = conv(x)
    with FlopCounterMode(display=False) as training:
        conv(x).sum().backward()
    del out
    return {"channels": 32, "kernel": 3, "image_size": 16, "forward_flops": forward.get_total_flops(),
            "training_flops": training.get_total_flops()}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "expected", "flops.json")
    torch.manual_seed(0)
    models = {}
    for name, make in MODELS.items():
        models[name] = dict(count(make(), 32, 10), image_size=32, classes=10, grouped=name in GROUPED,
                            reference="scripts/reference/kuangliu_models.py")
    for name, make in (("resnet50", torchvision.models.resnet50), ("vgg16", torchvision.models.vgg16_bn)):
        models[name + "@224"] = dict(count(make(num_classes=1000), 224, 1000), image_size=224, classes=1000,
                                     grouped=False, reference="torchvision.models." + make.__name__)
    result = {
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "convention": "FlopCounterMode: 2 FLOPs per multiply-add of convolutions and matrix products, per image",
        "models": models,
        "depthwise": depthwise_case(),
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
