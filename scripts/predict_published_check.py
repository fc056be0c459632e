#!/usr/bin/python3
"""dtbench predict against a published multi-node table (docs/benchmarks-history.md, "Prediction against a
published table"): Horovod's benchmark of VGG-16 on servers of 4 Pascal GPUs over a 25 Gbit/s RoCE
network, scaling efficiency 79 % at 128 GPUs (horovod/horovod README, October 2017: 32 servers) and
68 % at 512 GPUs (horovod/horovod docs/benchmarks.rst: 128 servers), synthetic data, tf_cnn_benchmarks
at 64 images per GPU.

Every input is fixed before the comparison, none fitted:
- the step: experiments/predict/published/vgg16-imagenet-p100.step.json, written by
    dtbench predict --describe-model vgg16 --image-size 224 --classes 1000 --batch-size 64
      --forward-ms 138.528 --backward-ms 277.056 ...
  (154 images/s at batch 64 on one P100, TensorFlow's published benchmark table for the DGX-1, May
  2017: 415.584 ms per step, split forward:backward 1:2), its buckets laid out by Horovod's Tensor
  Fusion (settings.bucket_layout "fusion", threshold 64 MiB: docs/predict.md, "Bucket layouts");
- the machine: experiments/predict/systems/horovod-2017-pascal-25gbe.json (its description cites
  every figure), with its collective library (NCCL 2.1: the ring only) and its framework (Horovod
  before v0.21: a 5 ms cycle, each launch waiting half of it, and a 64 MB fusion buffer, which lays the
  buckets out; rank 0's negotiation not charged, no per-rank cost being published: docs/predict.md,
  "The collective library and the framework").
Scaling efficiency as Horovod reports it: images/s at N / (N x images/s on one GPU) = step(1) / step(N).
Then each input moves by -20 % and +20 %, one at a time, to show what the answer depends on, and the
choices the sources leave open change one at a time: c10d's bucket layout instead of Horovod's, each
layer's weight asked for before its bias (TensorFlow does not fix that order), and the latency of a
ring step as later NCCL releases' cost models give it (the benchmark's NCCL 2.0-2.1 has none), and
the file's framework and collective library rows, each left out or changed.

Usage: scripts/predict_published_check.py [build-dir]   (prints Markdown)
"""
import copy
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEP = os.path.join(ROOT, "experiments/predict/published/vgg16-imagenet-p100.step.json")
HARDWARE = os.path.join(ROOT, "experiments/predict/systems/horovod-2017-pascal-25gbe.json")
PUBLISHED = {128: 0.79, 512: 0.68}


def efficiencies(dtbench, step, hardware, work, args=()):
    step_path, hw_path = os.path.join(work, "step.json"), os.path.join(work, "hw.json")
    json.dump(step, open(step_path, "w"))
    json.dump(hardware, open(hw_path, "w"))
    worlds = ",".join(str(n) for n in [1] + sorted(PUBLISHED))
    out = subprocess.run([dtbench, "predict", step_path, "--hardware", hw_path, "--world", worlds, "--format", "csv",
                          "--table", "time_speedup", *args], check=True, capture_output=True, text=True).stdout
    rate = {int(r["N"]): float(r["images_per_s"]) for r in csv.DictReader(io.StringIO(out))}
    return {n: rate[n] / (n * rate[1]) for n in PUBLISHED}


def scaled_compute(step, factor):
    s = copy.deepcopy(step)
    for key in ("forward", "backward", "total"):
        s["compute_s"][key] *= factor
    for p in s["parameters"]:
        p["ready_s"] *= factor
    return s


def scaled_backward_share(step, factor):
    s = copy.deepcopy(step)
    total = s["compute_s"]["forward"] + s["compute_s"]["backward"]
    old = s["compute_s"]["backward"]
    new = min(total, old * factor)
    s["compute_s"]["backward"], s["compute_s"]["forward"] = new, total - new
    for p in s["parameters"]:
        p["ready_s"] *= new / old
    return s


def with_layout(step, layout):
    s = copy.deepcopy(step)
    s["settings"]["bucket_layout"] = layout
    return s


def weight_before_bias(step):
    """The same step with each layer's weight listed (asked for) before its bias."""
    s = copy.deepcopy(step)
    ps = s["parameters"]
    for i in range(len(ps) - 1):
        a, b = ps[i], ps[i + 1]
        if a["name"].endswith(".bias") and b["name"] == a["name"][:-len("bias")] + "weight":
            ps[i], ps[i + 1] = b, a
    return s


def scaled(document, path, factor):
    d = copy.deepcopy(document)
    target = d
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] *= factor
    return d


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    dtbench = os.path.join(build, "dtbench")
    step, hardware = json.load(open(STEP)), json.load(open(HARDWARE))
    with tempfile.TemporaryDirectory() as work:
        base = efficiencies(dtbench, step, hardware, work)
        print("| GPUs | servers | published efficiency | predicted | predicted − published | published overhead | "
              "predicted overhead | overhead ratio |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for n, published in sorted(PUBLISHED.items()):
            p = base[n]
            print(f"| {n} | {n // 4} | {published:.2f} | {p:.3f} | {p - published:+.3f} | {1 - published:.2f} | "
                  f"{1 - p:.3f} | {(1 - p) / (1 - published):.2f} |")
        print()
        link = lambda cls, key, unit: f"{hardware[cls][key]:g} {unit}"  # the file's own figure, for the labels
        moves = [
            ("compute per step (154 images/s)", lambda f: (scaled_compute(step, f), hardware)),
            ("backward's share of compute (2/3)", lambda f: (scaled_backward_share(step, f), hardware)),
            (f"inter-node bandwidth ({link('inter_node', 'bandwidth_gbit_s', 'Gbit/s')})",
             lambda f: (step, scaled(hardware, ["inter_node", "bandwidth_gbit_s"], f))),
            (f"inter-node latency ({link('inter_node', 'latency_us', 'us')})",
             lambda f: (step, scaled(hardware, ["inter_node", "latency_us"], f))),
            (f"intra-node bandwidth ({link('intra_node', 'bandwidth_gbit_s', 'Gbit/s')})",
             lambda f: (step, scaled(hardware, ["intra_node", "bandwidth_gbit_s"], f))),
            (f"intra-node latency ({link('intra_node', 'latency_us', 'us')})",
             lambda f: (step, scaled(hardware, ["intra_node", "latency_us"], f))),
            (f"fusion buffer ({hardware['framework']['fusion_mb']:g} MiB, the framework's)",
             lambda f: (step, scaled(hardware, ["framework", "fusion_mb"], f))),
            (f"Horovod's cycle ({hardware['framework']['cycle_ms']:g} ms)",
             lambda f: (step, scaled(hardware, ["framework", "cycle_ms"], f))),
        ]
        print("| input moved | −20 %: at 128 | −20 %: at 512 | +20 %: at 128 | +20 %: at 512 |")
        print("|---|---:|---:|---:|---:|")
        print(f"| none | {base[128]:.3f} | {base[512]:.3f} | {base[128]:.3f} | {base[512]:.3f} |")
        for name, move in moves:
            low = efficiencies(dtbench, *move(0.8), work)
            high = efficiencies(dtbench, *move(1.2), work)
            print(f"| {name} | {low[128]:.3f} | {low[512]:.3f} | {high[128]:.3f} | {high[512]:.3f} |")
        print()
        print("| choice changed | at 128 | at 512 |")
        print("|---|---:|---:|")
        print(f"| none (Horovod's fusion layout, bias asked before weight; NCCL 2.5's "
              f"{link('inter_node', 'latency_us', 'us')} a ring step; the file's framework and library rows) | "
              f"{base[128]:.3f} | {base[512]:.3f} |")
        for name, variant, args in [
                ("c10d's bucket layout (`ddp`) instead of Horovod's", with_layout(step, "ddp"), ["--bucket-layout", "ddp"]),
                ("each layer's weight asked before its bias", weight_before_bias(step), [])]:
            e = efficiencies(dtbench, variant, hardware, work, args)
            print(f"| {name} | {e[128]:.3f} | {e[512]:.3f} |")
        # The file's rows, one at a time: left out (as the file was before it had them), or changed.
        without = lambda key: {k: v for k, v in hardware.items() if k != key}
        cycle_1ms = copy.deepcopy(hardware)
        cycle_1ms["framework"]["cycle_ms"] = 1
        nccl_228 = copy.deepcopy(hardware)
        nccl_228["collective_library"]["release"] = "2.28"
        for name, variant in [("no framework row (no cycle wait; the step's own 64 MiB fusion layout)", without("framework")),
                              ("no collective library row (NCCL's ring, as modelled)", without("collective_library")),
                              ("neither row (the file as it was before them)",
                               {k: v for k, v in hardware.items() if k not in ("framework", "collective_library")}),
                              ("Horovod's cycle of v0.21 on, 1 ms", cycle_1ms),
                              ("NCCL 2.28's choice of ring or tree instead of 2.1's ring", nccl_228)]:
            e = efficiencies(dtbench, step, variant, work)
            print(f"| {name} | {e[128]:.3f} | {e[512]:.3f} |")
        # The latency of a ring step across nodes as other NCCL releases' cost models give it (the
        # hardware file's description derives each).
        for name, latency in [("NCCL 2020's network hop, 9.6 us, as the latency of every step", 9.6),
                              ("a step's share of NCCL 2020's ring latency, (3 x 5.7 + 9.6) / 4 x 1.9 = 12.7 us", 12.7),
                              ("a step's share of NCCL 2.28's ring latency, (3 x 5.7 + 14.0) / 4 x 1.9 = 14.8 us", 14.8)]:
            variant = copy.deepcopy(hardware)
            variant["inter_node"]["latency_us"] = latency
            e = efficiencies(dtbench, step, variant, work)
            print(f"| {name} | {e[128]:.3f} | {e[512]:.3f} |")


if __name__ == "__main__":
    main()
