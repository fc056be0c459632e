#!/usr/bin/python3
"""dtbench predict against a published multi-node table (docs/benchmarks-history.md, "Prediction against a
published table"; docs/predict.md, "Validation"): Horovod's benchmark of Inception V3, ResNet-101 and
VGG-16 on servers of 4 Pascal GPUs over a 25 Gbit/s RoCE network, tf_cnn_benchmarks at 64 images per
GPU, synthetic data, float32. Scaling efficiency 94 %, 91 % and 85 % at 16 GPUs (README of
September 2017: 4 servers, the table of images/s whose one-GPU baseline the check uses), 90 %, 90 % and 79 % at 128 GPUs (horovod/horovod
README, October 2017: 32 servers) and 90 %, 90 % and 68 % at 512 GPUs (README of May 2018, now
docs/benchmarks.rst: 128 servers). Every figure and its source:
experiments/predict/published/horovod-benchmark.json.

Every input is fixed before the comparison, none fitted:
- the steps: experiments/predict/published/*.step.json, one per model (the sources file names them):
  ResNet-101 and VGG-16 written by `dtbench predict --describe-model` (ImageNet layout, 1000 classes,
  batch 64, ready fractions measured on the CPU), Inception V3 (not in the zoo) by
  scripts/predict_inception_v3_step.py from tf_cnn_benchmarks' model; each step's compute is the one-GPU
  throughput the sources file marks `used` (Horovod's own baseline on 4 servers of 4 Pascal GPUs over
  RoCE-capable 25 Gbit/s, README of September 2017), split forward:backward 1:2, its buckets laid out
  by Horovod's Tensor Fusion (settings.bucket_layout "fusion", threshold 64 MiB: docs/predict.md,
  "Bucket layouts");
- the machine: experiments/predict/systems/horovod-2017-pascal-25gbe.json (its description cites
  every figure), with its collective library (NCCL 2.1: the ring only) and its framework (Horovod
  0.9-0.12: a 5 ms cycle, each launch waiting half of it, and a 64 MB fusion buffer, which lays the
  buckets out; rank 0's negotiation not charged, no per-message cost being published: docs/predict.md,
  "The collective library and the framework").
Scaling efficiency as Horovod reports it: images/s at N / (N x images/s on one GPU) = step(1) / step(N).
In units of the one-GPU step T1, a step at N takes 1/E: its overhead is 1/E - 1, and the time the
model leaves out is 1/E_published - 1/E_predicted.

Then, per model: the one-GPU throughput of every source found (the spread the choice of source
makes), each input moved by -20 % and +20 %, one at a time, to show what the answer depends on, and the
choices the sources leave open changed one at a time: c10d's bucket layout instead of Horovod's, each
layer's weight asked for before its bias (TensorFlow does not fix that order), the gradients' ready
times (evenly over backward, and all at its end: the bounds of a rule not measured), the file's framework and
collective library rows, each left out or changed, the links as the file took them until 2026-12-06
(the network's payload after its frames' overhead only, 24.5 Gbit/s; PCIe alone inside a server,
96 Gbit/s), and the latency of a ring step as later NCCL releases' cost models give it (the
benchmark's NCCL 2.0-2.1 has none).

Usage: scripts/predict_published_check.py [build-dir | path to dtbench]   (prints Markdown)
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
PUBLISHED_DIR = os.path.join(ROOT, "experiments/predict/published")
SOURCES = os.path.join(PUBLISHED_DIR, "horovod-benchmark.json")
HARDWARE = os.path.join(ROOT, "experiments/predict/systems/horovod-2017-pascal-25gbe.json")
WORLDS = (16, 128, 512)


def efficiencies(dtbench, step, hardware, work, args=()):
    step_path, hw_path = os.path.join(work, "step.json"), os.path.join(work, "hw.json")
    json.dump(step, open(step_path, "w"))
    json.dump(hardware, open(hw_path, "w"))
    worlds = ",".join(str(n) for n in (1,) + WORLDS)
    out = subprocess.run([dtbench, "predict", step_path, "--hardware", hw_path, "--world", worlds, "--format", "csv",
                          "--table", "time_speedup", *args], check=True, capture_output=True, text=True).stdout
    rate = {int(r["N"]): float(r["images_per_s"]) for r in csv.DictReader(io.StringIO(out))}
    return {n: rate[n] / (n * rate[1]) for n in WORLDS}


def scaled_compute(step, factor):
    s = copy.deepcopy(step)
    c = s["compute_s"]
    for key in ("forward", "backward", "total"):
        c[key] *= factor
    # Not a rounding below the phases' sum, which predict refuses.
    c["total"] = max(c["total"], sum(c.get(k, 0.0) for k in ("h2d", "forward", "backward", "optimizer")))
    for p in s["parameters"]:
        if "ready_s" in p:  # a ready_fraction is of backward, which scales with it
            p["ready_s"] *= factor
    return s


def scaled_backward_share(step, factor):
    s = copy.deepcopy(step)
    total = s["compute_s"]["forward"] + s["compute_s"]["backward"]
    old = s["compute_s"]["backward"]
    new = min(total, old * factor)
    s["compute_s"]["backward"], s["compute_s"]["forward"] = new, total - new
    for p in s["parameters"]:
        if "ready_s" in p:
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


def evenly_ready(step):
    """The same step with its gradients ready evenly over backward, in the same order: a rule for the ready
    times that takes nothing from the model's layers (Inception V3's are not measured)."""
    s = copy.deepcopy(step)
    ps = s["parameters"]
    for i, p in enumerate(ps):
        p.pop("ready_s", None)
        p["ready_fraction"] = (i + 1) / len(ps)
    return s


def scaled(document, path, factor):
    d = copy.deepcopy(document)
    target = d
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] *= factor
    return d


def at_rate(step, images_per_s):
    """The step with its compute scaled to a one-GPU throughput of images_per_s."""
    return scaled_compute(step, step["batch_size"] / images_per_s / step["compute_s"]["total"])


def model_checks(dtbench, label, step, used, sources, hardware, work):
    """The spread of the sources, the inputs moved, the choices changed: one model's tables."""
    base = efficiencies(dtbench, step, hardware, work)
    print(f"#### {label}")
    print()
    print("| one-GPU throughput (images/s at batch 64) | source | at 128 | at 512 |")
    print("|---:|---|---:|---:|")
    for source in sources:
        e = efficiencies(dtbench, at_rate(step, source["images_per_s"]), hardware, work)
        mark = " (used)" if source.get("used") else ""
        print(f"| {source['images_per_s']:g} | {source['source']}{mark} | {e[128]:.3f} | {e[512]:.3f} |")
    print()
    link = lambda cls, key, unit: f"{hardware[cls][key]:g} {unit}"  # the file's own figure, for the labels
    moves = [
        (f"compute per step ({used:g} images/s)", lambda f: (scaled_compute(step, f), hardware)),
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
            ("each layer's weight asked before its bias", weight_before_bias(step), []),
            ("gradients ready evenly over backward, in the same order", evenly_ready(step), []),
            ("no overlap: every gradient ready at backward's end (`--no-overlap`)", step, ["--no-overlap"])]:
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
    # The links as the file took them before 2026-12-06 (its description says why they changed).
    for name, path, value in [("inter-node 24.5 Gbit/s, the payload after the frames' overhead only (the file's until 2026-12-06)",
                               ["inter_node", "bandwidth_gbit_s"], 24.5),
                              ("intra-node 96 Gbit/s, PCIe alone (the file's until 2026-12-06)",
                               ["intra_node", "bandwidth_gbit_s"], 96)]:
        variant = copy.deepcopy(hardware)
        variant[path[0]][path[1]] = value
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
    print()


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    dtbench = build if os.path.isfile(build) else os.path.join(build, "dtbench")
    sources, hardware = json.load(open(SOURCES)), json.load(open(HARDWARE))
    models = []
    for key, model in sources["models"].items():
        step = json.load(open(os.path.join(PUBLISHED_DIR, model["step"])))
        used = [s["images_per_s"] for s in model["one_gpu"] if s.get("used")]
        assert len(used) == 1, key
        # The step's compute is the throughput the sources file uses (the check reads both).
        assert abs(step["batch_size"] / step["compute_s"]["total"] - used[0]) < 1e-6 * used[0], (key, used)
        published = {int(n): e for n, e in sources["published_efficiency"][key].items()}
        models.append((key, model, step, used[0], published))
    with tempfile.TemporaryDirectory() as work:
        base = {key: efficiencies(dtbench, step, hardware, work) for key, _, step, _, _ in models}
        print("| model | GPUs | servers | published efficiency | predicted | predicted − published | within ±0.03 | "
              "published overhead (T1) | predicted overhead (T1) | left out (T1) |")
        print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
        for key, model, _, _, published in models:
            for n in WORLDS:
                p, q = base[key][n], published[n]
                print(f"| {model['label']} | {n} | {n // 4} | {q:.4g} | {p:.3f} | {p - q:+.3f} | "
                      f"{'yes' if abs(p - q) <= 0.03 else 'no'} | {1 / q - 1:.3f} | {1 / p - 1:.3f} | {1 / q - 1 / p:+.3f} |")
        print()
        print("Growth from 128 to 512 GPUs (each a ratio of the times per step at 512 and at 128, in units of T1):")
        print()
        print("| model | published overhead | predicted overhead | published ÷ predicted | time left out |")
        print("|---|---:|---:|---:|---:|")
        for key, model, _, _, published in models:
            pub = [1 / published[n] - 1 for n in (128, 512)]
            pred = [1 / base[key][n] - 1 for n in (128, 512)]
            left = [1 / published[n] - 1 / base[key][n] for n in (128, 512)]
            grow = lambda v: f"{v[1] / v[0]:.2f}" if v[0] > 0 else "n/a"
            ratio = (pub[1] / pub[0]) / (pred[1] / pred[0])
            print(f"| {model['label']} | {grow(pub)} | {grow(pred)} | {ratio:.2f} | "
                  f"{grow(left) if left[0] > 0 and left[1] > 0 else f'{left[0]:+.3f} to {left[1]:+.3f}'} |")
        print()
        for key, model, step, used, _ in models:
            model_checks(dtbench, model["label"], step, used, model["one_gpu"], hardware, work)


if __name__ == "__main__":
    main()
