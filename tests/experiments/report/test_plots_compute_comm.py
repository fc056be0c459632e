"""plots.py's `compute_comm` bars: a bar is the epoch time T = compute_s + comm_exposed_s, compute at
the bottom and exposed communication on top; the overlapped (hidden) communication runs during
compute, so it is drawn inside the compute segment (its top min(overlap_s, compute_s)) and never
makes a bar taller than T. Checked on compute_comm_segments (the geometry) and on the bars the figure
really draws, which is then written as PNG and PDF.

Usage: /usr/bin/python3 test_plots_compute_comm.py [PLOTS_PY]
(PLOTS_PY defaults to experiments/report/plots.py of this checkout.)
"""
import contextlib
import importlib.util
import io
import os
import sys
import tempfile
import unittest

PLOTS_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                        "experiments", "report", "plots.py")
EPS = 1e-9

# Two epochs as the report writes them (figures.cpp: overlap_s = comm_total_s − comm_exposed_s,
# T_s = compute_s + comm_exposed_s): the first is the reported one, 2,909 s, whose overlapped
# communication used to be stacked on top into a bar of 3,640 s.
REPORTED = [
    {"label": "resnet ring N=4", "compute_s": 2300.0, "comm_exposed_s": 609.0, "overlap_s": 731.0,
     "T_s": 2909.0, "est_compute_s": 2100.0},
    {"label": "resnet tree N=8", "compute_s": 1200.0, "comm_exposed_s": 400.0, "overlap_s": 250.0,
     "T_s": 1600.0},
]
# Overlap larger than compute (clipped to compute), none at all, none given, and a T_s that is not
# compute + exposed (the bar stays compute + exposed; nothing is invented).
ODD = [
    {"label": "a", "compute_s": 3.0, "comm_exposed_s": 2.0, "overlap_s": 5.0, "T_s": 5.0},
    {"label": "b", "compute_s": 4.0, "comm_exposed_s": 1.0, "overlap_s": 0.0, "T_s": 5.0},
    {"label": "c", "compute_s": 4.0, "comm_exposed_s": 1.0},
    {"label": "d", "compute_s": 10.0, "comm_exposed_s": 2.0, "overlap_s": 1.0, "T_s": 13.0},
]


def load_plots(path):
    sys.dont_write_bytecode = True  # no __pycache__ beside plots.py in the source tree
    spec = importlib.util.spec_from_file_location("dtbench_plots_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def total(e):
    return e["compute_s"] + e["comm_exposed_s"]


class ComputeCommBars(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            cls.plots = load_plots(PLOTS_PY)
        cls.import_output = out.getvalue() + err.getvalue()

    def test_import_has_no_side_effects(self):
        self.assertEqual(self.import_output, "")

    # The geometry.
    def test_bar_is_compute_plus_exposed_and_hidden_lies_inside_compute(self):
        for entries in (REPORTED, ODD):
            seg = self.plots.compute_comm_segments(entries)
            for i, e in enumerate(entries):
                with self.subTest(bar=e["label"]):
                    for layer in ("compute", "exposed", "hidden"):
                        bottom, height = seg[layer][i]
                        self.assertGreaterEqual(bottom, -EPS, layer)
                        self.assertLessEqual(bottom + height, total(e) + EPS, layer)
                    c_bottom, c_height = seg["compute"][i]
                    e_bottom, e_height = seg["exposed"][i]
                    self.assertAlmostEqual(c_bottom, 0.0)
                    self.assertAlmostEqual(c_height, e["compute_s"])
                    self.assertAlmostEqual(e_bottom, e["compute_s"])
                    self.assertAlmostEqual(e_bottom + e_height, total(e))
                    h_bottom, h_height = seg["hidden"][i]
                    self.assertGreaterEqual(h_bottom, -EPS)
                    self.assertLessEqual(h_bottom + h_height, e["compute_s"] + EPS)
                    hidden = min(e.get("overlap_s", 0.0), e["compute_s"])
                    self.assertAlmostEqual(h_height, hidden)
                    if hidden > 0:  # the top of the compute segment
                        self.assertAlmostEqual(h_bottom + h_height, e["compute_s"])

    def test_the_reported_bar_is_2909_s_not_3640_s(self):
        seg = self.plots.compute_comm_segments(REPORTED)
        tops = [b + h for layer in ("compute", "exposed", "hidden") for b, h in seg[layer][:1]]
        self.assertAlmostEqual(max(tops), 2909.0)
        self.assertEqual(seg["T_s"], [None, None])  # T_s is the bar's top: no mark needed

    def test_overlap_larger_than_compute_is_clipped_and_said(self):
        seg = self.plots.compute_comm_segments(ODD)
        self.assertEqual(seg["hidden"][0], (0.0, 3.0))
        self.assertEqual(seg["clipped"], [True, False, False, False])
        self.assertEqual([h for _, h in seg["hidden"][1:3]], [0.0, 0.0])

    def test_a_t_s_that_is_not_compute_plus_exposed_is_marked_not_drawn(self):
        seg = self.plots.compute_comm_segments(ODD)
        self.assertEqual(seg["T_s"], [None, None, None, 13.0])
        self.assertAlmostEqual(sum(seg["exposed"][3]), 12.0)

    # What the figure draws.
    def draw(self, entries, out_dir):
        """fig_compute_comm's axes, captured when it saves (then saved as usual)."""
        plots, captured = self.plots, {}
        save = plots.save

        def capture(fig, out, name):
            captured["name"] = name
            captured["ax"] = fig.axes[0]
            save(fig, out, name)

        plots.save = capture
        try:
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                plots.fig_compute_comm(entries, out_dir)
        finally:
            plots.save = save
        self.assertEqual(captured.get("name"), "compute_comm")
        return captured["ax"], printed.getvalue().split()

    def check_drawn_bars(self, entries):
        with tempfile.TemporaryDirectory() as out_dir:
            ax, printed = self.draw(entries, out_dir)
            bars = [c for c in ax.containers if hasattr(c, "patches")]
            self.assertTrue(bars)
            hatched = 0
            for container in bars:
                self.assertEqual(len(container.patches), len(entries))
                for e, patch in zip(entries, container.patches):
                    bottom, top = sorted((patch.get_y(), patch.get_y() + patch.get_height()))
                    hatched += bool(patch.get_hatch())
                    with self.subTest(bar=e["label"], layer=container.get_label()):
                        self.assertGreaterEqual(bottom, -EPS)
                        self.assertLessEqual(top, total(e) + EPS)
                        if patch.get_hatch():
                            self.assertLessEqual(top, e["compute_s"] + EPS)
            self.assertTrue(hatched, "no hatched layer for the overlapped communication")
            # What is drawn is compute_comm_segments' geometry, layer by layer.
            layers = [c.get_label() if not c.patches[0].get_hatch() else "hidden" for c in bars]
            self.assertEqual(layers, ["compute", "exposed communication", "hidden"])
            seg = self.plots.compute_comm_segments(entries)
            for container, layer in zip(bars, ("compute", "exposed", "hidden")):
                drawn = [(p.get_y(), p.get_height()) for p in container.patches]
                for (y, h), (bottom, height) in zip(drawn, seg[layer]):
                    self.assertAlmostEqual(y, bottom, msg=layer)
                    self.assertAlmostEqual(h, height, msg=layer)
            for i, e in enumerate(entries):
                tops = [max(c.patches[i].get_y(), c.patches[i].get_y() + c.patches[i].get_height())
                        for c in bars]
                self.assertAlmostEqual(max(tops), total(e), msg=e["label"])
            png = os.path.join(out_dir, "compute_comm.png")
            pdf = os.path.join(out_dir, "compute_comm.pdf")
            self.assertEqual(printed, [png, pdf])
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            self.assertGreater(os.path.getsize(png), 5000)
            with open(pdf, "rb") as f:
                self.assertEqual(f.read(5), b"%PDF-")
            return [t.get_text() for t in ax.get_legend().get_texts()]

    def test_drawn_bars_end_at_compute_plus_exposed(self):
        legend = self.check_drawn_bars(REPORTED)
        self.assertIn("communication hidden under compute (overlapped)", legend)
        self.assertIn("estimate T(1)/N", legend)

    def test_drawn_odd_bars_end_at_compute_plus_exposed(self):
        legend = self.check_drawn_bars(ODD)
        self.assertTrue(any("capped at compute" in t for t in legend), legend)
        self.assertTrue(any(t.startswith("T_s") for t in legend), legend)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        PLOTS_PY = sys.argv.pop(1)
    unittest.main(verbosity=2)
