"""Reads a dtbench run directory the way its users do (pandas) and checks the contract of
docs/run-directory.md: columns, types, row counts, and that the figures agree with each other.
Usage: /usr/bin/python3 check_run_directory.py DIR --epochs E --steps S"""
import argparse
import json
import math
import sys

import pandas as pd

parser = argparse.ArgumentParser()
parser.add_argument("dir")
parser.add_argument("--epochs", type=int, required=True)
parser.add_argument("--steps", type=int, required=True)
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
        "comm_exposed_s", "optimizer_s", "step_s", "bytes_sent", "bytes_recv"]
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
for key in ("model", "seed", "batch_size", "lr", "environment"):
    check(key in config, f"config.json lacks {key}")

if problems:
    print("run directory check FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"run directory {d}: train_history.log, batches.csv, summary.json and config.json read with pandas "
      f"{pd.__version__}: OK ({len(history)} history rows, run of {duration:.2f} s)")
