"""plots.py's curves of a run resized by --resume: a curve entry with `segments` is drawn a segment a stretch,
each from its `first_batch` up to the next one's, in a line style of its own and named in the legend, so that
no line joins the last point of one world to the first of the next; a curve without `segments` is one solid
line under its id, as before. Checked on the lines fig_curves really draws, and on the input check, which
refuses segments out of order.

Usage: /usr/bin/python3 test_plots_curve_segments.py [PLOTS_PY]
(PLOTS_PY defaults to experiments/report/plots.py of this checkout.)
"""
import contextlib
import copy
import importlib.util
import io
import os
import sys
import tempfile
import unittest

PLOTS_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                        "experiments", "report", "plots.py")

# Five batches: the first two at 4 ranks, the last three at 2 (the resize between t = 2 and t = 9).
RESIZED = {"id": "rs",
           "batches": {"t_s": [1.0, 2.0, 9.0, 10.0, 11.0], "bytes": [10, 20, 25, 30, 35],
                       "loss": [2.3, 2.2, 2.1, 2.0, 1.9], "accuracy": [0.1, 0.1, 0.2, 0.2, 0.3]},
           "epochs": {"t_s": [11.5], "bytes": [35], "test_accuracy": [0.4]},
           "segments": [{"label": "segment 1/2: N=4 x B=3", "first_batch": 0},
                        {"label": "segment 2/2: N=2 x B=6", "first_batch": 2}]}
PLAIN = {"id": "plain", "batches": {"t_s": [1.0, 2.0], "loss": [2.3, 2.2]}}


def load_plots(path):
    sys.dont_write_bytecode = True  # no __pycache__ beside plots.py in the source tree
    spec = importlib.util.spec_from_file_location("dtbench_plots_curve_segments", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CurveSegments(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.plots = load_plots(sys.argv[1] if len(sys.argv) > 1 else PLOTS_PY)

    def draw(self, entries):
        """The figure fig_curves draws for `entries` (kept open), its legend labels."""
        drawn = []
        save = self.plots.save
        self.plots.save = lambda fig, out_dir, name: drawn.append(fig)
        try:
            with tempfile.TemporaryDirectory() as out, contextlib.redirect_stdout(io.StringIO()):
                self.plots.fig_curves(copy.deepcopy(entries), out)
        finally:
            self.plots.save = save
        fig = drawn[0]
        return fig, [t.get_text() for t in fig.legends[0].get_texts()]

    def loss_vs_time(self, fig):
        """(x values, line style) of every line on the loss-vs-time axes."""
        ax = fig.axes[0]
        return [(list(line.get_xdata()), line.get_linestyle()) for line in ax.lines]

    def test_a_segment_a_stretch(self):
        fig, labels = self.draw([RESIZED, PLAIN])
        lines = self.loss_vs_time(fig)
        self.assertIn(([1.0, 2.0], "-"), lines)
        self.assertIn(([9.0, 10.0, 11.0], "--"), lines)
        # No line spans the resize.
        for x, _ in lines:
            self.assertFalse(2.0 in x and 9.0 in x, f"a line joins the two worlds: {x}")
        self.assertIn("rs segment 1/2: N=4 x B=3", labels)
        self.assertIn("rs segment 2/2: N=2 x B=6", labels)
        self.assertNotIn("rs", labels)
        self.assertIn("plain", labels)
        self.assertIn(([1.0, 2.0], "-"), lines)  # the plain run: one solid line

    def test_without_segments_one_line(self):
        entry = {k: v for k, v in RESIZED.items() if k != "segments"}
        fig, labels = self.draw([entry])
        self.assertEqual(self.loss_vs_time(fig), [([1.0, 2.0, 9.0, 10.0, 11.0], "-")])
        self.assertIn("rs", labels)

    def test_segments_out_of_order_are_refused(self):
        entry = copy.deepcopy(RESIZED)
        entry["segments"].reverse()
        with self.assertRaises(self.plots.InputError):
            self.plots.check_shapes({"curves": [entry]})


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
