"""plots.py's batch-time CDF stays readable however many runs a report holds: up to CDF_SERIES_TOGETHER runs
share the two panels (the slowest batches' share of the time, and the CDF), one line a run; more runs are small
multiples, one panel a run, every run in its own panel with its id (15 series of 2-8 batches each in one CDF
could not be told apart). Checked on the axes the figure really draws, which is then written as PNG and PDF.

Usage: /usr/bin/python3 test_plots_batch_time_cdf.py [PLOTS_PY]
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


def load_plots(path):
    sys.dont_write_bytecode = True  # no __pycache__ beside plots.py in the source tree
    spec = importlib.util.spec_from_file_location("dtbench_plots_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def runs(count):
    """`count` runs of 2-8 batches each, as the report writes them (figures.cpp's batch_times)."""
    return [{"id": f"run-{i}", "step_s": [0.1 + 0.01 * j + 0.05 * i for j in range(2 + i % 7)]} for i in range(count)]


class BatchTimeCdf(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            cls.plots = load_plots(PLOTS_PY)

    def draw(self, entries):
        """The figure fig_batch_time_cdf saves: its visible axes, captured when it saves."""
        plots, captured = self.plots, {}
        save = plots.save

        def capture(fig, out, name):
            captured["name"] = name
            captured["axes"] = [ax for ax in fig.axes if ax.get_visible()]
            save(fig, out, name)

        plots.save = capture
        try:
            with tempfile.TemporaryDirectory() as out_dir, contextlib.redirect_stdout(io.StringIO()):
                plots.fig_batch_time_cdf(entries, out_dir)
                for ext in ("png", "pdf"):
                    self.assertTrue(os.path.getsize(os.path.join(out_dir, f"batch_time_cdf.{ext}")) > 0)
        finally:
            plots.save = save
        self.assertEqual(captured.get("name"), "batch_time_cdf")
        return captured["axes"]

    def test_few_runs_share_two_panels(self):
        entries = runs(self.plots.CDF_SERIES_TOGETHER)
        axes = self.draw(entries)
        self.assertEqual(len(axes), 2)
        self.assertEqual(len(axes[1].get_lines()), len(entries))  # one CDF a run

    def test_many_runs_get_a_panel_each(self):
        entries = runs(15)
        axes = self.draw(entries)
        self.assertEqual(len(axes), 15)
        for ax, e in zip(axes, entries):
            with self.subTest(run=e["id"]):
                self.assertEqual(len(ax.get_lines()), 1)  # its own CDF alone
                self.assertTrue(ax.get_title().startswith(e["id"] + "\n"))
                self.assertIn(f"{len(e['step_s'])} batches", ax.get_title())


if __name__ == "__main__":
    if len(sys.argv) > 1:
        PLOTS_PY = sys.argv.pop(1)
    unittest.main()
