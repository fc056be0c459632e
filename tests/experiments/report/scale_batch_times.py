"""Multiplies every time (each *_s column) of a run directory's batches.csv by a factor, in place: the
report tests' way to make a fixture run slower or faster. Usage: scale_batch_times.py RUN_DIR FACTOR"""
import csv
import sys

run, factor = sys.argv[1], float(sys.argv[2])
with open(f"{run}/batches.csv", newline="") as f:
    rows = list(csv.DictReader(f))
with open(f"{run}/batches.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=rows[0].keys())
    w.writeheader()
    for row in rows:
        for k in row:
            if k.endswith("_s") and row[k] != "":
                row[k] = repr(float(row[k]) * factor)
        w.writerow(row)
