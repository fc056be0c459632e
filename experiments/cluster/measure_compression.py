"""The analysis of measure_compression.sh: measured and predicted step times per link rate and
compression, and the break-even rates. Usage: measure_compression.py DTBENCH OUT "RATES" "COMPRESSIONS" REPEATS [RUN_SUFFIX HARDWARE_SUFFIX [WORLD]]
Writes OUT/compression.md and prints it. Debian's /usr/bin/python3 (csv, json, math, statistics)."""
import csv
import json
import math
import os
import statistics
import subprocess
import sys

FIRST_STEP = 4  # steps 1-2 are uncompressed (--compress-start 2) and step 3 is PowerSGD's first


def rate_bps(rate):
    for unit, scale in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1)):
        if rate.endswith(unit):
            return float(rate[: -len(unit)]) * scale
    raise SystemExit(f"unknown rate {rate}")


def measured(run):
    """Rank 0's median step (step_s - data_s), compress_s and bytes_sent over steps FIRST_STEP..; None if absent."""
    path = os.path.join(run, "batches.csv")
    if not os.path.exists(path):
        return None
    rows = [r for r in csv.DictReader(open(path)) if r["rank"] == "0" and int(r["step"]) >= FIRST_STEP]
    if not rows:
        return None
    return {
        "step": statistics.median(float(r["step_s"]) - float(r["data_s"]) for r in rows),
        "compress": statistics.median(float(r.get("compress_s") or 0) for r in rows),
        "exposed": statistics.median(float(r["comm_exposed_s"]) for r in rows),
        "bytes": statistics.median(int(r["bytes_sent"]) for r in rows),
    }


def predicted(dtbench, run, hardware, world):
    """The predicted step at `world` (the step_breakdown table's `step` row), or None."""
    if not (os.path.exists(run) and os.path.exists(hardware)):
        return None
    result = subprocess.run([dtbench, "predict", run, "--hardware", hardware, "--world", str(world), "--format", "csv",
                             "--table", "step_breakdown"], capture_output=True, text=True)
    if result.returncode != 0:
        return "failed: " + result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "failed"
    for row in csv.DictReader(result.stdout.splitlines()):
        if row.get("what") == "step":
            return float(row["duration_s"])
    return None


def predicted_from(dtbench, out, source_rate, c, suffix, hardware, world, repeats):
    """The median over the repeats' runs at `source_rate` of the step each predicts at `hardware`'s rate
    (one input run's compute varies by a few per cent from repeat to repeat); a message if none did."""
    found = [predicted(dtbench, os.path.join(out, "train", f"{source_rate}-{c}{suffix}-r{k}"), hardware, world)
             for k in range(1, repeats + 1)]
    steps = [p for p in found if isinstance(p, float)]
    if steps:
        return statistics.median(steps)
    return next((p for p in found if p), None)


def crossing(rates, a, b):
    """Where step times a and b (lists over rates, None allowed) cross, interpolated in log rate."""
    points = [(rate_bps(r), x - y) for r, x, y in zip(rates, a, b) if x is not None and y is not None]
    for (r0, d0), (r1, d1) in zip(points, points[1:]):
        if d0 == 0:
            return r0
        if d0 * d1 < 0:
            t = d0 / (d0 - d1)
            return math.exp(math.log(r0) + t * (math.log(r1) - math.log(r0)))
    if not points:
        return None
    return "first faster throughout" if all(d < 0 for _, d in points) else (
        "second faster throughout" if all(d > 0 for _, d in points) else None)


def main():
    dtbench, out, rates, compressions, repeats = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split(), int(sys.argv[5])
    suffix = sys.argv[6] if len(sys.argv) > 6 else ""
    hw_suffix = sys.argv[7] if len(sys.argv) > 7 else ""
    world = int(sys.argv[8]) if len(sys.argv) > 8 else 2
    rates = sorted(rates, key=rate_bps)
    top = rates[-1]
    lines = ["# Gradient compression on the emulated cluster", "",
             f"Rank 0's step (step_s - data_s) and compress_s, medians over steps {FIRST_STEP}-8 of each run, then the "
             f"median (min-max) of {repeats} repeats; predicted: `dtbench predict` from each compression's runs at {top} "
             f"(their compute and their own compress_s) on each rate's calibrated hardware file (world {world}), the "
             f"median of the {repeats} repeats' predictions.", "",
             "| rate | compress | step_s | compress_s | exposed_s | bytes_sent/step | predicted step_s | error |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    table = {}
    per_repeat = {}  # (rate, compression): each repeat's step (None where it did not run)
    for rate in rates:
        for c in compressions:
            runs = [measured(os.path.join(out, "train", f"{rate}-{c}{suffix}-r{k}")) for k in range(1, repeats + 1)]
            per_repeat[(rate, c)] = [m["step"] if m else None for m in runs]
            runs = [m for m in runs if m]
            pred = predicted_from(dtbench, out, top, c, suffix, os.path.join(out, "hw", f"{rate}{hw_suffix}.json"),
                                  world, repeats)
            if not runs:
                lines.append(f"| {rate} | {c} | no run | | | | {pred if pred is not None else ''} | |")
                table[(rate, c)] = (None, pred if isinstance(pred, float) else None)
                continue
            steps = [m["step"] for m in runs]
            step = statistics.median(steps)
            error = f"{(pred - step) / step * 100:+.1f} %" if isinstance(pred, float) else ""
            predicted_cell = f"{pred:.3f}" if isinstance(pred, float) else (pred or "")
            lines.append(f"| {rate} | {c} | {step:.3f} ({min(steps):.3f}-{max(steps):.3f}) | "
                         f"{statistics.median(m['compress'] for m in runs):.4f} | "
                         f"{statistics.median(m['exposed'] for m in runs):.3f} | "
                         f"{int(statistics.median(m['bytes'] for m in runs))} | {predicted_cell} | {error} |")
            table[(rate, c)] = (step, pred if isinstance(pred, float) else None)
    lines += ["", "Break-even rates (where the two step times cross, interpolated in log rate; measured from the "
              "medians, then from each repeat's own runs alone, which shows how well the repeats fix it):", "",
              "| first | second | measured | each repeat | predicted |", "|---|---|---|---|---|"]
    for i, a in enumerate(compressions):
        for b in compressions[i + 1:]:
            cells = []
            for which in (0, 1):
                x = crossing(rates, [table[(r, a)][which] for r in rates], [table[(r, b)][which] for r in rates])
                cells.append(f"{x / 1e6:.0f} Mbit/s" if isinstance(x, float) else (x or "none"))
            each = []
            for k in range(repeats):
                x = crossing(rates, [per_repeat[(r, a)][k] for r in rates], [per_repeat[(r, b)][k] for r in rates])
                each.append(f"{x / 1e6:.0f}" if isinstance(x, float) else (x or "none"))
            lines.append(f"| {a} | {b} | {cells[0]} | {', '.join(each)} | {cells[1]} |")
    # The crossing as predicted from every rate's runs in turn: how much it depends on the one rate a
    # user measured at (each input run's compute carries that rate's load on the shared cores).
    if len(rates) > 1 and len(compressions) > 1:
        lines += ["", f"Predicted break-even rates from the runs at each rate in turn (the median of the {repeats} "
                  "repeats' predictions at every rate; the measured ones are in the table above):", "",
                  "| input rate | " + " | ".join(f"{a} / {b}" for i, a in enumerate(compressions)
                                               for b in compressions[i + 1:]) + " |",
                  "|---|" + "---|" * (len(compressions) * (len(compressions) - 1) // 2)]
        for source in rates:
            pred = {(rate, c): predicted_from(dtbench, out, source, c, suffix,
                                              os.path.join(out, "hw", f"{rate}{hw_suffix}.json"), world, repeats)
                    for rate in rates for c in compressions}
            cells = []
            for i, a in enumerate(compressions):
                for b in compressions[i + 1:]:
                    x = crossing(rates, [pred[(r, a)] if isinstance(pred[(r, a)], float) else None for r in rates],
                                 [pred[(r, b)] if isinstance(pred[(r, b)], float) else None for r in rates])
                    cells.append(f"{x / 1e6:.0f} Mbit/s" if isinstance(x, float) else (x or "none"))
            lines.append(f"| {source} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, f"compression{suffix}.md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
