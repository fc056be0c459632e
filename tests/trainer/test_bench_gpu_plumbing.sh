#!/usr/bin/env bash
# scripts/bench_gpu.py, the GPU speed benchmark prepared for a GPU machine (docs/gpu.md, "GPU speed: the
# prepared benchmark"), run on the CPU at tiny settings: each part that runs on the CPU (eager against
# PyTorch, the cost of phase timing, the loader) runs both sides, pairs its repeats and writes its
# figures, so the script a GPU machine runs has run here first. A check of the plumbing, not a
# measurement. Arguments: dtbench, a python whose torch is the reference (empty: skipped).
set -euo pipefail
dtbench=$1 python=${2:-}
if [[ -z $python ]]; then
  echo "no python with torch was configured (DTBENCH_TORCH_PYTHON): skipped"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$python" "$(dirname "$0")/../../scripts/bench_gpu.py" --device cpu --dtbench "$dtbench" --python "$python" \
  --models resnet18 --batches 8 --precisions fp32 --repeats 2 --warmup 1 --steps 2 \
  --parts eager,phase_timing,loader --loader-batch 8 --out "$out" >"$out/printed.md"
/usr/bin/python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
d = json.load(open(os.path.join(out, "results.json")))
assert not d["errors"], d["errors"]
eager = d["eager"]["resnet18/8/fp32"]
assert len(eager["dtbench"]) == 2 and len(eager["pytorch"]) == 2, eager
assert all(x["images_per_s"] > 0 for x in eager["dtbench"])
assert all(v > 0 for run in eager["pytorch"] for v in run.values())
# The speed of light from dtbench's config.json: ResNet-18's training FLOPs and, on the CPU, the GEMM probe.
assert all(abs(x["training_flops"] - 3328997376) < 1 and x["peak_flops_per_s"] > 0 and x["peak_name"] == "of_gemm_probe"
           for x in eager["dtbench"]), eager["dtbench"]
timing = d["phase_timing"]["resnet18/8/fp32"]
assert len(timing["events"]) == 2 and len(timing["none"]) == 2, timing
# --phase-timing none leaves the device phases empty; events fills them.
assert timing["none"][0]["phases"]["forward_s"] is None and timing["events"][0]["phases"]["forward_s"] is not None
loader = d["loader"]
assert sorted(loader) == ["--workers 0", "default (2 workers)"], sorted(loader)
for name, runs in loader.items():
    assert len(runs) == 2, (name, runs)
    for r in runs:
        # End to end counts the loader's wait as well: never faster than the step alone.
        assert 0 < r["end_to_end_images_per_s"] <= r["images_per_s"] * (1 + 1e-9), (name, r)
        assert r["phases"]["data_s"] is not None
assert any("--data-on-device" in n for n in d["notes"]), d["notes"]
printed = open(os.path.join(out, "printed.md")).read()
written = open(os.path.join(out, "results.md")).read()
assert printed.strip() == written.strip()
for heading in ("PyTorch eager", "events / none", "The loader at resnet18, batch 8", "of_gemm_probe: PyTorch"):
    assert heading in written, heading
print("bench_gpu.py on the CPU: every part wrote its figures")
PY
