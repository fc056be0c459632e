"""Figures of `dtbench report --plots DIR`.

Usage: /usr/bin/python3 plots.py FIGURES_JSON OUT_DIR

FIGURES_JSON is the data file the report writes (DIR/figures.json); OUT_DIR must exist.
For each figure with data this writes OUT_DIR/NAME.png (150 dpi) and OUT_DIR/NAME.pdf and
prints each written path on its own line. Figures: `speedup`, `compute_comm`,
`traffic_<id>` (one per traffic entry; other characters than [A-Za-z0-9._-] in the id become
`_`, a repeated name gets `_2`, `_3`, ...), `batch_time_cdf`, `curves`, `throughput`,
`link_throughput_<id>` (one per run with a traffic timeline, named like the traffic maps), and
from the packet captures (`wire`, one entry per run with wire data): `wire_heatmap_<id>`,
`wire_throughput_<id>`, `wire_flows_<id>` (named like the traffic maps) and, across those runs,
`wire_batch_size_effect`. From job traces (`traces`, one entry per sacct file or cluster trace, all
drawn on the same axes, one colour each): `trace_duration_cdf`, `trace_queue_delay_cdf`,
`trace_final_states` and `trace_gpu_time_by_size`.
A speedup point with `speedup_pm` and a compute_comm bar with `T_pm_s` (Table 1's 95 % intervals)
get an error bar of ± that; points and bars without one are drawn without.
A figure whose list is absent or empty is skipped silently, as is a traffic entry with an
empty matrix. An optional key given as null counts as absent; the curves' series may hold
nulls, which are left out. A curve with `segments` (a run resized by --resume) is drawn a segment
a stretch, each from its `first_batch` (an index into `batches`) in a line style of its own and named
in the legend, so that no line joins two worlds unmarked. Exit status 0 on success; on unusable input
(missing file, bad JSON, wrong types or shapes) or an unwritable output file, one line starting with
`plots: ` goes to stderr and the status is 1. The whole input is checked before anything is drawn, so a bad
file writes no figures. Only the standard library, numpy and matplotlib (Agg) are used.
"""
import json
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import MaxNLocator, NullFormatter, StrMethodFormatter  # noqa: E402


class InputError(Exception):
    pass


# figures.json's "title_suffix" (dtbench predict: "predicted on dgx-a100-hdr200"), added to the titles of
# the speedup and compute_comm figures; "" when absent.
TITLE_SUFFIX = ""


def titled(title):
    return f"{title}: {TITLE_SUFFIX}" if TITLE_SUFFIX else title


# Schema: a list holds [element spec], a dict maps keys to specs ("key?" = optional).
# Curve series may hold nulls (points left out); elsewhere numbers must be finite.
NUM, NUM_OR_NULL, STR, BOOL = "number", "number or null", "string", "boolean"
_SERIES = [NUM_OR_NULL]
SCHEMA = {
    "title_suffix?": STR,
    "speedup?": [{"setup": STR, "model": STR, "batch": NUM,
                  "points": [{"N": NUM, "speedup": NUM, "extrapolated?": BOOL, "speedup_pm?": NUM}]}],
    "compute_comm?": [{"label": STR, "compute_s": NUM, "comm_exposed_s": NUM,
                       "overlap_s?": NUM, "T_s?": NUM, "T_pm_s?": NUM, "est_compute_s?": NUM}],
    "traffic?": [{"id": STR, "kind?": STR, "matrix": [[NUM]]}],
    "batch_times?": [{"id": STR, "step_s": [NUM]}],
    "curves?": [{"id": STR,
                 "batches?": {"t_s": _SERIES, "bytes?": _SERIES, "loss?": _SERIES,
                              "accuracy?": _SERIES},
                 "epochs?": {"t_s": _SERIES, "bytes?": _SERIES, "test_accuracy?": _SERIES},
                 "segments?": [{"label": STR, "first_batch": NUM}]}],
    "throughput?": [{"label": STR, "images_per_s": [NUM]}],
    "link_throughput?": [{"id": STR, "links": [{"src": NUM, "dst": NUM, "t_s": [NUM],
                                                 "GBps": [NUM]}]}],
    "wire?": [{"id": STR, "batch": NUM, "hosts": [STR], "wire_GB": [[NUM]], "counted_GB?": [[NUM]],
               "capture_s": NUM, "window": {"start_s": NUM, "end_s": NUM, "from": STR},
               "links": [{"name": STR, "t_s": [NUM], "wire_GBps": [NUM], "counted_GBps?": [NUM]}],
               "flows": [{"label": STR, "class": STR, "t_s": [NUM], "bytes": [NUM]}],
               "flows_total?": NUM}],
    "traces?": [{"name": STR, "kind": STR,
                 "duration": {"x_s": [NUM], "jobs_share": _SERIES, "gpu_time_share": _SERIES},
                 "queue": {"x_s": [NUM], "jobs_share": _SERIES},
                 "sizes": [STR], "states": [{"state": STR, "jobs": [NUM], "gpu_hours": [NUM]}]}],
}


def json_type(value):
    return {dict: "object", list: "list", str: "string", bool: "boolean",
            type(None): "null"}.get(type(value), "number")


def check(value, spec, path):
    """Raise InputError naming `path` where `value` does not follow `spec`.
    An optional key whose value is null is removed: it counts as absent."""
    if isinstance(spec, list):
        if not isinstance(value, list):
            raise InputError(f"{path} must be a list, got {json_type(value)}")
        for i, item in enumerate(value):
            check(item, spec[0], f"{path}[{i}]")
    elif isinstance(spec, dict):
        if not isinstance(value, dict):
            raise InputError(f"{path} must be an object, got {json_type(value)}")
        for key, sub in spec.items():
            name = key.rstrip("?")
            if key.endswith("?") and name in value and value[name] is None:
                del value[name]
            if name in value:
                check(value[name], sub, f"{path}.{name}" if path else name)
            elif not key.endswith("?"):
                raise InputError(f"{path} has no \"{name}\"")
    else:
        num = isinstance(value, (int, float)) and not isinstance(value, bool) \
            and math.isfinite(value)
        ok = {STR: isinstance(value, str), BOOL: isinstance(value, bool), NUM: num,
              NUM_OR_NULL: num or value is None}[spec]
        if not ok:
            want = spec if spec in (STR, BOOL) else "finite " + spec
            raise InputError(f"{path} must be a {want}, got {json.dumps(value)[:40]}")


def check_shapes(data):
    for i, e in enumerate(data.get("speedup", [])):
        for j, p in enumerate(e["points"]):
            if p.get("speedup_pm", 0) < 0:
                raise InputError(f"speedup[{i}].points[{j}].speedup_pm is negative (a half-width)")
    for i, e in enumerate(data.get("compute_comm", [])):
        if e.get("T_pm_s", 0) < 0:
            raise InputError(f"compute_comm[{i}].T_pm_s is negative (a half-width)")
    for i, t in enumerate(data.get("traffic", [])):
        if len({len(row) for row in t["matrix"]}) > 1:
            raise InputError(f"traffic[{i}].matrix rows differ in length")
    for i, c in enumerate(data.get("curves", [])):
        for part in ("batches", "epochs"):
            lengths = {k: len(v) for k, v in c.get(part, {}).items()}
            if len(set(lengths.values())) > 1:
                raise InputError(f"curves[{i}].{part} series differ in length: {lengths}")
        starts = [s["first_batch"] for s in c.get("segments", [])]
        if starts != sorted(starts) or any(f < 0 or f != int(f) for f in starts):
            raise InputError(f"curves[{i}].segments' first_batch must be whole, from 0, ascending: {starts}")
    for i, r in enumerate(data.get("link_throughput", [])):
        for j, link in enumerate(r["links"]):
            if len(link["t_s"]) != len(link["GBps"]):
                raise InputError(f"link_throughput[{i}].links[{j}]: t_s and GBps differ in length")
    for i, w in enumerate(data.get("wire", [])):
        n = len(w["hosts"])
        for key in ("wire_GB", "counted_GB"):
            if key in w and (len(w[key]) != n or any(len(row) != n for row in w[key])):
                raise InputError(f"wire[{i}].{key} is not {n} x {n} (one row and column per host)")
        for j, link in enumerate(w["links"]):
            lengths = {k: len(link[k]) for k in ("t_s", "wire_GBps", "counted_GBps") if k in link}
            if len(set(lengths.values())) > 1:
                raise InputError(f"wire[{i}].links[{j}] series differ in length: {lengths}")
        for j, flow in enumerate(w["flows"]):
            if len(flow["t_s"]) != len(flow["bytes"]):
                raise InputError(f"wire[{i}].flows[{j}]: t_s and bytes differ in length")
    for i, t in enumerate(data.get("traces", [])):
        for part, keys in (("duration", ("x_s", "jobs_share", "gpu_time_share")), ("queue", ("x_s", "jobs_share"))):
            if len({len(t[part][k]) for k in keys}) > 1:
                raise InputError(f"traces[{i}].{part} series differ in length")
        for j, r in enumerate(t["states"]):
            if len(r["jobs"]) != len(t["sizes"]) or len(r["gpu_hours"]) != len(t["sizes"]):
                raise InputError(f"traces[{i}].states[{j}] needs one value per size")


def palette(n):
    """n distinct colours: tab10, tab20, then evenly spaced viridis."""
    if n <= 20:
        cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
        return [cmap(i) for i in range(n)]
    return [plt.get_cmap("viridis")(i / (n - 1)) for i in range(n)]


def legend(ax, handles, **kw):
    """Inside the axes for a few entries, outside on the right for many."""
    n = len(handles)
    if n > 8:
        kw.update(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    ax.legend(handles=handles, fontsize="small" if n > 4 else None, **kw)


def x_labels(ax, labels):
    ax.set_xticks(range(len(labels)))
    long = max((len(s) for s in labels), default=0) > 12 or len(labels) > 8
    ax.set_xticklabels(labels, rotation=30 if long else 0, ha="right" if long else "center")


def save(fig, out_dir, name):
    for ext in ("png", "pdf"):
        path = os.path.join(out_dir, f"{name}.{ext}")
        kw = {"dpi": 150} if ext == "png" else {"metadata": {"CreationDate": None}}
        try:
            fig.savefig(path, bbox_inches="tight", **kw)
        except OSError as e:
            raise InputError(f"cannot write {path}: {e.strerror or e}")
        print(path, flush=True)
    plt.close(fig)


def fig_speedup(entries, out_dir):
    fig, ax = plt.subplots(figsize=(7, 5))
    series = sorted(entries, key=lambda e: (e["model"], e["setup"], e["batch"]))
    all_n, hollow, bars = set(), False, False
    for e, color in zip(series, palette(len(series))):
        pts = sorted(e["points"], key=lambda p: p["N"])
        n = np.array([p["N"] for p in pts], float)
        s = np.array([p["speedup"] for p in pts], float)
        ext = np.array([p.get("extrapolated", False) for p in pts], bool)
        all_n.update(n.tolist())
        hollow |= bool(ext.any())
        ax.plot(n, s, "-", color=color, label=f"{e['model']} {e['setup']} B={e['batch']:g}")
        ax.plot(n[~ext], s[~ext], "o", color=color)
        ax.plot(n[ext], s[ext], "o", color=color, markerfacecolor="white", markeredgewidth=1.5)
        pm = [(p["N"], p["speedup"], p["speedup_pm"]) for p in pts if "speedup_pm" in p]
        if pm:
            bars = True
            px, py, pe = np.array(pm, float).T
            ax.errorbar(px, py, yerr=pe, fmt="none", ecolor=color, elinewidth=1, capsize=4, zorder=1)
    if not all_n:
        plt.close(fig)
        return
    ticks = sorted(all_n)
    lo, hi = min(ticks[0], 1.0), ticks[-1]
    ax.plot([lo, hi], [lo, hi], "--", color="grey", label="ideal (speedup = N)")
    if lo > 0 and hi / lo >= 16:  # wide range: log-log, base 2, the ideal stays a line
        # An error bar reaching 0 or below has no end on a log axis: the axis ends at half the lowest point
        # and such a bar runs out of it.
        points = [p for e in series for p in e["points"]]
        unbounded = any(p["speedup"] - p.get("speedup_pm", 0) <= 0 for p in points)
        low = min((p["speedup"] for p in points if p["speedup"] > 0), default=lo)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        if unbounded:
            ax.set_ylim(bottom=min(low, lo) / 2)
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        many = [2.0 ** k for k in range(math.ceil(math.log2(lo)), int(math.log2(hi)) + 1)]
    else:
        ax.set_ylim(bottom=0)
        many = [t for t in MaxNLocator(integer=True).tick_values(lo, hi) if lo <= t <= hi]
    ax.set_xticks(ticks if len(ticks) <= 12 else many)
    ax.xaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    handles = ax.get_legend_handles_labels()[0]
    if hollow:
        handles.append(Line2D([], [], ls="", marker="o", color="black", markerfacecolor="white",
                              label="hollow: extrapolated"))
    if bars:
        handles.append(Line2D([], [], ls="", marker="|", markersize=12, color="black",
                              label="bar: 95 % interval (speedup_pm)"))
    legend(ax, handles)
    ax.set(title=titled("Speedup T(1)/T(N) vs world size"), xlabel="world size N (ranks)",
           ylabel="speedup T(1)/T(N)")
    ax.grid(alpha=0.3)
    save(fig, out_dir, "speedup")


def compute_comm_segments(entries):
    """The bars of `compute_comm` as (bottom, height) per layer, one per entry, in entry order.

    A bar is the epoch time T = compute_s + comm_exposed_s: `compute` from 0, `exposed` on top of
    it. Overlapped communication runs during compute, so it lies inside the compute segment and
    never adds to the bar: `hidden` is the top min(overlap_s, compute_s) of `compute` (a negative
    overlap or compute counts as 0 there; `clipped` marks an overlap larger than compute). `T_s` is
    an entry's T_s where it differs from compute_s + comm_exposed_s by more than rounding (1 ms or
    0.1 %; else None): the bar stays compute + exposed, the given T_s is only marked. `T` is the epoch
    time an entry stands for, its T_s where given, else compute + exposed: where its error bar
    (T_pm_s) is centred."""
    seg = {"compute": [], "exposed": [], "hidden": [], "clipped": [], "T_s": [], "T": []}
    for e in entries:
        comp, expo = float(e["compute_s"]), float(e["comm_exposed_s"])
        over = max(float(e.get("overlap_s", 0.0)), 0.0)
        room = max(comp, 0.0)
        hidden = min(over, room)
        t = e.get("T_s")
        off = t is not None and abs(t - (comp + expo)) > max(1e-3, 1e-3 * abs(t))
        seg["compute"].append((0.0, comp))
        seg["exposed"].append((comp, expo))
        seg["hidden"].append((room - hidden, hidden))
        seg["clipped"].append(over > room)
        seg["T_s"].append(float(t) if off else None)
        seg["T"].append(float(t) if t is not None else comp + expo)
    return seg


def fig_compute_comm(entries, out_dir):
    n = len(entries)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.8 * n + 2), 5))
    x = np.arange(n)
    seg = compute_comm_segments(entries)
    for key, kw in (("compute", {"color": "tab:blue", "label": "compute"}),
                    ("exposed", {"color": "tab:red", "label": "exposed communication"})):
        bottom, height = np.array(seg[key], float).reshape(-1, 2).T
        ax.bar(x, height, 0.6, bottom=bottom, **kw)
    bottom, height = np.array(seg["hidden"], float).reshape(-1, 2).T
    if height.any():
        label = "communication hidden under compute (overlapped)"
        if any(seg["clipped"]):
            label = ("communication hidden under compute (overlapped;\n"
                     "where it exceeds compute, capped at compute)")
        ax.bar(x, height, 0.6, bottom=bottom, facecolor="none", edgecolor="tab:orange",
               linewidth=0, hatch="///", label=label)
    est = [(i, e["est_compute_s"]) for i, e in enumerate(entries) if "est_compute_s" in e]
    if est:
        xs, ys = np.array(est).T
        ax.hlines(ys, xs - 0.4, xs + 0.4, colors="black", linewidth=2, zorder=3)
    off = [(i, t) for i, t in enumerate(seg["T_s"]) if t is not None]
    if off:
        xs, ys = np.array(off).T
        ax.hlines(ys, xs - 0.4, xs + 0.4, colors="black", linewidth=1.5, linestyles="dotted",
                  zorder=3)
    pm = [(i, t, e["T_pm_s"]) for i, (e, t) in enumerate(zip(entries, seg["T"])) if "T_pm_s" in e]
    if pm:
        xs, ys, es = np.array(pm, float).T
        ax.errorbar(xs, ys, yerr=es, fmt="none", ecolor="black", elinewidth=1, capsize=5, zorder=4)
        ax.set_ylim(bottom=0)  # a bar reaching below 0 runs out of the axes
    x_labels(ax, [e["label"] for e in entries])
    ax.set(title=titled("Compute vs communication per epoch (critical rank)"),
           ylabel="seconds per epoch (s)", xlim=(-0.6, n - 0.4))
    ax.grid(axis="y", alpha=0.3)
    handles = ax.get_legend_handles_labels()[0]
    if est:
        handles.append(Line2D([], [], color="black", linewidth=2, label="estimate T(1)/N"))
    if off:
        handles.append(Line2D([], [], color="black", linewidth=1.5, linestyle="dotted",
                              label="T_s (differs from compute + exposed)"))
    if pm:
        handles.append(Line2D([], [], ls="", marker="|", markersize=12, color="black",
                              label="bar: T's 95 % interval (T_pm_s)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    save(fig, out_dir, "compute_comm")


def fig_traffic(entries, out_dir):
    used = set()
    for entry in entries:
        base = "traffic_" + re.sub(r"[^A-Za-z0-9._-]", "_", entry["id"])
        name, k = base, 2
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        if entry["matrix"] and entry["matrix"][0]:
            traffic_map(entry, out_dir, name)


def traffic_map(entry, out_dir, name):
    m = np.array(entry["matrix"], float)
    top = m.max()  # MB from 10^6 bytes, GB once cells would need five digits of MB
    scale, unit = ((1e9, "GB = 10^9 bytes") if top >= 1e10 else
                   (1e6, "MB = 10^6 bytes") if top >= 1e6 else (1.0, "bytes"))
    v = m / scale
    rows, cols = v.shape
    annotate = rows <= 16 and cols <= 16
    side = max(4.5, 0.45 * max(rows, cols) + 2) if annotate else 9.0
    fig, ax = plt.subplots(figsize=(side + 1, side))
    im = ax.imshow(v, cmap="viridis", vmin=0, vmax=v.max() or 1.0, interpolation="nearest")
    fig.colorbar(im, ax=ax, label=f"bytes sent ({unit})")
    if annotate:
        ax.set_xticks(range(cols))
        ax.set_yticks(range(rows))
        peak = v.max() or 1.0
        size = max(6, 11 - max(rows, cols) // 2)
        for (r, c), val in np.ndenumerate(v):
            text = f"{val:.0f}" if val >= 100 or scale == 1.0 else f"{val:.3g}"
            ax.text(c, r, text, ha="center", va="center", fontsize=size,
                    color="white" if val / peak < 0.6 else "black")
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    kind = f" ({entry['kind']})" if "kind" in entry else ""
    ax.set(title=f"Traffic {entry['id']}{kind}", xlabel="destination rank",
           ylabel="source rank")
    save(fig, out_dir, name)


# More runs than this in one batch-time figure become small multiples: one panel a run.
CDF_SERIES_TOGETHER = 6


def fig_batch_time_cdf_panels(entries, out_dir):
    """One small panel a run: its step-time CDF on a shared axis, the slowest-10% share in the title."""
    columns = 4
    rows = math.ceil(len(entries) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.6 * rows), sharex=True, sharey=True,
                             squeeze=False)
    values = [np.sort(np.array(e["step_s"], float)) for e in entries]
    lo = min(t[0] for t in values)
    hi = max(t[-1] for t in values)
    for ax, e, t in zip(axes.flat, entries, values):
        n = len(t)
        ax.step(np.concatenate([[t[0]], t]), np.arange(n + 1) / n, where="post", color="tab:blue")
        slowest = max(1, math.ceil(0.1 * n))
        share = t[-slowest:].sum() / t.sum() if t.sum() > 0 else 0.0
        ax.set_title(f"{e['id']}\n{n} batches, slowest 10%: {share:.0%} of time", fontsize=8)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(entries):]:
        ax.set_visible(False)
    if lo > 0 and hi / lo > 20:
        axes.flat[0].set_xscale("log")
        axes.flat[0].xaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    else:
        axes.flat[0].xaxis.set_major_locator(MaxNLocator(4))
    for ax in axes[-1]:
        ax.set_xlabel("step time (s)")
    for ax in axes[:, 0]:
        ax.set_ylabel("fraction \u2264 x")
    fig.suptitle(titled("CDF of step time, one panel a run"))
    save(fig, out_dir, "batch_time_cdf")


def fig_batch_time_cdf(entries, out_dir):
    entries = [e for e in entries if e["step_s"]]
    if not entries:
        return
    if len(entries) > CDF_SERIES_TOGETHER:
        fig_batch_time_cdf_panels(entries, out_dir)
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    lo, hi = math.inf, 0.0
    for e, color in zip(entries, palette(len(entries))):
        t = np.sort(np.array(e["step_s"], float))
        n = len(t)
        lo, hi = min(lo, t[0]), max(hi, t[-1])
        if t.sum() > 0:
            share = np.concatenate([[0.0], np.cumsum(t[::-1]) / t.sum()])
            left.plot(np.arange(n + 1) / n, share, color=color, label=e["id"])
        right.step(np.concatenate([[t[0]], t]), np.arange(n + 1) / n, where="post",
                   color=color, label=e["id"])
    left.plot([0, 1], [0, 1], "--", color="grey", label="all batches equal")
    left.axvline(0.1, color="grey", linestyle=":", linewidth=1, label="slowest 10%")
    left.set(title="Share of step time in the slowest batches", xlim=(0, 1), ylim=(0, 1.02),
             xlabel="fraction of batches, slowest first", ylabel="fraction of total step time")
    if lo > 0 and hi / lo > 20:
        right.set_xscale("log")
        right.xaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    else:
        right.xaxis.set_major_locator(MaxNLocator(6))
    right.set(title="CDF of step time", ylim=(0, 1.02), xlabel="step time (s)",
              ylabel="fraction of batches \u2264 x")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    handles = left.get_legend_handles_labels()[0]
    legend(right if len(handles) > 8 else left, handles, loc="lower right")
    save(fig, out_dir, "batch_time_cdf")


def _xy(part, xkey, ykey, xscale):
    """The points of part[xkey] / xscale against part[ykey], nulls left out."""
    if xkey not in part or ykey not in part:
        return np.empty(0), np.empty(0)
    x, y = (np.array([np.nan if v is None else v for v in part[k]], float)
            for k in (xkey, ykey))
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep] / xscale, y[keep]


SEGMENT_STYLES = ("-", "--", ":", "-.")


def _stretches(e):
    """A curve's batch series as (label, line style, series) stretches: the whole series, or one per
    segment of a resized run, from its first_batch up to the next one's."""
    b, segments = e.get("batches", {}), e.get("segments", [])
    if not segments:
        return [(None, "-", b)]
    bounds = [int(s["first_batch"]) for s in segments] + [None]
    return [(s["label"], SEGMENT_STYLES[k % len(SEGMENT_STYLES)],
             {key: values[bounds[k]:bounds[k + 1]] for key, values in b.items()})
            for k, s in enumerate(segments)]


def fig_curves(entries, out_dir):
    fig, axes = plt.subplots(2, 2, figsize=(12, 9), sharey="row")
    (loss_t, loss_b), (acc_t, acc_b) = axes
    handles, any_train, any_test = [], False, False
    for e, color in zip(entries, palette(len(entries))):
        ep = e.get("epochs", {})
        for label, style, b in _stretches(e):
            for ax, xkey, scale in ((loss_t, "t_s", 1.0), (loss_b, "bytes", 1e9)):
                x, y = _xy(b, xkey, "loss", scale)
                if len(x):
                    ax.plot(x, y, color=color, linewidth=0.9, linestyle=style)
            for ax, xkey, scale in ((acc_t, "t_s", 1.0), (acc_b, "bytes", 1e9)):
                x, y = _xy(b, xkey, "accuracy", scale)
                if len(x):
                    any_train = True
                    ax.plot(x, y, color=color, linewidth=0.6, alpha=0.6, linestyle=style)
            if label is not None:
                handles.append(Line2D([], [], color=color, linestyle=style, label=f"{e['id']} {label}"))
        for ax, xkey, scale in ((acc_t, "t_s", 1.0), (acc_b, "bytes", 1e9)):
            x, y = _xy(ep, xkey, "test_accuracy", scale)
            if len(x):
                any_test = True
                ax.plot(x, y, "o", color=color, markeredgecolor="black", markersize=6, zorder=3)
        if not e.get("segments"):
            handles.append(Line2D([], [], color=color, label=e["id"]))
    if any_train:
        handles.append(Line2D([], [], color="grey", linewidth=0.6,
                              label="thin line: batch train accuracy"))
    if any_test:
        handles.append(Line2D([], [], ls="", marker="o", color="grey", markeredgecolor="black",
                              label="markers: epoch test accuracy"))
    t_label, gb_label = "time since start (s)", "bytes sent, all ranks (GB = 10^9 bytes)"
    for ax, title, xlabel, ylabel in (
            (loss_t, "Loss vs time", t_label, "batch training loss"),
            (loss_b, "Loss vs bytes sent", gb_label, ""),
            (acc_t, "Accuracy vs time", t_label, "accuracy (fraction)"),
            (acc_b, "Accuracy vs bytes sent", gb_label, "")):
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        ax.grid(alpha=0.3)
        if not ax.lines:
            ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", color="grey")
    fig.tight_layout()
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 4),
               bbox_to_anchor=(0.5, 1.0), fontsize="small")
    save(fig, out_dir, "curves")


def fig_throughput(entries, out_dir):
    entries = [e for e in entries if e["images_per_s"]]
    if not entries:
        return
    fig, ax = plt.subplots(figsize=(max(6.0, 0.8 * len(entries) + 2), 5))
    violin, box = [], []
    for i, e in enumerate(entries):
        v = np.array(e["images_per_s"], float)
        (violin if len(v) >= 2 and np.ptp(v) > 0 else box).append((i, v))
    if violin:
        parts = ax.violinplot([v for _, v in violin], [i for i, _ in violin], widths=0.7,
                              showmedians=True)
        for body in parts["bodies"]:
            body.set(facecolor="tab:blue", edgecolor="tab:blue", alpha=0.4)
    if box:
        ax.boxplot([v for _, v in box], positions=[i for i, _ in box], widths=0.4,
                   manage_ticks=False, medianprops={"color": "tab:blue", "linewidth": 2})
    x_labels(ax, [e["label"] for e in entries])
    ax.set(title="Throughput per step", ylabel="throughput (images/s)",
           xlim=(-0.6, len(entries) - 0.4))
    ax.set_ylim(bottom=0)
    ax.grid(axis="y", alpha=0.3)
    save(fig, out_dir, "throughput")


def fig_link_throughput(entries, out_dir):
    """Per run: every link's throughput in its 10 ms bins over time (bins without bytes are 0)."""
    used = set()
    for entry in entries:
        links = [link for link in entry["links"] if link["t_s"]]
        if not links:
            continue
        base = "link_throughput_" + re.sub(r"[^A-Za-z0-9._-]", "_", entry["id"])
        name, k = base, 2
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        fig, ax = plt.subplots(figsize=(9, 4.5))
        colors = palette(len(links))
        handles = []
        for link, color in zip(links, colors):
            t = np.array(link["t_s"], float)
            ax.step(t, link["GBps"], where="post", color=color, linewidth=1)
            handles.append(Line2D([], [], color=color, label=f"{link['src']:g} \u2192 {link['dst']:g}"))
        legend(ax, handles, title="link (src \u2192 dst)")
        ax.set(title=f"Per-link throughput, 10 ms bins: {entry['id']}",
               xlabel="time since the first bin (s)", ylabel="throughput (GB/s, GB = 10^9 bytes)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        save(fig, out_dir, name)


def figure_names(entries, prefix):
    """One file name per entry: prefix + id with other characters than [A-Za-z0-9._-] as `_`."""
    used, names = set(), []
    for entry in entries:
        base = prefix + re.sub(r"[^A-Za-z0-9._-]", "_", entry["id"])
        name, k = base, 2
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        names.append(name)
    return names


def wire_matrix_panel(ax, matrix, hosts, norm, title, first):
    from matplotlib.colors import LogNorm
    m = np.array(matrix, float)
    shown = np.ma.masked_less_equal(m, 0) if isinstance(norm, LogNorm) else m
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("white")
    im = ax.imshow(shown, cmap=cmap, norm=norm, interpolation="nearest")
    n = len(hosts)
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    long = max((len(h) for h in hosts), default=0) > 8
    ax.set_xticklabels(hosts, rotation=30 if long else 0, ha="right" if long else "center")
    ax.set_yticklabels(hosts)
    if n <= 16:
        for (r, c), val in np.ndenumerate(m):
            ax.text(c, r, f"{val:.3g}" if val > 0 else "0", ha="center", va="center",
                    fontsize=max(6, 10 - n // 3), color="black" if val > 0 else "grey",
                    bbox={"facecolor": "white", "alpha": 0.6, "pad": 1, "linewidth": 0})
    ax.set(title=title, xlabel="destination host", ylabel="source host" if first else "")
    return im


def fig_wire_heatmap(entry, out_dir, name):
    """Source x destination host bytes (GB), log colour scale; the counted matrix beside it."""
    from matplotlib.colors import LogNorm, Normalize
    panels = [("wire: TCP payload", entry["wire_GB"])]
    if "counted_GB" in entry:
        panels.append(("counted: traffic.csv", entry["counted_GB"]))
    values = np.concatenate([np.array(m, float).ravel() for _, m in panels])
    positive = values[values > 0]
    if positive.size and positive.max() > positive.min():
        norm = LogNorm(vmin=positive.min(), vmax=positive.max())
    else:
        norm = Normalize(vmin=0, vmax=positive.max() if positive.size else 1.0)
    n = len(entry["hosts"])
    side = max(4.0, 0.6 * n + 2.5)
    fig, axes = plt.subplots(1, len(panels), figsize=(side * len(panels) + 1.5, side), squeeze=False)
    im = None
    for i, (ax, (title, matrix)) in enumerate(zip(axes[0], panels)):
        im = wire_matrix_panel(ax, matrix, entry["hosts"], norm, title, i == 0)
    fig.colorbar(im, ax=list(axes[0]), label="bytes (GB = 10^9 bytes, log scale)")
    fig.suptitle(f"Bytes per host pair: {entry['id']}")
    save(fig, out_dir, name)


def window_label(entry):
    w = entry["window"]
    return (f"time in the window (s; {w['end_s'] - w['start_s']:.2f} s from Unix "
            f"{w['start_s']:.2f}, {w['from']})")


def bin_steps(t, values, width=0.01):
    """Bin starts and values extended by the last bin's end, so that step(where="post") draws
    every bin with its width."""
    if not len(t):
        return list(t), list(values)
    return list(t) + [t[-1] + width], list(values) + [values[-1]]


def top_of(links, keys=("wire_GBps", "counted_GBps")):
    """The highest value of the links' series, for one y scale over several panels."""
    top = max((max(link[k]) for link in links for k in keys if link.get(k)), default=0.0)
    return top * 1.05 if top > 0 else 1.0


def fig_wire_throughput(entry, out_dir, name):
    """Every link's throughput in 10 ms bins over the window: wire line, counted line."""
    links = [link for link in entry["links"] if link["t_s"]]
    if not links:
        return
    fig, axes = plt.subplots(len(links), 1, figsize=(9, 1.2 + 1.6 * len(links)), sharex=True,
                             sharey=True, squeeze=False)
    for ax, link in zip(axes[:, 0], links):
        ax.step(*bin_steps(link["t_s"], link["wire_GBps"]), where="post", color="tab:blue",
                linewidth=1, label="wire (frame bytes)")
        if "counted_GBps" in link:
            ax.step(*bin_steps(link["t_s"], link["counted_GBps"]), where="post",
                    color="tab:orange", linewidth=1, linestyle="--",
                    label="counted (traffic_timeline.csv)")
        ax.set_ylabel(link["name"], rotation=0, ha="right", va="center")
        ax.set_ylim(0, top_of(links))
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc="upper right", fontsize="small")
    axes[0, 0].set_title(f"Per-link throughput, 10 ms bins (GB/s, GB = 10^9 bytes): {entry['id']}")
    axes[-1, 0].set_xlabel(window_label(entry))
    save(fig, out_dir, name)


def fig_wire_flows(entry, out_dir, name):
    """Temporal flow plot: one row per flow, shade = frame bytes per 10 ms bin."""
    from matplotlib.colors import LogNorm
    flows = [f for f in entry["flows"] if f["t_s"]]
    if not flows:
        return
    # A long capture is drawn in wider cells of `merge` bins (at most 20000 columns).
    bins10 = max(1, int(math.ceil(entry["capture_s"] / 0.01 - 1e-9)))
    merge = max(1, math.ceil(bins10 / 20000))
    width = 0.01 * merge
    bins = math.ceil(bins10 / merge)
    grid = np.zeros((len(flows), bins))
    for row, flow in enumerate(flows):
        for t, b in zip(flow["t_s"], flow["bytes"]):
            grid[row, min(bins - 1, max(0, int(round(t / 0.01)) // merge))] += b
    positive = grid[grid > 0]
    # The least load a third of the way into the colour map, so that it stays visible.
    norm = LogNorm(vmin=positive.min() / 3, vmax=positive.max()) if positive.size else None
    cmap = plt.get_cmap("Blues").copy()
    cmap.set_bad("white")
    fig, ax = plt.subplots(figsize=(10, 1.5 + 0.28 * len(flows)))
    im = ax.imshow(np.ma.masked_less_equal(grid, 0), aspect="auto", interpolation="nearest",
                   cmap=cmap, norm=norm, extent=(0, bins * width, len(flows) - 0.5, -0.5))
    ax.set_yticks(range(len(flows)))
    ax.set_yticklabels([f"{f['label']} ({f['class']})" for f in flows],
                       fontsize="small" if len(flows) > 20 else None)
    fig.colorbar(im, ax=ax, label=f"frame bytes per {width * 1000:g} ms bin (log scale)")
    total = entry.get("flows_total", len(entry["flows"]))
    ax.set(title=f"Flows over time: {entry['id']} ({len(flows)} of its {total:g} flows carried bytes in bins)",
           xlabel="time since the capture's first bin (s)")
    save(fig, out_dir, name)


def fig_wire_batch_size_effect(entries, out_dir):
    """One panel per run, ordered by batch size: every link's 10 ms throughput, same y scale."""
    entries = sorted([e for e in entries if any(link["t_s"] for link in e["links"])],
                     key=lambda e: (e["batch"], e["id"]))
    if not entries:
        return
    fig, axes = plt.subplots(len(entries), 1, figsize=(9, 1.5 + 2.2 * len(entries)), sharey=True,
                             squeeze=False)
    names = sorted({link["name"] for e in entries for link in e["links"]})
    colors = dict(zip(names, palette(len(names))))
    for ax, e in zip(axes[:, 0], entries):
        for link in e["links"]:
            if link["t_s"]:
                ax.step(*bin_steps(link["t_s"], link["wire_GBps"]), where="post",
                        color=colors[link["name"]], linewidth=1)
        ax.set_title(f"batch size {e['batch']:g}: {e['id']}", fontsize="medium")
        ax.set_xlabel(window_label(e), fontsize="small")
        ax.set_ylabel("GB/s")
        ax.set_ylim(0, top_of([link for e2 in entries for link in e2["links"]], ("wire_GBps",)))
        ax.grid(alpha=0.3)
    legend(axes[0, 0], [Line2D([], [], color=colors[n], label=n) for n in names], title="link")
    fig.suptitle("Batch size effect: per-link throughput on the wire, 10 ms bins")
    fig.tight_layout()
    save(fig, out_dir, "wire_batch_size_effect")


def fig_wire(entries, out_dir):
    for prefix, draw in (("wire_heatmap_", fig_wire_heatmap),
                         ("wire_throughput_", fig_wire_throughput),
                         ("wire_flows_", fig_wire_flows)):
        for entry, name in zip(entries, figure_names(entries, prefix)):
            if prefix != "wire_heatmap_" or entry["hosts"]:
                draw(entry, out_dir, name)
    fig_wire_batch_size_effect(entries, out_dir)


def _steps(ax, x, y, **kw):
    pts = [(a, b) for a, b in zip(x, y) if b is not None]
    if pts:
        ax.step([a for a, _ in pts], [b for _, b in pts], where="post", **kw)


def fig_trace_duration_cdf(entries, out_dir):
    fig, ax = plt.subplots(figsize=(8, 5))
    handles = []
    for e, color in zip(entries, palette(len(entries))):
        d = e["duration"]
        _steps(ax, d["x_s"], d["jobs_share"], color=color)
        _steps(ax, d["x_s"], d["gpu_time_share"], color=color, linestyle="--")
        handles.append(Line2D([], [], color=color, label=e["name"]))
    handles += [Line2D([], [], color="grey", label="share of jobs"),
                Line2D([], [], color="grey", linestyle="--", label="share of GPU time")]
    ax.set_xscale("log")
    ax.set_xlim(left=1)
    ax.set(title="GPU job duration", xlabel="duration x (s)", ylabel="fraction \u2264 x", ylim=(0, 1.02))
    ax.grid(alpha=0.3, which="both")
    legend(ax, handles, loc="lower right")
    save(fig, out_dir, "trace_duration_cdf")


def fig_trace_queue_delay_cdf(entries, out_dir):
    fig, ax = plt.subplots(figsize=(8, 5))
    for e, color in zip(entries, palette(len(entries))):
        _steps(ax, e["queue"]["x_s"], e["queue"]["jobs_share"], color=color, label=e["name"])
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(left=0)
    ax.set(title="Queueing delay of GPU jobs", xlabel="start \u2212 submit x (s)",
           ylabel="fraction of jobs \u2264 x", ylim=(0, 1.02))
    ax.grid(alpha=0.3, which="both")
    legend(ax, ax.get_legend_handles_labels()[0], loc="lower right")
    save(fig, out_dir, "trace_queue_delay_cdf")


STATE_COLORS = {"COMPLETED": "tab:green", "FAILED": "tab:red", "CANCELLED": "tab:grey"}


def fig_trace_final_states(entries, out_dir):
    fig, axes = plt.subplots(len(entries), 2, figsize=(11, 3.6 * len(entries)), squeeze=False)
    for row, e in zip(axes, entries):
        labels = [s if s == "all" else f"{s} GPUs" for s in e["sizes"]]
        for ax, key, what in ((row[0], "jobs", "jobs"), (row[1], "gpu_hours", "GPU time")):
            totals = [sum(r[key][i] for r in e["states"]) for i in range(len(labels))]
            bottoms = np.zeros(len(labels))
            for r in e["states"]:
                values = np.array([v / t if t > 0 else 0 for v, t in zip(r[key], totals)])
                ax.bar(range(len(labels)), values, bottom=bottoms,
                       color=STATE_COLORS.get(r["state"]), label=r["state"])
                bottoms += values
            x_labels(ax, labels)
            ax.set(title=f"{e['name']}: share of {what}", ylim=(0, 1.02), ylabel="fraction")
            ax.grid(alpha=0.3, axis="y")
    legend(axes[0][1], axes[0][1].get_legend_handles_labels()[0], loc="upper left",
           bbox_to_anchor=(1.02, 1))
    fig.tight_layout()
    save(fig, out_dir, "trace_final_states")


def fig_trace_gpu_time_by_size(entries, out_dir):
    fig, ax = plt.subplots(figsize=(8, 5))
    sizes = entries[0]["sizes"][1:]
    width = 0.8 / len(entries)
    for k, (e, color) in enumerate(zip(entries, palette(len(entries)))):
        hours = [sum(r["gpu_hours"][i] for r in e["states"]) for i in range(1, len(e["sizes"]))]
        total = sum(hours)
        ax.bar(np.arange(len(sizes)) + (k - (len(entries) - 1) / 2) * width,
               [h / total if total > 0 else 0 for h in hours], width, color=color, label=e["name"])
    x_labels(ax, [f"{s} GPUs" for s in sizes])
    ax.set(title="GPU time by job size", ylabel="share of GPU time", ylim=(0, 1.02))
    ax.grid(alpha=0.3, axis="y")
    legend(ax, ax.get_legend_handles_labels()[0], loc="upper right")
    save(fig, out_dir, "trace_gpu_time_by_size")


def fig_traces(entries, out_dir):
    fig_trace_duration_cdf(entries, out_dir)
    fig_trace_queue_delay_cdf(entries, out_dir)
    fig_trace_final_states(entries, out_dir)
    fig_trace_gpu_time_by_size(entries, out_dir)


def load_figures(argv, script):
    """FIGURES_JSON's object and OUT_DIR from `script FIGURES_JSON OUT_DIR` (this file's and every other
    figure script's command line), or InputError saying what is wrong."""
    if len(argv) != 3:
        raise InputError(f"usage: {script} FIGURES_JSON OUT_DIR")
    src, out_dir = argv[1], argv[2]
    if not os.path.isdir(out_dir):
        raise InputError(f"output directory {out_dir} does not exist")
    try:
        with open(src, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
    except OSError as e:
        raise InputError(f"cannot read {src}: {e.strerror or e}")
    except ValueError as e:
        raise InputError(f"{src} is not valid JSON: {e}")
    if not isinstance(data, dict):
        raise InputError(f"{src}: the top level must be an object, got {json_type(data)}")
    return data, out_dir


def main(argv):
    data, out_dir = load_figures(argv, "plots.py")
    check(data, SCHEMA, "")
    check_shapes(data)
    global TITLE_SUFFIX
    TITLE_SUFFIX = data.get("title_suffix", "")
    for key, draw in (("speedup", fig_speedup), ("compute_comm", fig_compute_comm),
                      ("traffic", fig_traffic), ("batch_times", fig_batch_time_cdf),
                      ("curves", fig_curves), ("throughput", fig_throughput),
                      ("link_throughput", fig_link_throughput), ("wire", fig_wire),
                      ("traces", fig_traces)):
        if data.get(key):
            draw(data[key], out_dir)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except InputError as err:
        print(f"plots: {err}", file=sys.stderr)
        sys.exit(1)
