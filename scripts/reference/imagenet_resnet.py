"""ResNets in their ImageNet layout (a 7x7 stride-2 stem and a 3x3 stride-2 max pool before the four
stages, global average pooling before the classifier), built from the reference's bottleneck
(kuangliu_models.Bottleneck: the stride on its 3x3 convolution, as torchvision's "v1.5" has it). ResNet-50
at 1000 classes has 25,557,032 parameters, as dtbench's own ImageNet layout (models/classifier.h,
`dtbench predict --describe-model resnet50 --image-size 224 --classes 1000`). Used where a GPU step at
ImageNet's size is measured (scripts/bench_gpu.py --parts resnet50), with no torchvision needed."""
import torch.nn as nn
import torch.nn.functional as F

from kuangliu_models import Bottleneck


class ImageNetResNet(nn.Module):
    def __init__(self, num_blocks, num_classes=1000):
        super().__init__()
        self.in_planes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        stages = []
        for planes, blocks, stride in zip((64, 128, 256, 512), num_blocks, (1, 2, 2, 2)):
            layers = []
            for s in [stride] + [1] * (blocks - 1):
                layers.append(Bottleneck(self.in_planes, planes, s))
                self.in_planes = planes * Bottleneck.expansion
            stages.append(nn.Sequential(*layers))
        self.layers = nn.Sequential(*stages)
        self.linear = nn.Linear(512 * Bottleneck.expansion, num_classes)

    def forward(self, x):
        out = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, stride=2, padding=1)
        out = F.adaptive_avg_pool2d(self.layers(out), 1)
        return self.linear(out.flatten(1))


def resnet50(num_classes=1000):
    return ImageNetResNet([3, 4, 6, 3], num_classes)
