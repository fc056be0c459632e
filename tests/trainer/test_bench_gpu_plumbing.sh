#!/usr/bin/env bash
# scripts/bench_gpu.py, the GPU speed benchmark prepared for a GPU machine (docs/gpu.md, "GPU speed: the
# prepared benchmark"), run on the CPU at tiny settings: each part that runs on the CPU (eager against
# PyTorch, the cost of phase timing, the loader) runs both sides, pairs its repeats and writes its
# figures, and the resnet50 part writes step descriptions that predict reads, so the script a GPU machine
# runs has run here first. A check of the plumbing, not a
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
# The resnet50 part: ResNet-50 in its ImageNet layout (scripts/reference/imagenet_resnet.py) at 64x64,
# batch 2, both precisions: its phases become step descriptions that dtbench predicts from (gpu none).
"$python" "$(dirname "$0")/../../scripts/bench_gpu.py" --device cpu --dtbench "$dtbench" --python "$python" \
  --precisions fp32,bf16 --warmup 1 --steps 2 --parts resnet50 --resnet50-size 64 --resnet50-batch 2 \
  --out "$out/r50" >"$out/r50-printed.md"
/usr/bin/python3 - "$out/r50" <<'PY'
import json, os, sys
out = sys.argv[1]
d = json.load(open(os.path.join(out, "results.json")))
assert not d["errors"], d["errors"]
assert sorted(d["resnet50"]) == ["resnet50/64/2/bf16", "resnet50/64/2/fp32"], sorted(d["resnet50"])
for key, r in d["resnet50"].items():
    ms = r["phases_ms"]
    assert r["gpu"] == "none" and r["steps"] == 2 and all(ms[k] > 0 for k in ms), (key, r)
    assert abs(ms["step_ms"] - ms["forward_ms"] - ms["backward_ms"] - ms["optimizer_ms"]) < 1e-6 * ms["step_ms"] + 1e-9
    step = json.load(open(r["description"]))
    # ResNet-50 at 1000 classes: 25,557,032 parameters in the model measured and in dtbench's description
    # (torchvision's count), the phases as measured, in seconds.
    assert r["parameters"] == 25557032, (key, r["parameters"])
    assert sum(p["elements"] for p in step["parameters"]) == 25557032, key
    assert step["gpu"] == "none" and step["batch_size"] == 2, (step["gpu"], step["batch_size"])
    for phase in ("forward", "backward", "optimizer"):
        assert abs(step["compute_s"][phase] - ms[phase + "_ms"] / 1000) < 1e-6, (phase, step["compute_s"], ms)
    assert "scripts/bench_gpu.py --parts resnet50" in step["description"], step["description"]
print("bench_gpu.py --parts resnet50 on the CPU: phases measured, step descriptions written")
PY
printf '%s\n' '{"gpu": "none", "ranks_per_node": 1, "intra_node": {"bandwidth_gbit_s": 100, "latency_us": 5},' \
  ' "inter_node": {"bandwidth_gbit_s": 10, "latency_us": 10}}' >"$out/cpu-links.json"
"$dtbench" predict "$out/r50/steps/none-resnet50-64px-b2-fp32.json" --hardware "$out/cpu-links.json" --world 1,2 \
  --format csv --table time_speedup >"$out/r50-predicted.csv" || { echo "FAIL: predict from the ResNet-50 description"; exit 1; }
grep -q '^resnet50,' "$out/r50-predicted.csv" || { echo "FAIL: no ResNet-50 row: $(cat "$out/r50-predicted.csv")"; exit 1; }
