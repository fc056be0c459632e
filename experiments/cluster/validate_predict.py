"""Analysis step of validate_predict.sh: predictions against the median of measured repeats.

Usage: /usr/bin/python3 validate_predict.py DTBENCH OUT REPEATS. Writes OUT/validation.md (and the
fitted hardware files OUT/hw-RATE-BACKEND.json, the repeats' medians OUT/allreduce/median-*.csv).
Only the calibration launches (cal-*.csv) are fitted; every row compared here comes from other launches.
"""
import csv
import glob
import io
import json
import os
import re
import statistics
import subprocess
import sys

dtbench, out, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = []


def run(args):
    done = subprocess.run([dtbench, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"dtbench {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def size_label(b):
    for unit, n in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= n and b % n == 0:
            return f"{b // n}{unit}"
    return str(b)


def summary(errors):
    if not errors:
        return "", ""
    return f"{100 * statistics.mean(abs(e) for e in errors):.1f}%", f"{100 * max(abs(e) for e in errors):.1f}%"


# 1. Hardware files from the calibration launches only.
hardware = {}
for cal in sorted(glob.glob(f"{out}/allreduce/cal-*.csv")):
    rate, backend = re.match(r"cal-(.+)-(gloo|mpi)\.csv$", os.path.basename(cal)).groups()
    path = f"{out}/hw-{rate}-{backend}.json"
    run(["predict", "--calibrate", cal, "--output", path, "--format", "csv"])
    hardware[(rate, backend)] = path

lines.append("## Fitted links (calibration launches: ring and native over 2 nodes, not compared below)\n")
lines.append("| rate | backend | bandwidth Gbit/s | latency us | native efficiency | fit mean / worst |")
lines.append("|---|---|---|---|---|---|")
for (rate, backend), path in sorted(hardware.items()):
    h = json.load(open(path))
    c = h.get("calibration", {})
    lines.append(f"| {rate} | {backend} | {h['inter_node']['bandwidth_gbit_s']:.4f} | {h['inter_node']['latency_us']:.1f} | "
                 f"{h['native_efficiency'].get(backend, 1):.3f} | {100 * c.get('mean_abs_error', 0):.1f}% / "
                 f"{100 * c.get('worst_abs_error', 0):.1f}% |")

# 2. All-reduce: the median of the repeats against the prediction on that rate's and backend's hardware.
groups = {}
for path in glob.glob(f"{out}/allreduce/*-r[0-9]*.csv"):
    m = re.match(r"(.+)-(gloo|mpi)-n(\d+)-r(\d+)\.csv$", os.path.basename(path))
    if m:
        groups.setdefault(m.groups()[:3], []).append(path)
lines.append("\n## All-reduce time: predicted vs the median of the repeats\n")
lines.append("Per rate, backend, topology and nodes: mean and worst |error| over sizes from 1 MiB (and over all "
             "sizes), with the repeats' largest spread ((max − min) / median) over the same sizes.\n")
lines.append("| rate | backend | topology | nodes | repeats | from 1 MiB: mean | worst | spread | all sizes: mean | worst |")
lines.append("|---|---|---|---|---|---|---|---|---|---|")
pooled = {}
detail = []
for (rate, backend, nodes), paths in sorted(groups.items(), key=lambda g: (g[0][0], g[0][1], int(g[0][2]))):
    if (rate, backend) not in hardware:
        continue
    rows = {}
    header = None
    for path in paths:
        reader = csv.DictReader(open(path))
        header = reader.fieldnames
        for r in reader:
            rows.setdefault((r["topology"], int(r["size"])), []).append(r)
    median_path = f"{out}/allreduce/median-{rate}-{backend}-n{nodes}.csv"
    spread = {}
    with open(median_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        for key, rs in sorted(rows.items()):
            times = [float(r["time_us"]) for r in rs]
            med = statistics.median(times)
            spread[key] = ((max(times) - min(times)) / med, len(times))
            row = dict(rs[0])
            row["time_us"] = med
            w.writerow(row)
    predicted = csv.DictReader(io.StringIO(run(["predict", "--allreduce", median_path, "--hardware",
                                                hardware[(rate, backend)], "--format", "csv",
                                                "--table", "allreduce_model"])))
    by_topology = {}
    for p in predicted:
        key = (p["topology"], int(p["size"]))
        error = float(p["error"])
        by_topology.setdefault(p["topology"], []).append((key[1], error, spread[key][0], spread[key][1]))
        detail.append((rate, backend, nodes, p["topology"], key[1], float(p["measured_s"]), float(p["predicted_s"]),
                       error, spread[key][0]))
    for topology, items in sorted(by_topology.items()):
        large = [e for s, e, _, _ in items if s >= 1 << 20]
        mean_l, worst_l = summary(large)
        mean_a, worst_a = summary([e for _, e, _, _ in items])
        sp = max((sp for s, _, sp, _ in items if s >= 1 << 20), default=0)
        n = min(k for *_, k in items)
        lines.append(f"| {rate} | {backend} | {topology} | {nodes} | {n} | {mean_l} | {worst_l} | {100 * sp:.1f}% | "
                     f"{mean_a} | {worst_a} |")
        pooled.setdefault((rate, backend), []).extend(large)
lines.append("\n| rate | backend | rows from 1 MiB | mean |error| | worst |")
lines.append("|---|---|---|---|---|")
everything = []
for (rate, backend), errors in sorted(pooled.items()):
    everything += errors
    mean, worst = summary(errors)
    lines.append(f"| {rate} | {backend} | {len(errors)} | {mean} | {worst} |")
mean, worst = summary(everything)
lines.append(f"| all | all | {len(everything)} | {mean} | {worst} |")

# 3. Training: Table 1's T predicted from each input run against the median T of the repeats.
def epoch_time(run_dir):
    rows = list(csv.DictReader(open(f"{run_dir}/batches.csv")))
    last = max(int(r["epoch"]) for r in rows)
    per_rank, compute = {}, []
    for r in rows:
        if int(r["epoch"]) != last:
            continue
        per_rank[r["rank"]] = per_rank.get(r["rank"], 0) + float(r["step_s"]) - float(r["data_s"])
        compute.append(float(r["step_s"]) - float(r["data_s"]) - float(r["comm_exposed_s"]))
    return max(per_rank.values()), statistics.mean(compute)


lines.append("\n## Training step: Table 1's T predicted vs the median of the repeats (2 nodes, gloo ring)\n")
lines.append("Last columns: each run's mean compute per step (step_s − data_s − comm_exposed_s), and the error "
             "left when the prediction's compute is replaced by the repeats' own (steps × the difference): what "
             "the network and overlap model gets wrong, with the CPU contention on the shared cores taken out.\n")
lines.append("| model | rate | input run | repeats | measured T median s | spread | predicted T s | error | "
             "compute/step: input, repeats | error with the repeats' compute |")
lines.append("|---|---|---|---|---|---|---|---|---|---|")
train_errors, network_errors = [], []
for model in ("resnet18", "mobilenetv2"):
    for rate in ("1gbit", "200mbit", "50mbit"):
        dirs = [d for d in sorted(glob.glob(f"{out}/train/{model}-{rate}-r*"))
                if os.path.isdir(d) and '"completed"' in open(f"{d}/summary.json").read()]
        if not dirs or (rate, "gloo") not in hardware:
            continue
        measured = [epoch_time(d) for d in dirs]
        ts = [t for t, _ in measured]
        med = statistics.median(ts)
        compute_rep = statistics.mean(c for _, c in measured)
        for label in ("1rank", "2nodes-1gbit"):
            source = f"{out}/train/{model}-input-{label}"
            if not os.path.isfile(f"{source}/summary.json"):
                continue
            table = csv.DictReader(io.StringIO(run(["predict", source, "--hardware", hardware[(rate, "gloo")],
                                                    "--world", "2", "--format", "csv", "--table", "time_speedup"])))
            row = next(table)
            predicted, steps = float(row["T_s"]), int(row["steps"])
            error = predicted / med - 1
            if label == "2nodes-1gbit":
                train_errors.append(error)
            _, compute_in = epoch_time(source)
            adjusted = (predicted + steps * (compute_rep - compute_in)) / med - 1
            if label == "2nodes-1gbit":
                network_errors.append(adjusted)
            lines.append(f"| {model} | {rate} | {label} | {len(ts)} | {med:.3f} | {100 * (max(ts) - min(ts)) / med:.1f}% | "
                         f"{predicted:.3f} | {100 * error:+.1f}% | {compute_in:.3f}, {compute_rep:.3f} | "
                         f"{100 * adjusted:+.1f}% |")
mean, worst = summary(train_errors)
lines.append(f"\nFrom the 2-node input run: mean |error| {mean}, worst {worst} over {len(train_errors)} configurations.")
mean, worst = summary(network_errors)
lines.append(f"With the repeats' own compute: mean |error| {mean}, worst {worst}.")

lines.append("\n## Every all-reduce row\n")
lines.append("| rate | backend | nodes | topology | size | measured s | predicted s | error | spread |")
lines.append("|---|---|---|---|---|---|---|---|---|")
for rate, backend, nodes, topology, size, m, p, e, sp in sorted(detail):
    lines.append(f"| {rate} | {backend} | {nodes} | {topology} | {size_label(size)} | {m:.6f} | {p:.6f} | "
                 f"{100 * e:+.1f}% | {100 * sp:.1f}% |")
with open(f"{out}/validation.md", "w") as f:
    f.write("\n".join(lines) + "\n")
print(f"validate_predict: {out}/validation.md")
