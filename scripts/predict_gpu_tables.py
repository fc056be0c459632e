#!/usr/bin/python3
"""Predicted Tables 1-3 at GPU-cluster scale (docs/benchmarks-history.md, "Predictions at GPU-cluster scale
with NCCL 2.28's ring or tree"):
ResNet-18, ResNet-50 and MobileNetV2 on CIFAR-10 (32x32, 128 images per GPU) from 8 to 1024 GPUs on
the 8x H100 / NDR 400 system file, fp32 and bf16 gradients, with the what-ifs users ask for (bucket
size, overlap off, topology), and the same steps over the 8x A100 / HDR 200 system's links (H100
compute on A100 links: --accept-other-device, which predict otherwise refuses).

The compute is described, not measured here (this machine has no GPU):
- ResNet-18 and MobileNetV2: dtbench's phase medians measured on one H100 80GB (LibTorch 2.11.0+cu130,
  batch 128, fp32, before the GPU-speed work): forward 2.8 / 5.5 ms, backward 6.7 / 12.8 ms,
  optimizer 2.7 / 7.5 ms;
- ResNet-50: ResNet-18's phases scaled, forward and backward by the training FLOPs per image
  (torch.utils.flop_counter on the reference models, scripts/reference/kuangliu_models.py), the
  optimizer by the parameter count.
Gradient ready fractions are measured on this CPU (dtbench predict --describe-model).
Scaling efficiency is per step at the full batch of 128 per GPU: step(1) / step(N), which is images/s at
N / (N x images/s of one GPU) wherever the epoch holds a full step at N (up to 256 GPUs here).

Usage: scripts/predict_gpu_tables.py [build-dir | path to dtbench]   (prints Markdown; needs scripts/torch_python)
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYSTEMS = os.path.join(ROOT, "experiments/predict/systems")
H100, A100 = os.path.join(SYSTEMS, "dgx-h100-ndr400.json"), os.path.join(SYSTEMS, "dgx-a100-hdr200.json")
WORLDS = [8, 16, 32, 64, 128, 256, 512, 1024]
SHOWN = [8, 64, 256, 1024]
MEASURED_MS = {"resnet18": (2.8, 6.7, 2.7), "mobilenetv2": (5.5, 12.8, 7.5)}

FLOPS = r"""
import sys, torch
sys.path.insert(0, sys.argv[1])
import kuangliu_models as km
from torch.utils.flop_counter import FlopCounterMode
out = {}
for name in ("resnet18", "resnet50"):
    m = km.MODELS[name]()
    with FlopCounterMode(display=False) as f:
        m(torch.randn(2, 3, 32, 32)).sum().backward()
    out[name] = {"flops": f.get_total_flops() / 2, "parameters": sum(p.numel() for p in m.parameters())}
print(__import__("json").dumps(out))
"""


def run(*args):
    return subprocess.run(list(args), check=True, capture_output=True, text=True).stdout


def describe(dtbench, model, phases, path, source):
    forward, backward, optimizer = phases
    run(dtbench, "predict", "--describe-model", model, "--dataset", "cifar10", "--batch-size", "128",
        "--train-samples", "50000", "--forward-ms", f"{forward:.4f}", "--backward-ms", f"{backward:.4f}",
        "--optimizer-ms", f"{optimizer:.4f}", "--compute-source", source, "--gpu", "h100-sxm", "--output", path)


def efficiencies(dtbench, step, hardware, flags):
    out = run(dtbench, "predict", step, "--hardware", hardware, "--world", ",".join(map(str, [1] + WORLDS)),
              "--format", "csv", "--table", "time_speedup,compute_comm", *flags)
    tables = out.split("\n# ")
    t1 = list(csv.DictReader(io.StringIO(tables[0].split("\n", 1)[1])))
    t2 = list(csv.DictReader(io.StringIO(tables[1].split("\n", 1)[1])))
    steps = {int(r["N"]): int(r["steps"]) for r in t1}
    # The step at each N, at the full batch per rank (T_s = steps x the predicted step). From 512 GPUs on,
    # CIFAR-10's 50,000 images are less than one step of 128 per rank: predict takes that step at the
    # compute of a full batch and counts only the images it has in images_per_s, so a rate would read
    # the short epoch, not the scaling.
    step = {int(r["N"]): float(r["T_s"]) / steps[int(r["N"])] for r in t1}
    exposed = {int(r["N"]): float(r["comm_exposed_s"]) / steps[int(r["N"])] for r in t2}
    return {n: step[1] / step[n] for n in WORLDS}, exposed


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    dtbench = build if os.path.isfile(build) else os.path.join(build, "dtbench")
    flops = json.loads(run(os.path.join(ROOT, "scripts/torch_python"), "-c", FLOPS,
                           os.path.join(ROOT, "scripts/reference")))
    ratio = flops["resnet50"]["flops"] / flops["resnet18"]["flops"]
    params = flops["resnet50"]["parameters"] / flops["resnet18"]["parameters"]
    f18, b18, o18 = MEASURED_MS["resnet18"]
    phases = dict(MEASURED_MS, resnet50=(f18 * ratio, b18 * ratio, o18 * params))
    with tempfile.TemporaryDirectory() as work:
        steps = {}
        for model in ("resnet18", "resnet50", "mobilenetv2"):
            steps[model] = os.path.join(work, model + ".json")
            source = ("measured by dtbench on one H100, batch 128, fp32" if model in MEASURED_MS else
                      f"ResNet-18's H100 phases x {ratio:.3f} (training FLOPs) and x {params:.3f} (parameters)")
            describe(dtbench, model, phases[model], steps[model], source)
        print(f"Described compute (ms per step: forward, backward, optimizer): " +
              "; ".join(f"{m} {p[0]:.2f}, {p[1]:.2f}, {p[2]:.2f}" for m, p in phases.items()) +
              f". ResNet-50 / ResNet-18: {ratio:.3f}x the training FLOPs, {params:.3f}x the parameters.\n")
        print("Per-step scaling efficiency (and exposed communication per step at 1024 GPUs, ms):\n")
        header = " | ".join(f"{n} GPUs" for n in SHOWN)
        print(f"| model | gradients | links | what-if | {header} | exposed at 1024 |")
        print("|---|---|---|---|" + "---:|" * (len(SHOWN) + 1))
        whatifs = [("as run: native (NCCL 2.28: ring or tree), bucket 25 MB, overlap", []),
                   ("--topology hierarchical", ["--topology", "hierarchical"]),
                   ("--bucket-mb 1", ["--bucket-mb", "1"]),
                   ("--bucket-mb 100", ["--bucket-mb", "100"]),
                   ("--no-overlap", ["--no-overlap"])]
        for model in ("resnet18", "resnet50", "mobilenetv2"):
            for grads, extra in (("fp32", []), ("bf16", ["--element-bytes", "2"])):
                for links, hardware in (("H100 / NDR 400", H100), ("A100 / HDR 200", A100)):
                    for name, flags in whatifs:
                        if links.startswith("A100") and flags:
                            continue
                        # The A100 rows are the H100 steps over the A100 system's links: asked for.
                        other = ["--accept-other-device"] if hardware == A100 else []
                        eff, exposed = efficiencies(dtbench, steps[model], hardware, flags + extra + other)
                        cells = " | ".join(f"{eff[n]:.3f}" for n in SHOWN)
                        print(f"| {model} | {grads} | {links} | {name} | {cells} | {exposed[1024] * 1e3:.2f} |")
        print("\nThe full Tables 1-3 of ResNet-50, fp32 gradients, on the H100 system:\n")
        print(run(dtbench, "predict", steps["resnet50"], "--hardware", H100, "--world", ",".join(map(str, WORLDS)),
                  "--table", "time_speedup,compute_comm,bandwidth"))


if __name__ == "__main__":
    main()
