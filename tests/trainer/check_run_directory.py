"""Reads a dtbench run directory the way its users do (pandas) and checks the contract of
docs/run-directory.md: columns, types, row counts, and that the figures agree with each other
(step_profile.json through check_step_profile.py, beside this file).
Usage: /usr/bin/python3 check_run_directory.py DIR --epochs E --steps S [--cluster-file F --link-rate HOST=BPS...]
(--cluster-file: the run was on the emulated cluster F, its hosts' links at the --link-rate given; else off it)"""
import argparse
import json
import math
import sys

import pandas as pd

from check_step_profile import problems as step_profile_problems

parser = argparse.ArgumentParser()
parser.add_argument("dir")
parser.add_argument("--epochs", type=int, required=True)
parser.add_argument("--steps", type=int, required=True)
parser.add_argument("--cluster-file")
parser.add_argument("--link-rate", action="append", default=[], help="HOST=BPS, or HOST=null for an unshaped link")
args = parser.parse_args()
d = args.dir
problems = []


def check(ok, what):
    if not ok:
        problems.append(what)


history = pd.read_csv(f"{d}/train_history.log")
check(list(history.columns) == ["Timestamp", "Type", "Epoch", "Step", "Loss", "Accuracy", "ImagesPerSec"],
      f"train_history.log columns {list(history.columns)}")
check(history["Timestamp"].dtype == float, "Timestamp is not float")
check(set(history["Type"]) == {"Batch", "Epoch"}, f"Type values {set(history['Type'])}")
batches = history[history["Type"] == "Batch"]
epochs = history[history["Type"] == "Epoch"]
check(len(batches) == args.epochs * args.steps, f"{len(batches)} Batch rows")
check(len(epochs) == args.epochs, f"{len(epochs)} Epoch rows")
check(list(batches["Step"]) == list(range(1, args.epochs * args.steps + 1)), "Batch Step is not the global step")
check((epochs["Step"] == args.steps).all(), "Epoch Step is not the steps in the epoch")
check(batches["Accuracy"].between(0, 1).all() and epochs["Accuracy"].between(0, 1).all(), "accuracy outside [0, 1]")
duration = history["Timestamp"].max() - history["Timestamp"].min()
check(duration > 0, "run duration Timestamp.max() - Timestamp.min() is not positive")

rows = pd.read_csv(f"{d}/batches.csv")
want = ["rank", "epoch", "step", "samples", "data_s", "h2d_s", "forward_s", "backward_s", "comm_total_s",
        "comm_exposed_s", "optimizer_s", "step_s", "bytes_sent", "bytes_recv", "compress_s",
        "grad_collectives"]
check(list(rows.columns) == want, f"batches.csv columns {list(rows.columns)}")
check(len(rows) == args.epochs * args.steps, f"{len(rows)} batches.csv rows")
phases = rows[["data_s", "h2d_s", "forward_s", "backward_s", "comm_exposed_s", "optimizer_s"]].sum(axis=1)
check((rows["step_s"] >= phases).all(), "a step_s is shorter than its phases")

with open(f"{d}/summary.json") as f:
    summary = json.load(f)
check(summary["status"] == "completed", f"status {summary['status']}")
check(math.isfinite(summary["param_checksum"]), "param_checksum not finite")
check(len(summary["epochs"]) == args.epochs, "summary epochs")
for e in summary["epochs"]:
    mine = rows[rows["epoch"] == e["epoch"]]
    t = (mine["step_s"] - mine["data_s"]).sum()
    check(abs(e["train_time_s"] - t) < 1e-6 * max(1.0, t), f"epoch {e['epoch']} train_time_s {e['train_time_s']} != {t}")
with open(f"{d}/config.json") as f:
    config = json.load(f)
for key in ("model", "seed", "batch_size", "lr", "environment", "link_rate_bps", "cluster_file", "devices"):
    check(key in config, f"config.json lacks {key}")
# The device of every rank: one entry per rank, the CPU's model and cores, the host and its boot id
# (the machine's, as the kernel gives it).
devices = config.get("devices", [])
check(len(devices) == config.get("world_size", 1), f"devices {devices!r} is not one entry per rank")
with open("/proc/sys/kernel/random/boot_id") as f:
    boot_id = f.read().strip()
for device in devices:
    check(device.get("type") == "cpu", f"device type {device.get('type')!r}")
    check(isinstance(device.get("model"), str) and device["model"] != "", f"device model {device.get('model')!r}")
    check(device.get("boot_id") == boot_id, f"boot_id {device.get('boot_id')!r}, the kernel says {boot_id!r}")
    check(isinstance(device.get("cores"), int) and device["cores"] >= 1, f"cores {device.get('cores')!r}")
    check(device.get("threads") == 2, f"threads {device.get('threads')!r} (the run's --threads 2)")
# The emulated cluster's links: an object {host: bit/s or null} over the run's hosts and the file
# they come from, or both null off the cluster.
rates, cluster_file = config.get("link_rate_bps"), config.get("cluster_file")
check((rates is None) == (cluster_file is None), f"link_rate_bps {rates} with cluster_file {cluster_file}")
if rates is not None:
    check(isinstance(cluster_file, str) and cluster_file != "", f"cluster_file {cluster_file!r}")
    check(isinstance(rates, dict) and len(rates) > 0, f"link_rate_bps {rates!r} is not an object of hosts")
    for host, rate in (rates.items() if isinstance(rates, dict) else []):
        check(rate is None or (isinstance(rate, (int, float)) and not isinstance(rate, bool) and rate > 0),
              f"link_rate_bps[{host!r}] = {rate!r}")
    if isinstance(rates, dict) and "hosts" in config:
        check(set(rates) == set(config["hosts"]), f"link_rate_bps hosts {sorted(rates)} != hosts {config['hosts']}")
want_rates = None
if args.cluster_file is not None:
    want_rates = {}
    for item in args.link_rate:
        host, _, rate = item.partition("=")
        want_rates[host] = None if rate == "null" else int(rate)
check(cluster_file == args.cluster_file, f"cluster_file {cluster_file!r}, want {args.cluster_file!r}")
check(rates == want_rates, f"link_rate_bps {rates!r}, want {want_rates!r}")

# step_profile.json: rank 0's gradient ready times over every step but the run's first.
problems += step_profile_problems(d, args.epochs * args.steps - 1)

if problems:
    print("run directory check FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"run directory {d}: train_history.log, batches.csv, summary.json, config.json and step_profile.json read "
      f"with pandas {pd.__version__}: OK ({len(history)} history rows, run of {duration:.2f} s)")
