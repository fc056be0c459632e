#!/usr/bin/env bash
# Table 1's GFLOP_s_per_rank, MFU and of_gemm_probe from config.json's speed_of_light: the fixture's
# lenet runs at batch 32 on 1 and 2 ranks, given a speed_of_light as dtbench writes one (FLOPs per image
# made large, so that the fractions show at 4 digits):
#   - on an A100 (an fp32 run, cuDNN's TF32 on, cuBLAS's off): MFU = achieved ÷ the step's FLOPs at 156
#     TFLOP/s (convolutions) and 19.5 (linear layers), computed here from batches.csv;
#   - on a GPU the peak table does not know: no MFU, and the note says "unknown" and why;
#   - on the CPU: of_gemm_probe = achieved ÷ the probe, and a fraction above 1 is shown and flagged;
#   - as written before speed_of_light existed: the three columns empty.
# Usage: test_speed_of_light.sh DTBENCH FIXTURE_DIR
set -euo pipefail
dtbench=$1 fixture=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make_runs() {  # make_runs CASE
  for n in 1 2; do
    local dir=$tmp/$1/lenet-n$n
    mkdir -p "$tmp/$1"
    cp -r "$fixture/runs/lenet-b32-n$n" "$dir"
    /usr/bin/python3 - "$dir" "$1" <<'PY'
import json, sys
d, case = sys.argv[1], sys.argv[2]
config = json.load(open(f"{d}/config.json"))
flops = {"forward": 1.0e12, "training": 3.1e12, "training_convolution": 3.0e12, "training_linear": 1.0e11,
         "elementwise": 1.0e6}
def peak(gpu, precision, tflops, reason=""):
    return {"gpu": gpu, "precision": precision, "peak_tflops": tflops,
            "source": "datasheet" if tflops else "", "reason": reason}
if case == "a100":
    config["device"] = "cuda"
    config["devices"] = [{"type": "cuda", "model": "NVIDIA A100-SXM4-80GB", "host": "n", "boot_id": "b",
                          "sm_count": 108} for _ in range(config.get("world_size", 1))]
    config["speed_of_light"] = {"flops_per_image": flops, "convolution_precision": "tf32", "linear_precision": "fp32",
                                "tf32": {"cudnn": True, "cublas": False},
                                "convolution_peak": peak("a100-sxm4-80gb", "tf32", 156),
                                "linear_peak": peak("a100-sxm4-80gb", "fp32", 19.5)}
elif case == "unknown":
    config["device"] = "cuda"
    config["devices"] = [{"type": "cuda", "model": "AMD Instinct MI300X", "host": "n", "boot_id": "b"}
                         for _ in range(config.get("world_size", 1))]
    why = "GPU 'AMD Instinct MI300X' (304 SMs) is not in dtbench's peak table"
    config["speed_of_light"] = {"flops_per_image": flops, "convolution_precision": "tf32", "linear_precision": "fp32",
                                "tf32": {"cudnn": True, "cublas": False},
                                "convolution_peak": peak("unknown", "tf32", None, why),
                                "linear_peak": peak("unknown", "fp32", None, why)}
elif case == "cpu":
    small = {k: v / 1000 for k, v in flops.items()}  # 3.1 GFLOP per image
    config["speed_of_light"] = {"flops_per_image": small, "convolution_precision": "fp32", "linear_precision": "fp32",
                                "gemm_probe": {"gflops": 300.0, "threads": 1, "size": 512, "seconds": 0.18,
                                               "measured": "2026-11-28T00:00:00Z"}}
json.dump(config, open(f"{d}/config.json", "w"))
PY
  done
  "$dtbench" report "$tmp/$1" --table time_speedup --format csv > "$tmp/$1.csv"
  "$dtbench" report "$tmp/$1" --table time_speedup > "$tmp/$1.md"
}
for c in a100 unknown cpu old; do make_runs $c; done

/usr/bin/python3 - "$tmp" <<'PY'
import csv, sys
tmp = sys.argv[1]

def achieved(case, n, training):
    """training FLOPs per image x the critical rank's images / its sum(step_s - data_s), last epoch."""
    rows = list(csv.DictReader(open(f"{tmp}/{case}/lenet-n{n}/batches.csv")))
    last = max(int(r["epoch"]) for r in rows)
    sums = {}
    for r in rows:
        if int(r["epoch"]) != last:
            continue
        s = sums.setdefault(r["rank"], [0, 0.0])
        s[0] += int(r["samples"])
        s[1] += float(r["step_s"]) - float(r["data_s"])
    samples, train_s = max(sums.values(), key=lambda s: s[1])
    return training * samples / train_s

def table(case):
    return {r["N"]: r for r in csv.DictReader(open(f"{tmp}/{case}.csv"))}

def close(got, want, what):
    if got == "" or abs(float(got) - want) > 1e-4 * max(1.0, abs(want)):
        sys.exit(f"FAIL: {what}: {got!r}, want {want:.6g}")

peak = 3.1e12 / (3.0e12 / 156e12 + 1.0e11 / 19.5e12)
for n in ("1", "2"):
    row = table("a100")[n]
    a = achieved("a100", n, 3.1e12)
    close(row["GFLOP_s_per_rank"], a / 1e9, f"A100 N={n} GFLOP_s_per_rank")
    close(row["MFU"], a / peak, f"A100 N={n} MFU")
    if row["of_gemm_probe"] != "":
        sys.exit(f"FAIL: A100 N={n} has of_gemm_probe {row['of_gemm_probe']!r}: a GPU run's fraction is MFU")

    row = table("unknown")[n]
    close(row["GFLOP_s_per_rank"], achieved("unknown", n, 3.1e12) / 1e9, f"unknown GPU N={n} GFLOP_s_per_rank")
    if row["MFU"] != "" or row["of_gemm_probe"] != "":
        sys.exit(f"FAIL: unknown GPU N={n} has a fraction ({row['MFU']!r}, {row['of_gemm_probe']!r}): no peak, no MFU")

    row = table("cpu")[n]
    a = achieved("cpu", n, 3.1e9)
    close(row["of_gemm_probe"], a / 300e9, f"CPU N={n} of_gemm_probe")
    if row["MFU"] != "":
        sys.exit(f"FAIL: CPU N={n} has MFU {row['MFU']!r}: a CPU has no datasheet peak")

    row = table("old")[n]
    if (row["GFLOP_s_per_rank"], row["MFU"], row["of_gemm_probe"]) != ("", "", ""):
        sys.exit(f"FAIL: a run without speed_of_light has figures: {row}")
PY

status=0
fail() { echo "FAIL: $*" >&2; status=1; }
grep -qF -- "- Peak, lenet on cuda NVIDIA A100 SXM4 80GB: a100-sxm4-80gb: convolutions tf32 156 TFLOP/s, linear layers fp32 19.5 TFLOP/s (TF32: cuDNN on, cuBLAS off); datasheet." \
  "$tmp/a100.md" || fail "the A100's peak is not in Table 1's notes: $(grep -F 'Peak' "$tmp/a100.md")"
grep -qF -- "- Peak, lenet on cuda AMD Instinct MI300X: unknown: GPU 'AMD Instinct MI300X' (304 SMs) is not in dtbench's peak table." \
  "$tmp/unknown.md" || fail "the unknown GPU's note: $(grep -F 'Peak' "$tmp/unknown.md")"
grep -qF -- "- Peak, lenet on cpu (1 thread): CPU GEMM probe: 300 GFLOP/s" "$tmp/cpu.md" ||
  fail "the CPU's probe is not in Table 1's notes: $(grep -F 'Peak' "$tmp/cpu.md")"
# The fixture's CPU runs go at 3.1 GFLOP per image × about 150-200 images/s: above the made-up 300 GFLOP/s.
grep -qF -- "of its peak: above 1" "$tmp/cpu.md" || fail "a fraction above 1 is not flagged: $(cat "$tmp/cpu.md")"
if grep -qF -- "- Peak," "$tmp/old.md"; then fail "runs without speed_of_light name a peak"; fi
exit $status
