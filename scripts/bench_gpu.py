"""GPU speed: dtbench against PyTorch eager (and CUDA graphs) on one GPU, on the same torch.

Run as `scripts/bench_single_rank.py --device cuda ...` (or this file directly); docs/gpu.md, "GPU speed",
says how to run it on the GPU machine and docs/benchmarks-history.md, "GPU speed", what it measures. In order of
priority, each part written to --out as soon as it is measured (results.json, results.md), so a run cut
short by its time limit still leaves what it measured:

  1. eager: dtbench against PyTorch eager at {resnet18, mobilenetv2} x {batch 128, 512} x {fp32, bf16 +
     channels-last}, --repeats alternating repeats (which side goes first alternates). PyTorch runs
     cudnn.benchmark off and on in one process per point and the best of the two is taken. dtbench runs
     with its defaults (--phase-timing events, --cudnn-benchmark on): every phase is timed.
  2. graph: dtbench --cuda-graph beside PyTorch's whole-step torch.cuda.graph (forward, loss, backward,
     optimizer step captured once after warm-up, static inputs) at the ResNet-18 points; where dtbench
     refuses --cuda-graph, its message is recorded instead of a figure.
  3. phase_timing: dtbench --phase-timing events against none at two points (the cost of timing).
  4. loader: whether the loader keeps up at GPU rates: dtbench at ResNet-18, batch 512, bf16 +
     channels-last (--loader-batch, --loader-precision) with its default loader (2 workers), with
     --workers 0, and with --data-on-device (CUDA only), end-to-end images/s (the loader's wait
     included) against the same run's images/s without it.
  5. table1: dtbench alone at batch 32 to 8192, fp32 and bf16.
  6. resnet50: the ResNet-50 step at ImageNet's size that the GPU-scale prediction tables need
     (docs/predict.md, "Systems of published figures"): ResNet-50 in its ImageNet layout
     (reference/imagenet_resnet.py, torchvision's shapes, so that no torchvision is needed; 1000 classes,
     --resnet50-size pixels, --resnet50-batch images) in PyTorch eager, each phase (forward with the
     loss, backward, the optimizer's step) timed by CUDA events around it, medians over the timed steps;
     dtbench trains only 32x32 and 28x28 images, so PyTorch measures it. Each precision's phases become a
     step description (`dtbench predict --describe-model resnet50 --image-size S --classes 1000 ...
     --gpu KEY`, KEY the peak table's name of this GPU as dtbench identifies it) in OUT/steps/, for
     `dtbench predict STEP --hardware experiments/predict/systems/dgx-h100-ndr400.json`.

Figures: images/s = samples / sum(step_s - data_s) over the timed steps for dtbench (batches.csv; the
loader's wait left out), samples / sum(step seconds) for PyTorch
(pre-built batches on the device, so nothing to leave out). Both read loss and accuracy back every step.
A ratio is dtbench / PyTorch of the medians over the repeats; the spread is min-max of the per-repeat
ratios.

--device cpu runs the same plumbing on the CPU with tiny settings (a check of the script, not a
measurement); --device cuda fails at once, naming what is missing, where no GPU is visible.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# One PyTorch point, in its own process: eager with cudnn.benchmark off then on (CUDA), or the whole
# step in a CUDA graph. Prints {"variants": {name: [step seconds...]}} as JSON.
PYTORCH_POINT = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import torch
import torch.nn.functional as F
from kuangliu_models import MODELS
model_name, batch, precision, device, mode, warmup, steps = sys.argv[2:9]
batch, warmup, steps = int(batch), int(warmup), int(steps)
bf16 = precision == "bf16"
cuda = device == "cuda"
if cuda and not torch.cuda.is_available():
    sys.exit("PyTorch sees no CUDA device")
fmt = torch.channels_last if bf16 else torch.contiguous_format

def sync():
    if cuda:
        torch.cuda.synchronize()

def build():
    torch.manual_seed(0)
    model = MODELS[model_name]().to(device).to(memory_format=fmt)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=5e-4)
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(batch, 3, 32, 32, generator=g).to(device).contiguous(memory_format=fmt),
                torch.randint(0, 10, (batch,), generator=g).to(device)) for _ in range(4)]
    return model, opt, batches

def forward_loss(model, x, y):
    with torch.autocast(device, dtype=torch.bfloat16, enabled=bf16):
        out = model(x)
        return out, F.cross_entropy(out, y)

def eager(benchmark):
    if cuda:
        torch.backends.cudnn.benchmark = benchmark
    model, opt, batches = build()
    times = []
    for step in range(warmup + steps):
        x, y = batches[step % len(batches)]
        sync()
        t0 = time.perf_counter()
        out, loss = forward_loss(model, x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
        loss.item()
        (out.argmax(1) == y).sum().item()
        times.append(time.perf_counter() - t0)
    return times[warmup:]

def graphed():
    torch.backends.cudnn.benchmark = True
    model, opt, batches = build()
    static_x = batches[0][0].clone()
    static_y = batches[0][1].clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            out, loss = forward_loss(model, static_x, static_y)
            loss.backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_out, static_loss = forward_loss(model, static_x, static_y)
        static_loss.backward()
        opt.step()
    times = []
    for step in range(warmup + steps):
        x, y = batches[step % len(batches)]
        sync()
        t0 = time.perf_counter()
        static_x.copy_(x)
        static_y.copy_(y)
        graph.replay()
        static_loss.item()
        (static_out.argmax(1) == static_y).sum().item()
        times.append(time.perf_counter() - t0)
    return times[warmup:]

if mode == "graph":
    variants = {"graph": graphed()}
elif cuda:
    variants = {"cudnn_benchmark_off": eager(False), "cudnn_benchmark_on": eager(True)}
else:
    variants = {"eager": eager(False)}
print(json.dumps({"variants": variants}))
"""


# The ResNet-50 step in its own process: the ImageNet layout (reference/imagenet_resnet.py, torchvision's
# shapes, no torchvision needed) at ImageNet's size, each phase timed by CUDA
# events on the stream (time.perf_counter on the CPU). Prints {"forward_ms": [...], "backward_ms": [...],
# "optimizer_ms": [...], "step_ms": [...], "device_name": ...} as JSON.
RESNET50_PHASES = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import torch
import torch.nn.functional as F
from imagenet_resnet import resnet50
size, batch, precision, device, warmup, steps = sys.argv[2:8]
size, batch, warmup, steps = int(size), int(batch), int(warmup), int(steps)
bf16 = precision == "bf16"
cuda = device == "cuda"
if cuda and not torch.cuda.is_available():
    sys.exit("PyTorch sees no CUDA device")
fmt = torch.channels_last if bf16 else torch.contiguous_format
if cuda:
    torch.backends.cudnn.benchmark = True
torch.manual_seed(0)
model = resnet50(num_classes=1000).to(device).to(memory_format=fmt)
model.train()
opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=5e-4)
g = torch.Generator().manual_seed(1)
batches = [(torch.randn(batch, 3, size, size, generator=g).to(device).contiguous(memory_format=fmt),
            torch.randint(0, 1000, (batch,), generator=g).to(device)) for _ in range(2)]

class Clock:
    def __init__(self):
        self.marks = []
    def mark(self):
        if cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            self.marks.append(e)
        else:
            self.marks.append(time.perf_counter())
    def intervals_ms(self):
        if cuda:
            torch.cuda.synchronize()
            return [a.elapsed_time(b) for a, b in zip(self.marks, self.marks[1:])]
        return [1000 * (b - a) for a, b in zip(self.marks, self.marks[1:])]

phases = {"forward_ms": [], "backward_ms": [], "optimizer_ms": [], "step_ms": []}
for step in range(warmup + steps):
    x, y = batches[step % len(batches)]
    clock = Clock()
    clock.mark()
    with torch.autocast(device, dtype=torch.bfloat16, enabled=bf16):
        loss = F.cross_entropy(model(x), y)
    clock.mark()
    loss.backward()
    clock.mark()
    opt.step()
    opt.zero_grad(set_to_none=False)
    clock.mark()
    forward, backward, optimizer = clock.intervals_ms()
    loss.item()
    if step >= warmup:
        for key, value in (("forward_ms", forward), ("backward_ms", backward), ("optimizer_ms", optimizer),
                           ("step_ms", forward + backward + optimizer)):
            phases[key].append(value)
phases["device_name"] = torch.cuda.get_device_name() if cuda else "cpu"
phases["parameters"] = sum(p.numel() for p in model.parameters())
phases["torch"] = torch.__version__
print(json.dumps(phases))
"""


class Refused(Exception):
    """dtbench refused the flags (a usage error, exit code 2): its message is the result."""


def run_dtbench(args, model, batch, precision, extra=()):
    """images/s over the timed steps, and the medians of the phase columns (None where empty)."""
    steps = args.warmup + args.steps
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        cmd = [args.dtbench, "train", "--device", args.device, "--model", model, "--dataset", "synthetic",
               "--synthetic-train-size", str(batch * steps), "--synthetic-test-size", "0", "--batch-size", str(batch),
               "--epochs", "1", "--max-steps", str(steps), "--lr", "0.02", "--no-eval", "--quiet", "--out", out,
               "--timeout", str(args.run_timeout)]
        if precision == "bf16":
            cmd += ["--amp", "bf16", "--channels-last"]
        cmd += list(extra)
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.run_timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"dtbench did not finish in {args.run_timeout} s: {' '.join(cmd)}")
        if done.returncode == 2:
            raise Refused(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "usage error")
        if done.returncode != 0:
            raise RuntimeError(f"dtbench failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
        with open(os.path.join(out, "batches.csv")) as f:
            rows = list(csv.DictReader(f))[args.warmup:]
        with open(os.path.join(out, "config.json")) as f:
            speed_of_light = json.load(f).get("speed_of_light")
    if not rows:
        raise RuntimeError("dtbench wrote no timed rows")
    samples = sum(int(r["samples"]) for r in rows)
    compute = sum(float(r["step_s"]) - float(r["data_s"]) for r in rows)
    whole = sum(float(r["step_s"]) for r in rows)
    phases = {}
    for column in ("data_s", "h2d_s", "forward_s", "backward_s", "optimizer_s", "step_s"):
        cells = [r[column] for r in rows]
        phases[column] = None if any(c == "" for c in cells) else statistics.median(float(c) for c in cells)
    training_flops, peak, peak_name = flops_and_peak(speed_of_light)
    return {"images_per_s": samples / compute, "end_to_end_images_per_s": samples / whole, "phases": phases,
            "training_flops": training_flops, "peak_flops_per_s": peak, "peak_name": peak_name}


def flops_and_peak(speed_of_light):
    """(training FLOPs per image, peak FLOP/s, what a fraction of it is called) from config.json's
    speed_of_light (docs/report.md, "FLOPs and the speed of light"): a GPU's datasheet peaks per kind of
    layer (the step's FLOPs over their time at those peaks; None for a GPU dtbench cannot identify), or
    the CPU's GEMM probe. The same figures serve PyTorch's side: the same model does the same arithmetic
    in the same precision (PyTorch's TF32 defaults are LibTorch's)."""
    if not speed_of_light:
        return None, None, None
    flops = speed_of_light["flops_per_image"]
    if "gemm_probe" in speed_of_light:
        return flops["training"], speed_of_light["gemm_probe"]["gflops"] * 1e9, "of_gemm_probe"
    seconds = 0.0
    for kind, peak in (("training_convolution", "convolution_peak"), ("training_linear", "linear_peak")):
        if flops[kind] > 0:
            tflops = speed_of_light.get(peak, {}).get("peak_tflops")
            if not tflops:
                return flops["training"], None, "MFU"
            seconds += flops[kind] / (tflops * 1e12)
    return flops["training"], (flops["training"] / seconds if seconds > 0 else None), "MFU"


def fraction_cell(runs, images_per_s):
    """The median rate's fraction of the peak dtbench's runs recorded, '—' without one."""
    known = [r for r in runs if r.get("peak_flops_per_s")]
    if not known or not images_per_s:
        return "—"
    r = known[-1]
    return f"{statistics.median(images_per_s) * r['training_flops'] / r['peak_flops_per_s']:.3f}"


def run_pytorch(args, model, batch, precision, mode):
    """{variant: images/s} for one point, in a fresh process."""
    cmd = [args.python, "-c", PYTORCH_POINT, os.path.join(HERE, "reference"), model, str(batch), precision,
           args.device, mode, str(args.warmup), str(args.steps)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.run_timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"PyTorch did not finish in {args.run_timeout} s ({model} {batch} {precision} {mode})")
    if done.returncode != 0:
        raise RuntimeError(f"PyTorch failed ({model} {batch} {precision} {mode}):\n{done.stderr[-2000:]}")
    variants = json.loads(done.stdout.strip().splitlines()[-1])["variants"]
    return {name: batch * len(t) / sum(t) for name, t in variants.items()}


def ratio_cell(ours, theirs):
    """'median ratio (min-max of the per-repeat ratios)'."""
    if not ours or not theirs:
        return "—"
    per_repeat = [a / b for a, b in zip(ours, theirs)]
    return (f"{statistics.median(ours) / statistics.median(theirs):.3f} "
            f"({min(per_repeat):.3f}–{max(per_repeat):.3f})")


def rate_cell(values):
    return f"{statistics.median(values):,.0f}" if values else "—"


def geometric_mean(values):
    product = 1.0
    for v in values:
        product *= v
    return product ** (1.0 / len(values)) if values else float("nan")


class Results:
    """Everything measured so far, rewritten to --out after every point."""

    def __init__(self, args):
        self.args = args
        self.data = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "device": args.device, "settings": vars(args),
                     "eager": {}, "graph": {}, "phase_timing": {}, "loader": {}, "table1": {}, "resnet50": {}, "notes": [],
                     "errors": []}

    def save(self):
        os.makedirs(self.args.out, exist_ok=True)
        with open(os.path.join(self.args.out, "results.json"), "w") as f:
            json.dump(self.data, f, indent=1)
        with open(os.path.join(self.args.out, "results.md"), "w") as f:
            f.write(self.markdown())

    def markdown(self):
        d = self.data
        lines = [f"GPU speed on {d['device']}, started {d['started']}; images/s medians of {self.args.repeats} "
                 f"alternating repeats, {self.args.warmup} warm-up and {self.args.steps} timed steps each.", ""]
        if d["eager"]:
            names = {x.get("peak_name") for r in d["eager"].values() for x in r["dtbench"]} - {None}
            fraction = names.pop() if len(names) == 1 else "fraction of peak"
            lines += ["| model | batch | precision | dtbench | PyTorch eager (best of cudnn.benchmark) | "
                      "dtbench / PyTorch (spread) | dtbench forward / backward / optimizer ms | "
                      f"{fraction}: dtbench | {fraction}: PyTorch |", "|---|---|---|---|---|---|---|---|---|"]
            ratios = []
            for key, r in d["eager"].items():
                model, batch, precision = key.split("/")
                best = [max(v.values()) for v in r["pytorch"]]
                if r["dtbench"] and best:
                    ratios.append(statistics.median(x["images_per_s"] for x in r["dtbench"]) / statistics.median(best))
                ph = r["dtbench"][-1]["phases"] if r["dtbench"] else {}
                phase_ms = " / ".join("—" if ph.get(c) is None else f"{1000 * ph[c]:.2f}"
                                      for c in ("forward_s", "backward_s", "optimizer_s")) if ph else "—"
                lines.append(f"| {model} | {batch} | {precision} | {rate_cell([x['images_per_s'] for x in r['dtbench']])} "
                             f"| {rate_cell(best)} | {ratio_cell([x['images_per_s'] for x in r['dtbench']], best)} "
                             f"| {phase_ms} | {fraction_cell(r['dtbench'], [x['images_per_s'] for x in r['dtbench']])} "
                             f"| {fraction_cell(r['dtbench'], best)} |")
            lines += ["", f"Geometric mean of the ratios over {len(ratios)} points: {geometric_mean(ratios):.3f}; "
                          f"lowest {min(ratios):.3f}." if ratios else "", ""]
        if d["graph"]:
            lines += ["| model | batch | precision | dtbench --cuda-graph | torch.cuda.graph | ratio (spread) |",
                      "|---|---|---|---|---|---|"]
            for key, r in d["graph"].items():
                model, batch, precision = key.split("/")
                ours = [x["images_per_s"] for x in r["dtbench"]]
                theirs = [v["graph"] for v in r["pytorch"]]
                mine = rate_cell(ours) if ours else f"refused: {r.get('refused', '—')}"
                lines.append(f"| {model} | {batch} | {precision} | {mine} | {rate_cell(theirs)} | "
                             f"{ratio_cell(ours, theirs)} |")
            lines.append("")
        if d["phase_timing"]:
            lines += ["| model | batch | precision | events | none | events / none (spread) |", "|---|---|---|---|---|---|"]
            for key, r in d["phase_timing"].items():
                model, batch, precision = key.split("/")
                ev = [x["images_per_s"] for x in r["events"]]
                no = [x["images_per_s"] for x in r["none"]]
                lines.append(f"| {model} | {batch} | {precision} | {rate_cell(ev)} | {rate_cell(no)} | "
                             f"{ratio_cell(ev, no)} |")
            lines.append("")
        if d["loader"]:
            a = self.args
            lines += [f"The loader at resnet18, batch {a.loader_batch}, {a.loader_precision}: images/s with the "
                      "loader's wait (end to end) and without it (the step alone), and the median wait per step.", "",
                      "| loader | end to end | step alone | end to end / step alone (spread) | data_s median ms |",
                      "|---|---|---|---|---|"]
            for name, runs in d["loader"].items():
                whole = [x["end_to_end_images_per_s"] for x in runs]
                alone = [x["images_per_s"] for x in runs]
                waits = [x["phases"]["data_s"] for x in runs if x["phases"]["data_s"] is not None]
                wait = f"{1000 * statistics.median(waits):.2f}" if waits else "—"
                lines.append(f"| {name} | {rate_cell(whole)} | {rate_cell(alone)} | {ratio_cell(whole, alone)} | {wait} |")
            lines.append("")
        if d["table1"]:
            lines += ["| model | batch | precision | dtbench images/s |", "|---|---|---|---|"]
            for key, r in d["table1"].items():
                model, batch, precision = key.split("/")
                lines.append(f"| {model} | {batch} | {precision} | {rate_cell([x['images_per_s'] for x in r])} |")
            lines.append("")
        if d["resnet50"]:
            lines += ["ResNet-50 at ImageNet's size in PyTorch eager: medians of each phase (ms), and the step "
                      "description written from them.", "",
                      "| point | device | forward | backward | optimizer | step | description |",
                      "|---|---|---|---|---|---|---|"]
            for key, r in d["resnet50"].items():
                p = r["phases_ms"]
                lines.append(f"| {key} | {r['device_name']} ({r['gpu']}) | {p['forward_ms']:.2f} | {p['backward_ms']:.2f} | "
                             f"{p['optimizer_ms']:.2f} | {p['step_ms']:.2f} | {r['description']} |")
            lines.append("")
        if d["notes"]:
            lines += ["Notes:", ""] + [f"- {n}" for n in d["notes"]] + [""]
        if d["errors"]:
            lines += ["Errors:", ""] + [f"- {e}" for e in d["errors"]]
        return "\n".join(lines) + "\n"


def points(args):
    return [(m, b, p) for m in args.models.split(",") for b in (int(x) for x in args.batches.split(","))
            for p in args.precisions.split(",")]


def measure_eager(args, results):
    for repeat in range(args.repeats):
        for model, batch, precision in points(args):
            r = results.data["eager"].setdefault(f"{model}/{batch}/{precision}", {"dtbench": [], "pytorch": []})
            sides = ["dtbench", "pytorch"] if repeat % 2 == 0 else ["pytorch", "dtbench"]
            try:
                measured = {}  # both sides of a repeat, or neither: the per-repeat ratios pair them
                for side in sides:
                    measured[side] = (run_dtbench(args, model, batch, precision) if side == "dtbench"
                                      else run_pytorch(args, model, batch, precision, "eager"))
                for side in sides:
                    r[side].append(measured[side])
            except (RuntimeError, Refused) as e:
                results.data["errors"].append(f"eager {model} {batch} {precision}: {e}")
            results.save()
            print(f"eager repeat {repeat + 1} {model} {batch} {precision} done", file=sys.stderr)


def measure_graphs(args, results):
    if args.device != "cuda":
        results.data["notes"].append("graph: CUDA graphs need --device cuda; not measured")
        return
    graph_points = [p for p in points(args) if p[0] == "resnet18"]
    for repeat in range(args.repeats):
        for model, batch, precision in graph_points:
            r = results.data["graph"].setdefault(f"{model}/{batch}/{precision}", {"dtbench": [], "pytorch": []})
            try:
                if "refused" not in r:
                    r["dtbench"].append(run_dtbench(args, model, batch, precision, ["--cuda-graph"]))
            except Refused as e:
                r["refused"] = str(e)
            except RuntimeError as e:
                results.data["errors"].append(f"graph dtbench {model} {batch} {precision}: {e}")
            try:
                r["pytorch"].append(run_pytorch(args, model, batch, precision, "graph"))
            except RuntimeError as e:
                results.data["errors"].append(f"graph PyTorch {model} {batch} {precision}: {e}")
            results.save()


def measure_phase_timing(args, results):
    chosen = [p for p in points(args) if p[2] == "fp32"][:2]
    for repeat in range(args.repeats):
        for model, batch, precision in chosen:
            r = results.data["phase_timing"].setdefault(f"{model}/{batch}/{precision}", {"events": [], "none": []})
            modes = ["events", "none"] if repeat % 2 == 0 else ["none", "events"]
            try:
                measured = {mode: run_dtbench(args, model, batch, precision, ["--phase-timing", mode]) for mode in modes}
                for mode in modes:
                    r[mode].append(measured[mode])
            except (RuntimeError, Refused) as e:
                results.data["errors"].append(f"phase timing {model} {batch} {precision}: {e}")
            results.save()


def measure_loader(args, results):
    variants = [("default (2 workers)", []), ("--workers 0", ["--workers", "0"])]
    if args.device == "cuda":
        variants.append(("--data-on-device", ["--data-on-device"]))
    else:
        results.data["notes"].append("loader: --data-on-device needs --device cuda; not measured")
    for repeat in range(args.repeats):
        order = variants if repeat % 2 == 0 else variants[::-1]
        for name, extra in order:
            r = results.data["loader"].setdefault(name, [])
            try:
                r.append(run_dtbench(args, "resnet18", args.loader_batch, args.loader_precision, extra))
            except (RuntimeError, Refused) as e:
                results.data["errors"].append(f"loader {name}: {e}")
            results.save()


def measure_table1(args, results):
    for batch in (int(x) for x in args.table1_batches.split(",")):
        for precision in ("fp32", "bf16"):
            r = results.data["table1"].setdefault(f"resnet18/{batch}/{precision}", [])
            try:
                r.append(run_dtbench(args, "resnet18", batch, precision))
            except (RuntimeError, Refused) as e:
                results.data["errors"].append(f"table1 {batch} {precision}: {e}")
            results.save()


def gpu_key(args):
    """The peak table's name of the device dtbench trains on (config.json's speed_of_light), 'none' on the CPU."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        cmd = [args.dtbench, "train", "--device", args.device, "--model", "lenet", "--dataset", "synthetic",
               "--synthetic-train-size", "8", "--synthetic-test-size", "0", "--batch-size", "8", "--epochs", "1",
               "--no-eval", "--quiet", "--out", out, "--timeout", str(args.run_timeout)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.run_timeout)
        if done.returncode != 0:
            raise RuntimeError(f"dtbench failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
        with open(os.path.join(out, "config.json")) as f:
            sol = json.load(f).get("speed_of_light") or {}
    if args.device != "cuda":
        return "none"
    key = (sol.get("convolution_peak") or {}).get("gpu")
    if not key or key == "unknown":
        raise RuntimeError("dtbench does not identify this GPU (speed_of_light's convolution_peak.gpu is "
                           f"{key!r}): add it to the peak table (docs/gpu-peaks.md) to describe its steps")
    return key


def measure_resnet50(args, results):
    try:
        key = gpu_key(args)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        results.data["errors"].append(f"resnet50: the device's name: {e}")
        results.save()
        return
    size, batch = args.resnet50_size, args.resnet50_batch
    steps_dir = os.path.join(args.out, "steps")
    os.makedirs(steps_dir, exist_ok=True)
    for precision in args.precisions.split(","):
        label = f"resnet50/{size}/{batch}/{precision}"
        cmd = [args.python, "-c", RESNET50_PHASES, os.path.join(HERE, "reference"), str(size), str(batch), precision,
               args.device,
               str(args.warmup), str(args.steps)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.run_timeout)
            if done.returncode != 0:
                raise RuntimeError(f"PyTorch failed ({label}):\n{done.stderr[-2000:]}")
            measured = json.loads(done.stdout.strip().splitlines()[-1])
            ms = {k: statistics.median(measured[k]) for k in ("forward_ms", "backward_ms", "optimizer_ms", "step_ms")}
            path = os.path.join(steps_dir, f"{key}-resnet50-{size}px-b{batch}-{precision}.json")
            source = (f"ResNet-50 in its ImageNet layout (scripts/reference/imagenet_resnet.py: torchvision's shapes, "
                      f"1000 classes, {size}x{size}, batch {batch}, "
                      f"{'bf16 autocast, channels-last' if precision == 'bf16' else 'fp32'}, SGD momentum 0.9) in "
                      f"PyTorch {measured['torch']} eager on {measured['device_name']}, measured by "
                      f"scripts/bench_gpu.py --parts resnet50 on {time.strftime('%Y-%m-%d')}: each phase timed by "
                      f"{'CUDA events' if args.device == 'cuda' else 'the host clock'}, the median of "
                      f"{len(measured['step_ms'])} steps after {args.warmup} of warm-up")
            describe = [args.dtbench, "predict", "--describe-model", "resnet50", "--image-size", str(size),
                        "--classes", "1000", "--dataset", f"synthetic {size}x{size}", "--batch-size", str(batch),
                        "--train-samples", "1281167", "--forward-ms", f"{ms['forward_ms']:.4f}",
                        "--backward-ms", f"{ms['backward_ms']:.4f}", "--optimizer-ms", f"{ms['optimizer_ms']:.4f}",
                        "--gpu", key, "--compute-source", source, "--output", path]
            written = subprocess.run(describe, capture_output=True, text=True, timeout=args.run_timeout)
            if written.returncode != 0:
                raise RuntimeError(f"dtbench predict --describe-model failed: {written.stderr.strip()[-1000:]}")
            results.data["resnet50"][label] = {"phases_ms": ms, "description": path, "device_name": measured["device_name"],
                                               "gpu": key, "steps": len(measured["step_ms"]),
                                               "parameters": measured["parameters"]}
        except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as e:
            results.data["errors"].append(f"resnet50 {precision}: {e}")
        results.save()
        print(f"resnet50 {precision} done", file=sys.stderr)


def check_device(args):
    """Fails at once, naming what is missing, where --device cuda cannot run."""
    if not os.access(args.dtbench, os.X_OK):
        sys.exit(f"bench_gpu: no dtbench at {args.dtbench} (build it, or pass --dtbench)")
    if args.device != "cuda":
        return
    version = subprocess.run([args.dtbench, "--version"], capture_output=True, text=True, timeout=60).stdout
    if "gpus visible: 0" in version:
        sys.exit("bench_gpu: --device cuda, but dtbench sees no GPU (dtbench --version: 'gpus visible: 0'); "
                 "run on a GPU machine, or --device cpu for a check of this script")
    probe = subprocess.run([args.python, "-c", "import torch; print(torch.cuda.is_available())"],
                           capture_output=True, text=True, timeout=120)
    if probe.stdout.strip() != "True":
        sys.exit(f"bench_gpu: --device cuda, but {args.python}'s PyTorch sees no GPU: {probe.stderr.strip()[-300:]}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dtbench", default="build/dtbench")
    parser.add_argument("--python", default=sys.executable, help="the Python whose PyTorch is the reference")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-gpu"), help="where results go (default: $OUT)")
    parser.add_argument("--models", default="resnet18,mobilenetv2")
    parser.add_argument("--batches", default="128,512")
    parser.add_argument("--precisions", default="fp32,bf16", help="fp32 and/or bf16 (bf16 = --amp bf16 --channels-last)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--steps", type=int, default=60, help="timed steps per run")
    parser.add_argument("--parts", default="eager,graph,phase_timing,loader",
                        help="of eager, graph, phase_timing, loader, table1, resnet50")
    parser.add_argument("--loader-batch", type=int, default=512)
    parser.add_argument("--loader-precision", default="bf16", choices=("fp32", "bf16"))
    parser.add_argument("--table1-batches", default="32,64,128,256,512,1024,2048,4096,8192")
    parser.add_argument("--run-timeout", type=int, default=300, help="seconds one process may take")
    parser.add_argument("--resnet50-size", type=int, default=224, help="resnet50: image size in pixels (64 or more)")
    parser.add_argument("--resnet50-batch", type=int, default=128, help="resnet50: images per step")
    args = parser.parse_args(argv)
    check_device(args)
    results = Results(args)
    results.save()
    parts = {"eager": measure_eager, "graph": measure_graphs, "phase_timing": measure_phase_timing,
             "loader": measure_loader, "table1": measure_table1, "resnet50": measure_resnet50}
    for part in args.parts.split(","):
        if part not in parts:
            sys.exit(f"bench_gpu: unknown part '{part}' (--parts takes {', '.join(parts)})")
        parts[part](args, results)
    print(results.markdown())
    return 1 if results.data["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
