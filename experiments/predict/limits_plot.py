"""The `limits` figure of `dtbench predict --plots DIR` (docs/predict.md, "What limits scaling").

Usage: /usr/bin/python3 limits_plot.py FIGURES_JSON OUT_DIR

FIGURES_JSON is the data file predict writes (DIR/figures.json); its `limits` list holds one entry per
world size: the predicted step's terms in seconds (compute, straggler, bandwidth, latency, codec,
control; they add up to step_s) and the limiting term. This draws OUT_DIR/limits.png (150 dpi) and
OUT_DIR/limits.pdf: one stacked bar per world size, above in seconds a step, below as shares of the
step; the limiting term is named over each bar. A term that is 0 at every world size is not drawn
(the control term until a hardware file names a control cost). Nothing is drawn when the list is
absent or empty. It uses plots.py, which predict writes beside it, for its input checks and its
saving, and prints each written path on its own line; on unusable input one line starting with
`plots: ` goes to stderr and the status is 1.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plots  # noqa: E402
from plots import NUM, STR, InputError  # noqa: E402

plt = plots.plt
np = plots.np

# (key, colour, legend), bottom to top.
TERMS = [("compute", "tab:blue", "compute (mean rank)"),
         ("straggler", "tab:purple", "straggler (slowest of N ranks)"),
         ("bandwidth", "tab:red", "exposed communication: bandwidth"),
         ("latency", "tab:orange", "exposed communication: latency"),
         ("codec", "tab:brown", "exposed encoding and decoding"),
         ("control", "tab:grey", "control plane")]

SCHEMA = {"title_suffix?": STR,
          "limits?": [dict({"label": STR, "N": NUM, "step_s": NUM, "limit": STR},
                           **{f"{key}_s": NUM for key, _, _ in TERMS})]}


def fig_limits(entries, out_dir):
    entries = sorted(entries, key=lambda e: e["N"])
    n = len(entries)
    x = np.arange(n)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(6.0, 0.8 * n + 2), 8), sharex=True)
    below_s, below_pct = np.zeros(n), np.zeros(n)
    for key, color, label in TERMS:
        seconds = np.array([float(e[f"{key}_s"]) for e in entries])
        if not (seconds > 0).any():
            continue
        share = np.array([100 * s / e["step_s"] if e["step_s"] > 0 else 0.0 for s, e in zip(seconds, entries)])
        top.bar(x, seconds, 0.6, bottom=below_s, color=color, label=label)
        bottom.bar(x, share, 0.6, bottom=below_pct, color=color)
        below_s += seconds
        below_pct += share
    for i, e in enumerate(entries):
        if e["limit"] != "none":
            top.annotate(e["limit"], (i, below_s[i]), xytext=(0, 3), textcoords="offset points",
                         ha="center", va="bottom", fontsize="small")
    top.set(title=plots.titled("What limits scaling"), ylabel="seconds a step (s)")
    top.set_ylim(0, max(below_s.max(), 1e-12) * 1.12)
    bottom.set(ylabel="share of the step (%)", xlabel="world size", ylim=(0, 100), xlim=(-0.6, n - 0.4))
    plots.x_labels(bottom, [e["label"] for e in entries])
    for ax in (top, bottom):
        ax.grid(axis="y", alpha=0.3)
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    plots.save(fig, out_dir, "limits")


def main(argv):
    data, out_dir = plots.load_figures(argv, "limits_plot.py")
    plots.check(data, SCHEMA, "")
    plots.TITLE_SUFFIX = data.get("title_suffix", "")
    if data.get("limits"):
        fig_limits(data["limits"], out_dir)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except InputError as err:
        print(f"plots: {err}", file=sys.stderr)
        sys.exit(1)
