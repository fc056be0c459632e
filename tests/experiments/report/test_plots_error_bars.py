"""plots.py's error bars: a speedup point with `speedup_pm` and a compute_comm bar with `T_pm_s` (Table 1's
95 % intervals) get an error bar from value − pm to value + pm; points and bars without one get none and are
drawn as before. Checked on the error bars the figures really draw, through main on a figures.json (written
as PNG and PDF), and on the input check, which refuses a negative half-width.

Usage: /usr/bin/python3 test_plots_error_bars.py [PLOTS_PY]
(PLOTS_PY defaults to experiments/report/plots.py of this checkout.)
"""
import contextlib
import copy
import importlib.util
import io
import json
import os
import sys
import tempfile
import unittest

from matplotlib.container import ErrorbarContainer

PLOTS_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                        "experiments", "report", "plots.py")

# The golden fixture's B = 64 series (fixture/EXPECTED.md: T(1) 1.740 ± 0.179690 extrapolated, T(2) 0.930
# measured, so speedup 1.870968 ± 0.193215), a series without intervals, and a point whose interval is wider
# than itself (a bar reaching below 0).
SPEEDUP = [
    {"model": "lenet synthetic", "setup": "gloo/ring ssgd", "batch": 64,
     "points": [{"N": 1, "speedup": 1.0, "extrapolated": True},
                {"N": 2, "speedup": 1.870968, "speedup_pm": 0.193215, "extrapolated": False},
                {"N": 4, "speedup": 2.0, "speedup_pm": 5.714286, "extrapolated": False}]},
    {"model": "lenet synthetic", "setup": "gloo/ring ssgd", "batch": 32,
     "points": [{"N": 1, "speedup": 1.0}, {"N": 2, "speedup": 1.531532}]},
]
COMPUTE_COMM = [
    {"label": "extrapolated", "compute_s": 3.0, "comm_exposed_s": 1.0, "overlap_s": 0.5, "T_s": 4.0,
     "T_pm_s": 0.4},
    {"label": "measured", "compute_s": 2.0, "comm_exposed_s": 1.0, "overlap_s": 0.5, "T_s": 3.0},
    {"label": "no T_s", "compute_s": 5.0, "comm_exposed_s": 1.0, "T_pm_s": 2.5},
]


def load_plots(path):
    sys.dont_write_bytecode = True  # no __pycache__ beside plots.py in the source tree
    spec = importlib.util.spec_from_file_location("dtbench_plots_error_bars", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def vertical_segments(container):
    """(x, low, high) of each error bar an ErrorbarContainer draws."""
    _, _, (lines,) = container.lines
    return sorted((float(seg[0][0]), float(min(seg[0][1], seg[1][1])), float(max(seg[0][1], seg[1][1])))
                  for seg in lines.get_segments())


class ErrorBars(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.plots = load_plots(PLOTS_PY)

    def draw(self, figure, entries):
        """The axes `figure` draws, captured when it saves (then saved as usual), and the files it printed."""
        plots, captured = self.plots, {}
        save = plots.save

        def capture(fig, out, name):
            captured["ax"] = fig.axes[0]
            save(fig, out, name)

        plots.save = capture
        try:
            with tempfile.TemporaryDirectory() as out_dir:
                with contextlib.redirect_stdout(io.StringIO()) as printed:
                    figure(copy.deepcopy(entries), out_dir)
        finally:
            plots.save = save
        return captured["ax"], printed.getvalue().split()

    def error_bars(self, ax):
        return [c for c in ax.containers if isinstance(c, ErrorbarContainer)]

    def test_speedup_points_with_an_interval_get_a_bar_of_plus_minus_it(self):
        ax, printed = self.draw(self.plots.fig_speedup, SPEEDUP)
        self.assertEqual([os.path.basename(p) for p in printed], ["speedup.png", "speedup.pdf"])
        bars = self.error_bars(ax)
        self.assertEqual(len(bars), 1, "one series has intervals")
        drawn = vertical_segments(bars[0])
        want = [(2.0, 1.870968 - 0.193215, 1.870968 + 0.193215), (4.0, 2.0 - 5.714286, 2.0 + 5.714286)]
        self.assertEqual(len(drawn), len(want))
        for (x, low, high), (wx, wlow, whigh) in zip(drawn, want):
            self.assertAlmostEqual(x, wx)
            self.assertAlmostEqual(low, wlow, places=6)
            self.assertAlmostEqual(high, whigh, places=6)
        # The axis still starts at 0 (a bar below it runs out), and the legend says what a bar is.
        self.assertEqual(ax.get_ylim()[0], 0)
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        self.assertTrue(any("95 %" in t for t in legend), legend)

    def test_speedup_without_intervals_draws_no_bar(self):
        plain = copy.deepcopy(SPEEDUP)
        for series in plain:
            for p in series["points"]:
                p.pop("speedup_pm", None)
        ax, _ = self.draw(self.plots.fig_speedup, plain)
        self.assertEqual(self.error_bars(ax), [])
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        self.assertFalse(any("95 %" in t for t in legend), legend)

    def test_a_bar_below_zero_on_log_axes_keeps_the_axis_finite(self):
        wide = copy.deepcopy(SPEEDUP)
        wide[0]["points"].append({"N": 32, "speedup": 20.0, "speedup_pm": 30.0})
        ax, _ = self.draw(self.plots.fig_speedup, wide)
        self.assertEqual(ax.get_yscale(), "log")
        bottom, top = ax.get_ylim()
        self.assertAlmostEqual(bottom, 0.5)  # half the lowest point (1)
        self.assertGreaterEqual(top, 50.0)   # the top of the widest bar is in view

    def test_compute_comm_bars_with_an_interval_get_one_around_t(self):
        ax, printed = self.draw(self.plots.fig_compute_comm, COMPUTE_COMM)
        self.assertEqual([os.path.basename(p) for p in printed], ["compute_comm.png", "compute_comm.pdf"])
        bars = self.error_bars(ax)
        self.assertEqual(len(bars), 1)
        # Around T_s where given, else compute + exposed; the measured bar has none.
        drawn = [tuple(round(v, 6) for v in segment) for segment in vertical_segments(bars[0])]
        self.assertEqual(drawn, [(0.0, 3.6, 4.4), (2.0, 3.5, 8.5)])
        self.assertEqual(ax.get_ylim()[0], 0)

    def test_main_draws_a_figures_json_with_intervals(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "figures.json")
            with open(src, "w") as f:
                json.dump({"speedup": SPEEDUP, "compute_comm": COMPUTE_COMM}, f)
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                self.plots.main(["plots.py", src, tmp])
            names = sorted(os.path.basename(p) for p in printed.getvalue().split())
            self.assertEqual(names, ["compute_comm.pdf", "compute_comm.png", "speedup.pdf", "speedup.png"])
            for name in ("speedup.png", "compute_comm.png"):
                with open(os.path.join(tmp, name), "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_a_negative_half_width_is_refused_before_drawing(self):
        for key, data in (("speedup_pm", {"speedup": copy.deepcopy(SPEEDUP)}),
                          ("T_pm_s", {"compute_comm": copy.deepcopy(COMPUTE_COMM)})):
            if key == "speedup_pm":
                data["speedup"][0]["points"][1]["speedup_pm"] = -0.1
            else:
                data["compute_comm"][0]["T_pm_s"] = -0.1
            with self.subTest(key=key), tempfile.TemporaryDirectory() as tmp:
                src = os.path.join(tmp, "figures.json")
                with open(src, "w") as f:
                    json.dump(data, f)
                with contextlib.redirect_stdout(io.StringIO()) as printed:
                    with self.assertRaisesRegex(self.plots.InputError, f"{key} is negative"):
                        self.plots.main(["plots.py", src, tmp])
                self.assertEqual(printed.getvalue(), "")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        PLOTS_PY = sys.argv.pop(1)
    unittest.main(verbosity=2)
