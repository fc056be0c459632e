#!/usr/bin/python3
"""Writes the step description of Inception V3 as Horovod's published benchmark ran it
(experiments/predict/published/inception3-imagenet-pascal.step.json), for
scripts/predict_published_check.py. Inception V3 is not in dtbench's model zoo, so its gradients are
listed here from the benchmark's own model: tf_cnn_benchmarks' Inceptionv3Model
(tensorflow/benchmarks, scripts/tf_cnn_benchmarks/models/inception_model.py, as of 2018), which
Horovod's benchmark runs (horovod/horovod docs/benchmarks.rst: `tf_cnn_benchmarks.py --model ...
--batch_size 64 --variable_update horovod`):
- 299x299 images, no auxiliary head (the model's default, auxiliary=False);
- every convolution without a bias, followed by batch norm with an offset and no scale
  (ConvNetBuilder's batch_norm_config is empty, so tf.contrib.layers.batch_norm's scale=False):
  one gradient of the kernel and one of the offset (beta) per convolution;
- the logits: a fully connected layer of 2048 inputs to 1001 classes (tf_cnn_benchmarks' ImageNet
  has 1000 classes and a background class), weight and bias;
- float32 throughout (tf_cnn_benchmarks' --use_fp16 defaults to false).
That is 23,819,401 parameters: at 1000 classes, 23,817,352, the trainable parameters of Keras'
InceptionV3 (keras.applications, the same layers, batch norm without a scale), whose 23,851,784 in all
add the batch norms' moving mean and variance, 2 x 17,216 (both checked below). The forward pass is
5.71 G multiply-adds per image.

The step's phases come from the one-GPU throughput given (images/s at batch 64), split
forward:backward 1:2 as the other published steps are. When each gradient is ready is not measured
(the model is not in the zoo, and TensorFlow's order within an Inception module's parallel branches is
not fixed): backward is taken to run the layers in the reverse of the order the model builds them,
each taking the share of backward that its multiply-adds have (a convolution's backward: the input's
gradient and the kernel's, each as many multiply-adds as its forward; the first convolution computes no
input gradient), and a layer's gradients are ready when its share ends; the offset of a batch norm
is ready when backward reaches it, just before its convolution's kernel. Batch norm, ReLU and pooling
take no share (they are counted as no multiply-adds). The description says so.

Usage: scripts/predict_inception_v3_step.py IMAGES_PER_S SOURCE_TEXT [OUTPUT]
"""
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "experiments/predict/published/inception3-imagenet-pascal.step.json")
BATCH = 64
CLASSES = 1001
KERAS_TRAINABLE = 23817352  # keras.applications InceptionV3 at 1000 classes: trainable parameters
KERAS_BN_CHANNELS = 17216  # its non-trainable 34,432 are a moving mean and variance per channel


class Builder:
    """The layers of tf_cnn_benchmarks' ConvNetBuilder that hold weights, in the order it builds them."""

    def __init__(self, size, channels):
        self.h = self.w = size
        self.c = channels
        self.layers = []  # dicts: name, kernel shape, macs, first
        self.count = 0

    @staticmethod
    def out(size, k, s, mode):
        return (size - k) // s + 1 if mode == "VALID" else math.ceil(size / s)

    def conv(self, n, kh, kw, sh=1, sw=1, mode="SAME", state=None):
        h, w, c = state if state else (self.h, self.w, self.c)
        oh, ow = self.out(h, kh, sh, mode), self.out(w, kw, sw, mode)
        name = f"conv{self.count}"
        self.count += 1
        self.layers.append({"name": name, "shape": [kh, kw, c, n], "macs": oh * ow * n * kh * kw * c,
                            "first": not self.layers})
        return oh, ow, n

    def pool(self, k, s, mode, state=None):
        h, w, c = state if state else (self.h, self.w, self.c)
        return self.out(h, k, s, mode), self.out(w, k, s, mode), c

    def set(self, state):
        self.h, self.w, self.c = state

    def module(self, cols):
        start = (self.h, self.w, self.c)
        outs, previous = [], []
        for col in cols:
            state, states = start, []
            for i, layer in enumerate(col):
                kind = layer[0]
                if kind == "share":
                    state = previous[i]
                elif kind == "conv":
                    n, kh, kw = layer[1:4]
                    sh, sw, mode = (layer[4], layer[5], layer[6]) if len(layer) > 4 else (1, 1, "SAME")
                    state = self.conv(n, kh, kw, sh, sw, mode, state)
                else:  # mpool / apool
                    k, _, s, _, mode = layer[1:6]
                    state = self.pool(k, s, mode, state)
                states.append(state)
            previous = states
            outs.append(state)
        assert all(o[:2] == outs[0][:2] for o in outs), outs
        self.set((outs[0][0], outs[0][1], sum(o[2] for o in outs)))


def inception_v3():
    """tf_cnn_benchmarks' Inceptionv3Model.add_inference (auxiliary=False), then the logits."""
    b = Builder(299, 3)

    def a(n):
        b.module([[("conv", 64, 1, 1)], [("conv", 48, 1, 1), ("conv", 64, 5, 5)],
                  [("conv", 64, 1, 1), ("conv", 96, 3, 3), ("conv", 96, 3, 3)],
                  [("apool", 3, 3, 1, 1, "SAME"), ("conv", n, 1, 1)]])

    def b_():
        b.module([[("conv", 384, 3, 3, 2, 2, "VALID")],
                  [("conv", 64, 1, 1), ("conv", 96, 3, 3), ("conv", 96, 3, 3, 2, 2, "VALID")],
                  [("mpool", 3, 3, 2, 2, "VALID")]])

    def c(n):
        b.module([[("conv", 192, 1, 1)], [("conv", n, 1, 1), ("conv", n, 1, 7), ("conv", 192, 7, 1)],
                  [("conv", n, 1, 1), ("conv", n, 7, 1), ("conv", n, 1, 7), ("conv", n, 7, 1), ("conv", 192, 1, 7)],
                  [("apool", 3, 3, 1, 1, "SAME"), ("conv", 192, 1, 1)]])

    def d():
        b.module([[("conv", 192, 1, 1), ("conv", 320, 3, 3, 2, 2, "VALID")],
                  [("conv", 192, 1, 1), ("conv", 192, 1, 7), ("conv", 192, 7, 1), ("conv", 192, 3, 3, 2, 2, "VALID")],
                  [("mpool", 3, 3, 2, 2, "VALID")]])

    def e(pool):
        b.module([[("conv", 320, 1, 1)], [("conv", 384, 1, 1), ("conv", 384, 1, 3)],
                  [("share",), ("conv", 384, 3, 1)],
                  [("conv", 448, 1, 1), ("conv", 384, 3, 3), ("conv", 384, 1, 3)],
                  [("share",), ("share",), ("conv", 384, 3, 1)],
                  [(pool, 3, 3, 1, 1, "SAME"), ("conv", 192, 1, 1)]])

    b.set(b.conv(32, 3, 3, 2, 2, "VALID"))
    b.set(b.conv(32, 3, 3, 1, 1, "VALID"))
    b.set(b.conv(64, 3, 3, 1, 1, "SAME"))
    b.set(b.pool(3, 2, "VALID"))
    b.set(b.conv(80, 1, 1, 1, 1, "VALID"))
    b.set(b.conv(192, 3, 3, 1, 1, "VALID"))
    b.set(b.pool(3, 2, "VALID"))
    a(32), a(64), a(64)
    b_()
    c(128), c(160), c(160), c(192)
    d()
    e("apool"), e("mpool")
    assert (b.h, b.w, b.c) == (8, 8, 2048), (b.h, b.w, b.c)
    return b.layers


def describe(images_per_s, source):
    layers = inception_v3()
    step_s = BATCH / images_per_s
    forward, backward = step_s / 3, 2 * step_s / 3
    # Backward's work, in the order it runs (the reverse of the build): the logits first, then each
    # convolution's input gradient (none for the first) and kernel gradient.
    logits_macs = 2048 * CLASSES
    work = [("logits", 2 * logits_macs)] + [(l["name"], l["macs"] * (1 if l["first"] else 2)) for l in reversed(layers)]
    total = sum(m for _, m in work)
    parameters, done = [], 0
    for name, macs in work:
        if name == "logits":
            done += macs
            at = done / total
            parameters.append({"name": "logits.bias", "elements": CLASSES, "shape": [CLASSES], "ready_fraction": at})
            parameters.append({"name": "logits.weight", "elements": 2048 * CLASSES, "shape": [CLASSES, 2048],
                               "ready_fraction": at})
            continue
        layer = next(l for l in layers if l["name"] == name)
        n = layer["shape"][3]
        parameters.append({"name": name + ".batch_norm.beta", "elements": n, "shape": [n],
                           "ready_fraction": done / total})
        done += macs
        kh, kw, c, n = layer["shape"]  # TensorFlow's HWIO; written as PyTorch's OIHW, the zoo's order
        parameters.append({"name": name + ".kernel", "elements": math.prod(layer["shape"]), "shape": [n, c, kh, kw],
                           "ready_fraction": min(1.0, done / total)})
    count = sum(p["elements"] for p in parameters)
    assert count - (2048 + 1) * (CLASSES - 1000) == KERAS_TRAINABLE, count
    assert sum(l["shape"][3] for l in layers) == KERAS_BN_CHANNELS
    for p in parameters:
        p["dtype"] = "float32"
        p["ready_fraction"] = round(p["ready_fraction"], 9)
    forward_macs = sum(l["macs"] for l in layers)
    return {
        "format": "dtbench-step-description/1",
        "description": (
            f"inception3 (tf_cnn_benchmarks' Inceptionv3Model, no auxiliary head), 299x299 images, 1001 classes, "
            f"{count:,} float32 parameters (scripts/predict_inception_v3_step.py); phases: {source}: "
            f"{step_s * 1e3:.3f} ms per step, split forward:backward 1:2; gradient ready fractions not measured: each "
            f"layer's share of backward's multiply-adds, in the reverse of the build order (the script's docstring); "
            f"settings: Horovod's Tensor Fusion, its rule (bucket_layout fusion) and its default threshold of 64 MiB; "
            f"no buffers broadcast (TensorFlow's batch norm statistics stay on each GPU)"),
        "model": "inception3",
        "dataset": "imagenet 299x299, synthetic",
        "batch_size": BATCH,
        "train_samples": 1281167,
        "drop_last": False,
        "compute_s": {"h2d": 0.0, "forward": forward, "backward": backward, "optimizer": 0.0, "total": step_s},
        "settings": {"backend": "nccl", "topology": "native", "sync": "ssgd", "overlap": True, "bucket_mb": 64,
                     "bucket_layout": "fusion"},
        "flops_per_image": {"forward": 2.0 * (forward_macs + logits_macs),
                            "training_convolution": 6.0 * forward_macs, "training_linear": 6.0 * logits_macs},
        "parameters": parameters,
    }


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split("Usage: ")[1])
    step = describe(float(sys.argv[1]), sys.argv[2])
    output = sys.argv[3] if len(sys.argv) > 3 else OUTPUT
    with open(output, "w") as f:
        json.dump(step, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{output}: {len(step['parameters'])} gradients, "
          f"{sum(p['elements'] for p in step['parameters']):,} parameters, "
          f"{step['flops_per_image']['forward'] / 1e9:.2f} GFLOP forward per image", file=sys.stderr)


if __name__ == "__main__":
    main()
