#!/usr/bin/env bash
# dtbench predict end to end: a real one-rank run (LeNet, synthetic data) predicted at 1, 2 and 4
# ranks; T at world 1 equals the run's steps × its mean compute; the what-ifs move the numbers the
# way they must; a hand-made all-reduce CSV (ring times from the formula 2(N-1)(2α + S/(Nβ))) is
# calibrated back to its α and β and then predicted exactly; bad input gives exit 2 with a message.
set -euo pipefail
DTBENCH=$1
examples=$(cd "$(dirname "$0")/../../../experiments/predict/examples" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$DTBENCH" train --model lenet --dataset synthetic --synthetic-train-size 512 --synthetic-test-size 64 --batch-size 32 \
  --epochs 1 --no-eval --threads 1 --workers 0 --device cpu --quiet --out "$work/run" >"$work/train.log" 2>&1 ||
  { cat "$work/train.log" >&2; fail "the one-rank run failed"; }
[[ -f $work/run/step_profile.json ]] || fail "the run has no step_profile.json"

# Hardware: two ranks per node, so world 4 is two nodes.
cat >"$work/hw.json" <<'EOF'
{"description": "test machine", "ranks_per_node": 2,
 "intra_node": {"bandwidth_gbit_s": 8, "latency_us": 5},
 "inter_node": {"bandwidth_gbit_s": 0.8, "latency_us": 50}}
EOF
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 1,2,4 --format csv --table time_speedup >"$work/t1.csv"
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 2,4 --format csv --table compute_comm >"$work/t2.csv"
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 2,4 --no-overlap --format csv --table compute_comm \
  >"$work/t2-fused.csv"
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 4 --element-bytes 2 --topology star --format csv \
  --table bandwidth >"$work/t3-half.csv"
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 4 --format csv --table bandwidth >"$work/t3.csv"
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 2,4,...,16 --format json >"$work/all.json"
# 32 ranks × 32 images exceed the 512 of an epoch: one step of 16 images a rank, said on stderr (a CSV
# table carries no notes) and in the Assumed table; 16 × 32 fit.
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 16,32 --table assumed >"$work/big.md" 2>"$work/big.err"
grep -q "^predict: N = 32: the global batch (32 × 32 = 1024 images) exceeds the epoch's 512: 1 step an epoch, of 16 images a rank" \
  "$work/big.err" || fail "a global batch beyond the epoch was not said: $(cat "$work/big.err")"
grep -q "| epoch | N = 32: the global batch" "$work/big.md" || fail "the Assumed table does not say the epoch at N = 32"
! grep -q "N = 16" "$work/big.err" "$work/big.md" || fail "N = 16's global batch of 512 fits the epoch, but was noted"

/usr/bin/python3 - "$work" <<'PY'
import csv, json, statistics, sys
work = sys.argv[1]
problems = []
rows = list(csv.DictReader(open(f"{work}/run/batches.csv")))
rows = [r for r in rows if not (r["epoch"] == "1" and r["step"] == "1")]
compute = statistics.mean(float(r["step_s"]) - float(r["data_s"]) - float(r["comm_exposed_s"]) for r in rows)
t1 = {int(r["N"]): r for r in csv.DictReader(open(f"{work}/t1.csv"))}
if sorted(t1) != [1, 2, 4]:
    problems.append(f"Table 1 worlds {sorted(t1)}")
if any(r["basis"] != "predicted" for r in t1.values()):
    problems.append("a row is not marked predicted")
if [int(t1[n]["nodes"]) for n in (1, 2, 4)] != [1, 1, 2]:
    problems.append(f"nodes {[t1[n]['nodes'] for n in (1, 2, 4)]}, want 1 1 2 (2 ranks per node)")
if [int(t1[n]["steps"]) for n in (1, 2, 4)] != [16, 8, 4]:
    problems.append(f"steps {[t1[n]['steps'] for n in (1, 2, 4)]}, want 16 8 4 (512 samples, batch 32)")
if abs(float(t1[1]["T_s"]) - 16 * compute) > 1e-5 + 1e-6 * 16 * compute:
    problems.append(f"T(1) {t1[1]['T_s']} != 16 x mean compute {16 * compute:.6f}")
if float(t1[1]["speedup"]) != 1.0:
    problems.append(f"speedup at N=1 is {t1[1]['speedup']}")
# The band (docs/predict.md, "The band"): T(1) = 16 steps x (C ± t(n-1) s/sqrt(n)), the run's own 15 steps; at
# every N the band holds the point value, and the baseline's efficiency is 1 exactly.
samples = [float(r["step_s"]) - float(r["data_s"]) - float(r["comm_exposed_s"]) for r in rows]
t975 = {13: 2.160, 14: 2.145, 15: 2.131}[len(samples) - 1]
half = 16 * t975 * statistics.stdev(samples) / len(samples) ** 0.5
for end, sign in (("T_lo_s", -1), ("T_hi_s", 1)):
    if abs(float(t1[1][end]) - (16 * compute + sign * half)) > 2e-6 + 1e-6 * 16 * compute:
        problems.append(f"T(1)'s {end} {t1[1][end]} != 16 x (C {sign:+d} t s/sqrt(n)) = {16 * compute + sign * half:.6f}")
for n in (1, 2, 4):
    if not float(t1[n]["T_lo_s"]) < float(t1[n]["T_s"]) < float(t1[n]["T_hi_s"]):
        problems.append(f"N={n}: T band {t1[n]['T_lo_s']}..{t1[n]['T_hi_s']} does not hold T {t1[n]['T_s']}")
    if not float(t1[n]["efficiency_lo"]) <= float(t1[n]["efficiency"]) <= float(t1[n]["efficiency_hi"]):
        problems.append(f"N={n}: efficiency band does not hold {t1[n]['efficiency']}")
if t1[1]["efficiency_lo"] != t1[1]["efficiency"] or t1[1]["efficiency_hi"] != t1[1]["efficiency"]:
    problems.append("the baseline's efficiency has a band: T(1)/T(1) is exact")
if not float(t1[4]["T_s"]) < float(t1[1]["T_s"]):
    problems.append("4 ranks are not faster than 1 for a tiny model on fast links")
t2 = {int(r["N"]): r for r in csv.DictReader(open(f"{work}/t2.csv"))}
fused = {int(r["N"]): r for r in csv.DictReader(open(f"{work}/t2-fused.csv"))}
for n in (2, 4):
    if float(fused[n]["comm_exposed_s"]) + 1e-9 < float(t2[n]["comm_exposed_s"]):
        problems.append(f"N={n}: no overlap exposes less communication than overlap")
    if float(t2[n]["comm_total_s"]) <= 0:
        problems.append(f"N={n}: no communication predicted")
if not float(t2[4]["comm_total_s"]) > float(t2[2]["comm_total_s"]):
    problems.append("two nodes over a 0.8 Gbit/s link do not take longer than one node")
full = next(csv.DictReader(open(f"{work}/t3.csv")))
half = next(csv.DictReader(open(f"{work}/t3-half.csv")))
profile = json.load(open(f"{work}/run/step_profile.json"))
elements = sum(p["elements"] for p in profile["parameters"])
if int(full["grad_bytes"]) != (elements + 1) * 4 or int(half["grad_bytes"]) != (elements + 1) * 2:
    problems.append(f"grad_bytes {full['grad_bytes']} / {half['grad_bytes']}, want {(elements + 1) * 4} / {(elements + 1) * 2}")
if "star" not in half["setup"]:
    problems.append(f"the star what-if's setup reads {half['setup']!r}")
table = next(t for t in json.load(open(f"{work}/all.json")) if t["name"] == "time_speedup")
worlds = [row[table["columns"].index("N")] for row in table["rows"]]
if worlds != [2, 4, 8, 16]:
    problems.append(f"--world 2,4,...,16 gave {worlds}")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
PY

# What limits scaling: --table limits prints it alone in Markdown and in CSV; its terms add up to the
# step, the step is Table 1's T over its steps, and the JSON of every table has it.
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 1,2,4,8 --table limits >"$work/limits.md"
grep -q "^## What limits scaling" "$work/limits.md" || fail "--table limits printed no limits table: $(cat "$work/limits.md")"
! grep -q "^## Table 1" "$work/limits.md" || fail "--table limits printed more than the limits table"
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 1,2,4,8 --format csv --table limits,time_speedup \
  >"$work/limits.csv"
/usr/bin/python3 - "$work" <<'PY'
import csv, io, json, sys
work = sys.argv[1]
parts = open(f"{work}/limits.csv").read().split("\n# ")
limits = list(csv.DictReader(io.StringIO(parts[0].split("\n", 1)[1])))
t1 = {int(r["N"]): r for r in csv.DictReader(io.StringIO(parts[1].split("\n", 1)[1]))}
terms = ["compute", "straggler", "bandwidth", "latency", "codec", "control"]
want = ["N", "nodes", "step_s"] + [t + "_s" for t in terms] + [t + "_pct" for t in terms] + ["limit", "efficiency"]
if list(limits[0].keys()) != want:
    sys.exit(f"limits columns {list(limits[0].keys())}, want {want}")
if [int(r["N"]) for r in limits] != [1, 2, 4, 8]:
    sys.exit(f"limits worlds {[r['N'] for r in limits]}")
for r in limits:
    n, step = int(r["N"]), float(r["step_s"])
    if abs(sum(float(r[t + "_s"]) for t in terms) - step) > 4e-6:
        sys.exit(f"N = {n}: the terms do not add up to step_s {step}: {r}")
    if abs(sum(float(r[t + "_pct"]) for t in terms) - 100) > 1e-2:
        sys.exit(f"N = {n}: the shares do not add up to 100: {r}")
    if abs(step * int(t1[n]["steps"]) - float(t1[n]["T_s"])) > 1e-5 * float(t1[n]["T_s"]) + 1e-5:
        sys.exit(f"N = {n}: step_s {step} x {t1[n]['steps']} steps is not Table 1's T {t1[n]['T_s']}")
    if float(r["control_s"]) != 0 or float(r["straggler_s"]) < 0:
        sys.exit(f"N = {n}: control or straggler term {r}")
    if (r["limit"] == "none") != (n == 1) or r["limit"] not in ["none"] + terms[1:]:
        sys.exit(f"N = {n}: limit {r['limit']!r}")
if abs(float(limits[-1]["efficiency"]) - float(t1[8]["efficiency"])) > 1e-4:
    sys.exit("the limits table's efficiency is not Table 1's")
names = [t["name"] for t in json.load(open(f"{work}/all.json"))]
if "limits" not in names:
    sys.exit(f"--format json has no limits table: {names}")
PY

# Figures: the predicted speedup and compute vs communication, the measured run beside them.
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 1,2,4 --plots "$work/figures" --measured "$work/run" \
  --format csv --table time_speedup >/dev/null 2>"$work/plots.err" || { cat "$work/plots.err" >&2; fail "--plots failed"; }
for f in speedup.png speedup.pdf compute_comm.png limits.png limits.pdf figures.json plots.py limits_plot.py; do
  [[ -s $work/figures/$f ]] || fail "--plots wrote no $f"
done
grep -q '"limits.png"' "$work/figures/.dtbench-outputs.json" ||
  fail "the limits figure is not in the directory's output set: $(cat "$work/figures/.dtbench-outputs.json")"
/usr/bin/python3 - "$work/figures/figures.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
predicted = [s for s in data["speedup"] if s["setup"].endswith("(predicted on hw)")]
if len(predicted) != 1 or [p["N"] for p in predicted[0]["points"]] != [1, 2, 4]:
    sys.exit(f"figures.json's predicted speedup series: {predicted}")
if data.get("title_suffix") != "predicted on hw":
    sys.exit(f"figures.json's titles do not name the hardware: {data.get('title_suffix')!r}")
labels = [c["label"] for c in data["compute_comm"]]
if labels[:3] != ["N=1 predicted on hw", "N=2 predicted on hw", "N=4 predicted on hw"]:
    sys.exit(f"figures.json's compute_comm bars: {labels}")
limits = data.get("limits", [])
if [e["N"] for e in limits] != [1, 2, 4]:
    sys.exit(f"figures.json's limits entries: {limits}")
for e in limits:
    terms = sum(e[k + "_s"] for k in ("compute", "straggler", "bandwidth", "latency", "codec", "control"))
    if abs(terms - e["step_s"]) > 1e-12 * max(1.0, e["step_s"]):
        sys.exit(f"figures.json's limits entry does not add up: {e}")
PY

# Calibration: ring over 2, 3 and 4 nodes (one rank each), alpha = 50 us, beta = 1e8 B/s (0.8 Gbit/s).
/usr/bin/python3 - "$work/ring.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("backend,topology,world_size,size,count,type,time_us,algbw_gbps,busbw_gbps,wrong,link_rate_bps,"
            "bound_busbw_gbps,of_bound,nodes,segment_bytes\n")
    for n in (2, 3, 4):
        for size in (1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24):
            count = size // 4
            # every step: the receiver's notice (alpha), then the chunk (alpha + chunk / beta); sizes
            # that n does not divide are left out (their chunks differ by an element). Across hosts
            # two ranks post the all-gather's receive ahead (comm/topology/schedule_walk.h): its
            # notice left at the start, so their second step costs one alpha less.
            step = 2 * 50e-6 + (count // n) * 4 / 1e8
            t = (2 * (n - 1) * step - (50e-6 if n == 2 else 0)) if count % n == 0 else None
            if t is None:
                continue
            f.write(f"gloo,ring,{n},{size},{count},float32,{t * 1e6!r},,,0,,,,{n},0\n")
PY
[[ $(wc -l <"$work/ring.csv") -gt 6 ]] || fail "the synthetic ring CSV has too few rows"
"$DTBENCH" predict --calibrate "$work/ring.csv" --output "$work/fitted.json" --format csv >"$work/calibration.csv"
/usr/bin/python3 - "$work/fitted.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
bw, lat = h["inter_node"]["bandwidth_gbit_s"], h["inter_node"]["latency_us"]
if abs(bw - 0.8) > 0.008 or abs(lat - 50) > 1:
    sys.exit(f"calibration fitted {bw} Gbit/s and {lat} us, want 0.8 and 50")
PY
"$DTBENCH" predict --allreduce "$work/ring.csv" --hardware "$work/fitted.json" --format csv --table allreduce_model \
  >"$work/check.csv"
/usr/bin/python3 - "$work/check.csv" <<'PY'
import csv, sys
errors = [abs(float(r["error"])) for r in csv.DictReader(open(sys.argv[1]))]
if not errors or max(errors) > 0.01:
    sys.exit(f"the fitted model misses its own synthetic rows by up to {max(errors or [1]):.4f}")
PY

# Bad input: exit 2 (a usage error) or 1 (bad data) and a message that says what to fix.
expect_exit() {  # expect_exit CODE MESSAGE ARGS...
  local code=$1 want=$2; shift 2
  local status=0
  "$DTBENCH" predict "$@" >"$work/out" 2>"$work/err" || status=$?
  [[ $status -eq $code ]] || fail "predict $* exited $status, want $code"
  grep -qF -- "$want" "$work/err" || { cat "$work/err" >&2; fail "predict $* did not say: $want"; }
}
expect_usage() { expect_exit 2 "$@"; }
expect_data() { expect_exit 1 "$@"; }
# A step description: the run's own, written and predicted again, gives the same Table 1; one of the
# zoo at ImageNet's size holds ResNet-50's 25,557,032 parameters, in backward order.
"$DTBENCH" predict --describe "$work/run" --output "$work/step.json" 2>/dev/null
"$DTBENCH" predict "$work/step.json" --hardware "$work/hw.json" --world 1,2,4 --format csv --table time_speedup \
  >"$work/t1-described.csv"
"$DTBENCH" predict --describe-model resnet50 --image-size 224 --classes 1000 --batch-size 32 --forward-ms 40 \
  --backward-ms 80 --output "$work/r50.json" 2>/dev/null
/usr/bin/python3 - "$work" <<'PY'
import csv, json, sys
work = sys.argv[1]
measured = list(csv.DictReader(open(f"{work}/t1.csv")))
described = list(csv.DictReader(open(f"{work}/t1-described.csv")))
keys = ["N", "nodes", "steps", "T_s", "speedup", "efficiency", "images_per_s"]
if [[r[k] for k in keys] for r in measured] != [[r[k] for k in keys] for r in described]:
    sys.exit(f"the run's description predicts {described}, the run itself {measured}")
step = json.load(open(f"{work}/step.json"))
run_profile = json.load(open(f"{work}/run/step_profile.json"))
if [p["name"] for p in step["parameters"]] != [p["name"] for p in reversed(run_profile["parameters"])]:
    sys.exit("the run's description does not list its parameters in backward order")
r50 = json.load(open(f"{work}/r50.json"))
params = r50["parameters"]
if sum(p["elements"] for p in params) != 25557032 or len(params) != 161:
    sys.exit(f"resnet50 at 224x224: {len(params)} tensors, {sum(p['elements'] for p in params)} elements")
if not params[0]["name"].startswith("linear.") or params[-1]["name"] != "conv1.weight":
    sys.exit(f"resnet50's description is not in backward order: {params[0]['name']} ... {params[-1]['name']}")
ready = {p["name"]: p["ready_s"] for p in params}
if not (0 <= ready["linear.weight"] < ready["layer2.0.conv1.weight"] < ready["conv1.weight"] <= 0.08):
    sys.exit(f"resnet50's ready times are out of order: {ready['linear.weight']}, {ready['conv1.weight']}")
if r50["compute_s"]["total"] != 0.12 or r50["batch_size"] != 32:
    sys.exit(f"resnet50's compute {r50['compute_s']} or batch {r50['batch_size']}")
PY
# --bucket-layout fusion is a what-if of its own: the setup names it and the prediction inputs say it.
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 2 --bucket-layout fusion \
  --table time_speedup,prediction_inputs >"$work/fusion.md"
grep -q "fusion buckets" "$work/fusion.md" || fail "the fusion what-if is not named in Table 1"
grep -q "(fusion layout)" "$work/fusion.md" || fail "the prediction inputs do not name the fusion layout"
# The hardware files of real systems and the published checks' step descriptions load and predict.
systems=$(cd "$examples/../systems" && pwd)
for hw in "$systems"/*.json; do
  grep -q '"description": ".*[Ss]ource\|NVIDIA/nccl\|horovod/horovod' "$hw" || fail "$hw does not name its sources"
  for step in "$examples"/../published/*.step.json; do
    "$DTBENCH" predict "$step" --hardware "$hw" --world 8,64 --format csv --table time_speedup >/dev/null ||
      fail "predict of $(basename "$step") on $hw failed"
  done
done

cat >"$work/bad-step.json" <<'EOF'
{"format": "dtbench-step-description/1", "model": "m", "batch_size": 8, "train_samples": 80,
 "compute_s": {"forward": 0.01, "backward": 0.02},
 "parameters": [{"name": "w", "elements": 10, "ready_fraction": 1.5}]}
EOF
expect_usage "ready_fraction must be from 0 to 1" "$work/bad-step.json" --hardware "$work/hw.json" --world 2
expect_usage "does not take 64x64 images" --describe-model lenet --image-size 64 --batch-size 8 --backward-ms 10
expect_usage "needs --backward-ms" --describe-model resnet18 --batch-size 8
# --describe-model writes only what predict reads back: a backward of 1e300 ms is refused by its flag, and
# nothing is written; a description's gradient ready past backward's end is refused, naming it and the end.
expect_usage "--backward-ms must be at most 1e+18 ms" --describe-model lenet --batch-size 8 --backward-ms 1e300 \
  --output "$work/huge.json"
[[ ! -e $work/huge.json ]] || fail "--describe-model wrote a description predict refuses"
sed 's/"ready_fraction": 1.5/"ready_s": 0.5/' "$work/bad-step.json" >"$work/late-step.json"
expect_usage "parameters[0].ready_s (w) is 0.5 s, past backward's end: at most compute_s.backward, 0.02 s" \
  "$work/late-step.json" --hardware "$work/hw.json" --world 2
expect_usage "--describe and --describe-model write a step description" --describe "$work/run" --hardware "$work/hw.json"
expect_usage "--batch-size belongs to --describe-model" "$work/run" --hardware "$work/hw.json" --world 2 --batch-size 4

expect_usage "not a multiple of the hardware's ranks_per_node" "$work/run" --hardware "$work/hw.json" --world 3
expect_usage "--hardware FILE is required" "$work/run" --world 2
# Both are required: an empty value is no default to fall back to.
expect_usage "--world got an empty value; --world is required: the world sizes to predict" "$work/run" \
  --hardware "$work/hw.json" --world ''
expect_usage "--hardware got an empty value; --hardware is required: the hardware file" "$work/run" --hardware '' --world 2
expect_usage "--hardware is required" "$work/run" --hardware= --world 2
! grep -q "leave the flag out" "$work/err" || fail "--hardware= was told to leave a required flag out"
# The size after '...' must be a term of the progression: never silently appended.
expect_usage "100 is not a term of the progression 2,4,... (the nearest are 64 and 128)" "$work/run" \
  --hardware "$work/hw.json" --world 2,4,...,100
expect_usage "12 is not a term of the progression 2,5,... (the nearest are 11 and 14)" "$work/run" \
  --hardware "$work/hw.json" --world 2,5,...,12
expect_usage "'x' is not a world size" "$work/run" --hardware "$work/hw.json" --world 2,x
echo '{"ranks_per_node": 1, "intra_node": {"bandwidth_gbit_s": 1, "latency": 1},
 "inter_node": {"bandwidth_gbit_s": 1, "latency_us": 1}}' >"$work/bad-hw.json"
expect_usage "unknown key 'intra_node.latency'" "$work/run" --hardware "$work/bad-hw.json" --world 2
expect_usage "is neither a run directory nor a step description file" "$work/nothing" --hardware "$work/hw.json" --world 2
expect_usage "unknown topology" "$work/run" --hardware "$work/hw.json" --world 2 --topology ringg
expect_usage "--element-bytes is 2" "$work/run" --hardware "$work/hw.json" --world 2 --element-bytes 3
expect_usage "--world '2,,4' has an empty entry" "$work/run" --hardware "$work/hw.json" --world 2,,4
expect_usage "the size after '...' (3) is below the ones before it (4)" "$work/run" --hardware "$work/hw.json" --world 2,4,...,3
expect_usage "--world '4,8,...,8' names world 8 twice" "$work/run" --hardware "$work/hw.json" --world 4,8,...,8
expect_usage "1000000000 is more ranks than predict models (at most 65536)" "$work/run" --hardware "$work/hw.json" \
  --world 1000000000
expect_usage "lists more than 1024 world sizes" "$work/run" --hardware "$work/hw.json" --world 2,4,...,4096,4098,4100,...,65536
expect_usage "--bucket-mb must be a finite number > 0 and at most 1048576" "$work/run" --hardware "$work/hw.json" \
  --world 2 --bucket-mb 1e30
expect_usage "unknown backend 'bogus'" "$work/run" --hardware "$work/hw.json" --world 2 --backend bogus
expect_usage "unknown bucket layout 'horovod' (--bucket-layout); valid bucket layouts: ddp, fusion" "$work/run" \
  --hardware "$work/hw.json" --world 2 --bucket-layout horovod
sed 's/"ranks_per_node": 2,/"ranks_per_node": 2, "ranks_per_node": 4,/' "$work/hw.json" >"$work/dup-hw.json"
expect_usage "key 'ranks_per_node' appears twice" "$work/run" --hardware "$work/dup-hw.json" --world 2
{ cat "$work/hw.json"; echo '{"more": 1}'; } >"$work/trailing-hw.json"
expect_usage "not valid JSON" "$work/run" --hardware "$work/trailing-hw.json" --world 2
expect_usage "--allreduce: cannot open" --allreduce "$work/missing.csv" --hardware "$work/hw.json"
expect_usage "is the measurement --calibrate reads" --calibrate "$work/ring.csv" --output "$work/./ring.csv"
ln "$work/ring.csv" "$work/ring-link.csv"  # another name for the same file
cp "$work/ring.csv" "$work/ring-before.csv"
expect_usage "is the measurement --calibrate reads" --calibrate "$work/ring.csv" --output "$work/ring-link.csv"
cmp -s "$work/ring.csv" "$work/ring-before.csv" || fail "--output through a hard link overwrote the measurement"
[[ $(head -c 7 "$work/ring.csv") == backend ]] || fail "--calibrate --output onto its own CSV changed the CSV"
# Bad run data is exit 1 (not a usage error), and so is a run that did not complete.
# (A run of a build before the lock file existed still says running: no process can be asked. With its lock
# file and no process holding it, it died without recording its end: failed, and why.)
for status in failed running; do
  cp -r "$work/run" "$work/run-$status"
  rm -f "$work/run-$status/dtbench.lock"
  /usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["status"] = sys.argv[2]; json.dump(d, open(sys.argv[1], "w"))' \
    "$work/run-$status/summary.json" "$status"
  expect_data "its status is $status, not completed" "$work/run-$status" --hardware "$work/hw.json" --world 2
done
cp -r "$work/run-running" "$work/run-died" && touch "$work/run-died/dtbench.lock"
expect_data "its status is failed (died without recording its end" "$work/run-died" --hardware "$work/hw.json" --world 2
cp -r "$work/run" "$work/run-damaged"
echo '{"parameters": [' >"$work/run-damaged/step_profile.json"
expect_data "step_profile.json is damaged" "$work/run-damaged" --hardware "$work/hw.json" --world 2
# Large worlds stay cheap: at 65,536 ranks every topology's prediction grows the process's peak
# memory (getrusage of the child) by less than 1 GiB over the same prediction at 8 ranks. No time
# is checked (docs/benchmarks.md has the cost curve). The links issue messages at no cost: with a
# message overhead a star's hub issues its N - 1 messages one at a time, each a moment of its own for
# the simulation, which then takes minutes (docs/predict.md, "Large worlds").
cat >"$work/hw8.json" <<'JSON'
{"description": "8 ranks per node", "ranks_per_node": 8,
 "intra_node": {"bandwidth_gbit_s": 400, "latency_us": 2},
 "inter_node": {"bandwidth_gbit_s": 100, "latency_us": 5, "message_overhead_us": 0}}
JSON
peak_kb() {  # peak_kb ARGS...: the peak RSS (kB) of `dtbench predict ARGS`
  /usr/bin/python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$DTBENCH" predict "$@" --format csv --table time_speedup
}
for topology in native ring clique hierarchical tree star; do
  small=$(peak_kb "$work/run" --hardware "$work/hw8.json" --world 8 --topology "$topology") || fail "$topology at 8 ranks failed"
  large=$(peak_kb "$work/run" --hardware "$work/hw8.json" --world 65536 --topology "$topology") ||
    fail "$topology at 65536 ranks failed"
  (( large - small < 1048576 )) || fail "$topology at 65536 ranks grows the peak memory by $(( (large - small) / 1024 )) MiB"
done
# A clique's rank issues a message to every other rank at once: with a message overhead of 1 us across
# nodes its all-reduce over 65,536 ranks costs at least the N - 8 sends of each of its two steps one after
# another (0.13 s; LeNet's 62,006 gradients leave a few chunks empty). A file without message_overhead_us
# takes that 1 us, NCCL's network post overhead (it was predicted at 0.3 ms, said only as "0" in the
# Assumed table); a file that writes 0 gets 0, the latency and the bytes; the Assumed table tells them apart.
sed 's/"message_overhead_us": 0}/"message_overhead_us": 1}/' "$work/hw8.json" >"$work/hw8-overhead.json"
sed 's/, "message_overhead_us": 0}/}/' "$work/hw8.json" >"$work/hw8-absent.json"
cp "$work/hw8.json" "$work/hw8-zero.json"
for hw in hw8-absent hw8-overhead hw8-zero; do
  "$DTBENCH" predict "$work/run" --hardware "$work/$hw.json" --world 65536 --topology clique --format json \
    >"$work/clique-$hw.json" 2>/dev/null || fail "clique at 65536 ranks on $hw.json failed"
done
/usr/bin/python3 - "$work" <<'PY' || fail "the clique's message overhead"
import json, sys
work = sys.argv[1]
def table(path, name):
    return next(t for t in json.load(open(path)) if t["name"] == name)
def bucket_seconds(path):
    t = table(path, "step_breakdown")
    return sum(r[t["columns"].index("duration_s")] for r in t["rows"] if str(r[2]).startswith("bucket"))
def assumed(path):
    return dict((r[0], r[1]) for r in table(path, "assumed")["rows"])["message overhead"]
default, paid, free = (bucket_seconds(f"{work}/clique-{hw}.json") for hw in ("hw8-absent", "hw8-overhead", "hw8-zero"))
bound = 2 * (65536 - 8) * 1e-6 * 62006 / 65536
assert paid >= bound, f"clique at 65536 ranks with 1 us a message: {paid} s, below {bound} s"
assert default == paid, f"clique at 65536 ranks without message_overhead_us: {default} s, not the default 1 us's {paid} s"
assert free < 0.01, f"clique at 65536 ranks with message_overhead_us 0: {free} s"
said = assumed(f"{work}/clique-hw8-absent.json")
assert "inter-node 1 us" in said and "the default, NCCL's network post overhead" in said, said
assert "inter-node 1 us" in assumed(f"{work}/clique-hw8-overhead.json"), assumed(f"{work}/clique-hw8-overhead.json")
said = assumed(f"{work}/clique-hw8-zero.json")
assert said.startswith("0: the hardware file's message_overhead_us of 0") and "gives no" not in said, said
PY
sed 's/"message_overhead_us": 1/"message_overhead_us": -1/' "$work/hw8-overhead.json" >"$work/hw8-negative.json"
expect_usage "inter_node.message_overhead_us" "$work/run" --hardware "$work/hw8-negative.json" --world 16
# One node of 65,536 ranks: its ring is 65,536 ranks' 131,070 messages each, which no memory holds. Refused
# by name before anything is made (it was killed by the machine's out-of-memory killer after 24 GB, or
# ended in std::bad_alloc under a cap); under `ulimit -v` what still does not fit is named too.
printf '%s\n' '{"ranks_per_node": 65536, "intra_node": {"bandwidth_gbit_s": 100, "latency_us": 2},' \
  ' "inter_node": {"bandwidth_gbit_s": 10, "latency_us": 10}}' >"$work/hw-one-node.json"
expect_usage "simulates 65536 ranks' 8589803520 messages" "$work/run" --hardware "$work/hw-one-node.json" --world 65536
# Hierarchical within one node is that ring: the refusal suggests what lowers its messages, not itself.
expect_usage "fewer ranks per node" "$work/run" --hardware "$work/hw-one-node.json" --world 65536 --topology hierarchical
! grep -q -- "--topology hierarchical" "$work/err" || fail "a hierarchical prediction was told to try --topology hierarchical"
sed 's/65536/64/' "$work/hw-one-node.json" >"$work/hw64.json"
capped_status=0
(ulimit -v 3000000; "$DTBENCH" predict "$work/run" --hardware "$work/hw64.json" --world 65536 --topology ring \
  >/dev/null 2>"$work/capped.err") || capped_status=$?
[[ $capped_status -ne 0 ]] && grep -qE "this process may use|out of memory: the command asked for more" "$work/capped.err" ||
  fail "a prediction beyond ulimit -v exited $capped_status: $(cat "$work/capped.err")"
head -1 "$work/ring.csv" >"$work/empty.csv"
expect_usage "has no rows" --calibrate "$work/empty.csv"
grep -v ',ring,' "$work/ring.csv" >"$work/header-only.csv"
echo 'gloo,ring,1,1024,256,float32,10,,,0,,,,1,0' >>"$work/header-only.csv"
expect_usage "no row of a point-to-point topology" --calibrate "$work/header-only.csv"
# A run whose phases were not timed has no backward to place the gradients in: refused, saying what to do
# (it predicted a blank T with exit 0, and --describe wrote null phases).
"$DTBENCH" train --model lenet --dataset synthetic --synthetic-train-size 128 --synthetic-test-size 16 --batch-size 32 \
  --epochs 1 --no-eval --threads 1 --workers 0 --quiet --phase-timing none --out "$work/untimed" >/dev/null 2>&1 ||
  fail "the --phase-timing none run failed"
expect_data "Predict from a run with --phase-timing events" "$work/untimed" --hardware "$work/hw.json" --world 2
expect_data "its phases were not timed" --describe "$work/untimed"
# Whose compute: the CPU run is no A100's step. Refused, naming the ways on; taken only when asked.
expect_usage "its compute was measured on cpu" "$work/run" --hardware "$systems/dgx-a100-hdr200.json" --world 8,64
# A run written before devices were recorded is of its "device" setting (it was "not checked").
cp -r "$work/run" "$work/run-no-devices"
/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); assert d["device"] == "cpu", d["device"]; del d["devices"]; json.dump(d, open(sys.argv[1], "w"))' \
  "$work/run-no-devices/config.json"
expect_usage "its compute was measured on cpu (config.json's device; it records no devices)" "$work/run-no-devices" \
  --hardware "$systems/dgx-a100-hdr200.json" --world 8
expect_usage "--accept-other-device" "$work/run" --hardware "$systems/dgx-a100-hdr200.json" --world 8,64
"$DTBENCH" predict "$work/run" --hardware "$systems/dgx-a100-hdr200.json" --world 8 --accept-other-device \
  --table assumed >"$work/accepted.md" || fail "--accept-other-device did not predict"
grep -q "accepted with --accept-other-device: its compute was measured on cpu" "$work/accepted.md" ||
  fail "the Assumed table does not say the other device was accepted: $(cat "$work/accepted.md")"
grep -q "nccl's own all-reduce\|gloo's own all-reduce (native), efficiency 1, its model's default: the hardware file gives nccl only" \
  "$work/accepted.md" || fail "the Assumed table does not say where the native efficiency came from: $(cat "$work/accepted.md")"
# A file of CPU ranks takes the CPU run, measured against its own GEMM probe.
"$DTBENCH" predict "$work/run" --hardware "$examples/example-emulated-1gbit.json" --world 1,2 --format csv \
  --table time_speedup >"$work/cpu.csv" || fail "the CPU run on CPU ranks was not predicted"
/usr/bin/python3 - "$work/cpu.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    if not (float(r["GFLOP_s_per_rank"]) > 0 and float(r["of_gemm_probe"]) > 0 and r["MFU"] == ""):
        sys.exit(f"a CPU prediction's speed of light: {r}")
PY
# The shipped H100 steps on the H100 system: the same device, MFU from the datasheet's peak; on the A100
# system refused, and the message names the device to describe.
steps=$(cd "$examples/../steps" && pwd)
for step in "$steps"/*.json; do
  "$DTBENCH" predict "$step" --hardware "$systems/dgx-h100-ndr400.json" --world 8,64 --format csv \
    --table time_speedup >"$work/h100.csv" || fail "predict of $step on the H100 system failed"
  /usr/bin/python3 - "$work/h100.csv" "$step" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if not 0 < float(r["MFU"]) < 1 or r["of_gemm_probe"] != "":
        sys.exit(f"{sys.argv[2]} on dgx-h100: MFU {r['MFU']!r}, of_gemm_probe {r['of_gemm_probe']!r}")
PY
  expect_usage "--gpu a100-sxm4-80gb" "$step" --hardware "$systems/dgx-a100-hdr200.json" --world 8
  # They carry every gradient's shape, so PowerSGD's factors can be laid out (they were refused).
  "$DTBENCH" predict "$step" --hardware "$systems/dgx-h100-ndr400.json" --world 8,64 --compress powersgd \
    --format csv --table bandwidth >"$work/h100-psgd.csv" 2>"$work/h100-psgd.err" ||
    { cat "$work/h100-psgd.err" >&2; fail "predict --compress powersgd of $step failed"; }
  grep -q 'compress powersgd rank 2",128,64,8,predicted,float32,' "$work/h100-psgd.csv" ||
    fail "predict --compress powersgd of $step: $(cat "$work/h100-psgd.csv")"
done
expect_usage "--gpu 'a100' is neither none" --describe-model resnet18 --batch-size 8 --backward-ms 10 --gpu a100
# --measured says what it does not draw.
mkdir "$work/other-batch"
small=(train --model lenet --dataset synthetic --synthetic-train-size 128 --synthetic-test-size 16 --batch-size 16
       --epochs 1 --no-eval --threads 1 --workers 0 --device cpu --quiet)
"$DTBENCH" "${small[@]}" --out "$work/other-batch/b16-n1" >/dev/null 2>&1 || fail "the batch-16 run failed"
"$DTBENCH" launch -n 2 -- "$DTBENCH" "${small[@]}" --out "$work/other-batch/b16-n2" >/dev/null 2>&1 ||
  fail "the batch-16 run of 2 ranks failed"
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 1,2 --plots "$work/figures2" \
  --measured "$work/run,$work/other-batch" --format csv --table time_speedup >/dev/null 2>"$work/plots2.err" ||
  { cat "$work/plots2.err" >&2; fail "--plots with two measured runs failed"; }
grep -q "not drawn: the measured series lenet .* B=16: another model or batch" "$work/plots2.err" ||
  fail "--measured left the batch-16 series out without saying so: $(cat "$work/plots2.err")"
# --compress: the run's description keeps every gradient's shape, and PowerSGD's factors are laid out
# from them (lenet at rank 2: 9,468 bytes a step, 26.2 times fewer); the Assumed table says the run
# measured no encoding for it; bad values are refused by name.
"$DTBENCH" predict "$work/step.json" --hardware "$work/hw.json" --world 2 --compress powersgd --format csv \
  --table assumed,bandwidth >"$work/compress.csv" 2>"$work/compress.err" ||
  { cat "$work/compress.err" >&2; fail "predict --compress powersgd failed"; }
grep -q '^lenet,.*compress powersgd rank 2",.*,float32,9468,' "$work/compress.csv" ||
  fail "predict --compress powersgd: Table 3's grad_bytes is not lenet's 9468: $(cat "$work/compress.csv")"
grep -q "ratio 26.2; encoding and decoding taken as 0" "$work/compress.csv" ||
  fail "predict --compress powersgd: the Assumed table does not say the encoding was not measured"
# An fp16 step with --element-bytes: the step's own compression is named, and how to set it aside.
/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["settings"]["compress"] = "fp16"; json.dump(d, open(sys.argv[2], "w"))' \
  "$work/step.json" "$work/step-fp16.json"
expect_usage "--element-bytes: $work/step-fp16.json compresses its gradients (fp16, its settings.compress)" \
  "$work/step-fp16.json" --hardware "$work/hw.json" --world 2 --element-bytes 2
grep -q "add --compress none" "$work/err" || fail "--element-bytes on an fp16 step does not say --compress none"
expect_usage "unknown gradient compression 'zstd'" "$work/run" --hardware "$work/hw.json" --world 2 --compress zstd
expect_usage "--compress-rank must be in [1, 1024]" "$work/run" --hardware "$work/hw.json" --world 2 --compress-rank 0
# A PowerSGD run is predicted from its compressed steps: the uncompressed one (step 2; step 1 is
# warm-up) is left out of the compute, so making it a second slower changes nothing predicted.
"$DTBENCH" launch -n 2 -- "$DTBENCH" "${small[@]}" --max-steps 6 --compress powersgd --compress-start 2 \
  --out "$work/psgd" >/dev/null 2>&1 || fail "the 2-rank PowerSGD run failed"
/usr/bin/python3 - "$work/psgd/batches.csv" >"$work/psgd-backward" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
mine = [r for r in rows if r["rank"] == "0" and r["step"] != "1"]
assert [r["step"] for r in mine if float(r["compress_s"]) == 0] == ["2"], [(r["step"], r["compress_s"]) for r in mine]
for r in rows:
    if r["rank"] == "0" and r["step"] == "2":
        r["backward_s"] = f'{float(r["backward_s"]) + 1:.9f}'
        r["step_s"] = f'{float(r["step_s"]) + 1:.9f}'
with open(sys.argv[1], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=rows[0].keys(), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
# Each step's row is the rank that ended backward last (the least comm_exposed_s).
critical = {}
for r in rows:
    if r["step"] != "1" and float(r["compress_s"]) > 0:
        if r["step"] not in critical or float(r["comm_exposed_s"]) < float(critical[r["step"]]["comm_exposed_s"]):
            critical[r["step"]] = r
print(sum(float(r["backward_s"]) for r in critical.values()) / len(critical))
PY
"$DTBENCH" predict "$work/psgd" --hardware "$work/hw.json" --world 2 --format csv --table step_breakdown \
  >"$work/psgd.csv" 2>"$work/psgd.err" || { cat "$work/psgd.err" >&2; fail "predict of the PowerSGD run failed"; }
/usr/bin/python3 - "$work/psgd.csv" "$(cat "$work/psgd-backward")" <<'PY' || fail "the PowerSGD run's compute was not its compressed steps'"
import csv, sys
backward = [float(r["duration_s"]) for r in csv.DictReader(open(sys.argv[1])) if r["what"] == "backward"]
assert backward and abs(backward[0] - float(sys.argv[2])) < 1.5e-3, (backward, sys.argv[2])
PY
# Several ranks: each step is taken from the rank that ended backward last. Rank 1 of the batch-16 run
# of two ranks is made 0.2 s later out of backward in every step, and rank 0 waits those 0.2 s for it
# (its comm_exposed_s): predict takes rank 1's backward, and the Assumed table says so and names the wait.
cp -r "$work/other-batch/b16-n2" "$work/late-rank"
/usr/bin/python3 - "$work/late-rank/batches.csv" >"$work/late-backward" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    late = r["rank"] == "1"
    r["step_s"] = f'{float(r["step_s"]) + 0.2:.9f}'
    if late:
        r["backward_s"] = f'{float(r["backward_s"]) + 0.2:.9f}'
        r["comm_total_s"] = f'{max(0.0, float(r["comm_total_s"]) - float(r["comm_exposed_s"])):.9f}'
        r["comm_exposed_s"] = "0.000000000"
    else:
        r["comm_exposed_s"] = f'{float(r["comm_exposed_s"]) + 0.2:.9f}'
        r["comm_total_s"] = f'{float(r["comm_total_s"]) + 0.2:.9f}'
with open(sys.argv[1], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=rows[0].keys(), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
late = [float(r["backward_s"]) for r in rows if r["rank"] == "1" and r["step"] != "1"]
print(sum(late) / len(late), len(late))
PY
read -r late_backward late_steps <"$work/late-backward"
"$DTBENCH" predict "$work/late-rank" --hardware "$work/hw.json" --world 2 --format json >"$work/late.json" \
  2>"$work/late.err" || { cat "$work/late.err" >&2; fail "predict of the run with a late rank failed"; }
/usr/bin/python3 - "$work/late.json" "$late_backward" "$late_steps" <<'PY' || fail "predict did not take each step from the rank that ended backward last"
import json, sys
tables = {t["name"]: t for t in json.load(open(sys.argv[1]))}
steps = tables["step_breakdown"]
backward = [r[steps["columns"].index("duration_s")] for r in steps["rows"] if r[2] == "backward"]
assert backward and abs(backward[0] - float(sys.argv[2])) < 1.5e-3, (backward, sys.argv[2])
assumed = dict((r[0], r[1]) for r in tables["assumed"]["rows"] + tables["prediction_inputs"]["rows"])
said = assumed.get("critical rank", "")
assert f"another rank's row in {sys.argv[3]} of {sys.argv[3]} steps" in said, said
wait = float(said.rsplit("rank 0 waited ", 1)[1].split()[0])
assert 0.2 <= wait < 0.3, said
PY
# --vary: the inter-node bandwidth from 0.01 to 100 Gbit/s, the step's own fp16 (its encoding and
# decoding 20 ms, a description's compress_s, longer than LeNet's backward so never hidden) against
# none, at 2 ranks (one node) and 4 (two): a row per world, value and configuration; at 4 ranks fp16
# pays below a bandwidth inside the range and none above it; at 2 the bandwidth between nodes is never
# used and the codec always costs. A key that is not a number of the hardware file
# exits 2 naming the ones --vary takes.
/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["compress_s"] = 0.02; json.dump(d, open(sys.argv[2], "w"))' \
  "$work/step-fp16.json" "$work/step-fp16-codec.json"
"$DTBENCH" predict "$work/step-fp16-codec.json" --hardware "$work/hw.json" --world 2,4 --compress none,fp16 \
  --vary inter_node.bandwidth_gbit_s=0.01,0.03,0.1,0.3,1,3,10,30,100 --format json >"$work/vary.json" 2>"$work/vary.err" ||
  { cat "$work/vary.err" >&2; fail "predict --vary failed"; }
/usr/bin/python3 - "$work/vary.json" <<'PY' || fail "predict --vary: the rate axis or its crossing is wrong"
import json, sys
tables = {t["name"]: t for t in json.load(open(sys.argv[1]))}
assert sorted(tables) == ["crossings", "rate_axis"], sorted(tables)
axis, crossings = tables["rate_axis"], tables["crossings"]
key = "inter_node.bandwidth_gbit_s"
rows = [dict(zip(axis["columns"], r)) for r in axis["rows"]]
assert len(rows) == 2 * 9 * 2, len(rows)
values = [0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100]
assert sorted({(r["N"], r[key], r["what_if"]) for r in rows}) == sorted(
    (n, v, w) for n in (2, 4) for v in values for w in ("compress none", "compress fp16")), rows
step = {(r["N"], r[key], r["what_if"]): r["step_s"] for r in rows}
for r in rows:
    assert abs(r["T_s"] - r["step_s"] * (8 if r["N"] == 2 else 4)) < 1e-5, r
    assert abs(r["efficiency"] - r["speedup"] / r["N"]) < 1e-3, r
# One node: the bandwidth between nodes changes nothing.
assert len({step[(2, v, "compress none")] for v in values}) == 1, [step[(2, v, "compress none")] for v in values]
# Two nodes: fp16 faster at 0.01 Gbit/s, none at 100 (the codec's 20 ms exposed).
assert step[(4, 0.01, "compress fp16")] < step[(4, 0.01, "compress none")], step
assert step[(4, 100, "compress fp16")] > step[(4, 100, "compress none")], step
cross = [dict(zip(crossings["columns"], r)) for r in crossings["rows"]]
four = [c for c in cross if c["N"] == 4]
assert len(four) == 1, four
c = four[0]
assert (c["what_if_a"], c["what_if_b"]) == ("compress none", "compress fp16"), c
assert 0.01 < c[key] < 100 and c["where"].startswith("between "), c
assert (c["faster_below"], c["faster_above"]) == ("compress fp16", "compress none"), c
lo, hi = (float(x) for x in c["where"][len("between "):].split(" and "))
assert lo < c[key] < hi and values.index(hi) == values.index(lo) + 1, c
assert step[(4, lo, "compress fp16")] < step[(4, lo, "compress none")], c
assert step[(4, hi, "compress fp16")] > step[(4, hi, "compress none")], c
# One node: fp16's codec costs at every bandwidth, no crossing.
two = [c for c in cross if c["N"] == 2]
assert len(two) == 1 and two[0][key] is None and two[0]["where"] == "no crossing in the range 0.01 to 100", two
assert two[0]["faster_below"] == two[0]["faster_above"] == "compress none", two
PY
"$DTBENCH" predict "$work/step-fp16-codec.json" --hardware "$work/hw.json" --world 4 --compress none,fp16 \
  --vary inter_node.bandwidth_gbit_s=0.1,1,10 --format csv --table crossings >"$work/vary.csv"
[[ $(head -1 "$work/vary.csv") == "N,nodes,what_if_a,what_if_b,inter_node.bandwidth_gbit_s,where,faster_below,faster_above,band_from,band_to,certain" ]] ||
  fail "--vary --table crossings --format csv is not the crossings table alone: $(cat "$work/vary.csv")"
expect_usage "--vary 'inter_node.bandwidth_gbps=1,10': no hardware number 'inter_node.bandwidth_gbps'; --vary takes inter_node.bandwidth_gbit_s, inter_node.latency_us, inter_node.message_overhead_us, intra_node.bandwidth_gbit_s, intra_node.latency_us, intra_node.message_overhead_us, compute_scale, link_rate_bps" \
  "$work/run" --hardware "$work/hw.json" --world 4 --vary inter_node.bandwidth_gbps=1,10
expect_usage "--vary 'inter_node.latency_us=5,-1': -1 is not a value of inter_node.latency_us" \
  "$work/run" --hardware "$work/hw.json" --world 4 --vary inter_node.latency_us=5,-1
expect_usage "--compress 'none,fp16' names several values" "$work/run" --hardware "$work/hw.json" --world 4 \
  --compress none,fp16
# The band along the axis is Table 1's at the same value: the run's (its steps' compute gives a band
# wider than the point) with 0.1 Gbit/s between nodes, against a hardware file written with 0.1.
"$DTBENCH" predict "$work/run" --hardware "$work/hw.json" --world 2,4 --vary inter_node.bandwidth_gbit_s=0.1,1 \
  --format json --table rate_axis >"$work/vary-band.json"
/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["inter_node"]["bandwidth_gbit_s"] = 0.1; json.dump(d, open(sys.argv[2], "w"))' \
  "$work/hw.json" "$work/hw-0.1.json"
"$DTBENCH" predict "$work/run" --hardware "$work/hw-0.1.json" --world 2,4 --format json --table time_speedup \
  >"$work/t1-0.1.json"
/usr/bin/python3 - "$work/vary-band.json" "$work/t1-0.1.json" <<'PY' || fail "predict --vary: its band is not Table 1's"
import json, sys
(axis,), (t1,) = (json.load(open(path)) for path in sys.argv[1:3])
rows = [dict(zip(axis["columns"], r)) for r in axis["rows"]]
table1 = {r[t1["columns"].index("N")]: dict(zip(t1["columns"], r)) for r in t1["rows"]}
band = ["T_lo_s", "T_hi_s", "efficiency_lo", "efficiency_hi"]
at = [r for r in rows if r["inter_node.bandwidth_gbit_s"] == 0.1]
assert sorted(r["N"] for r in at) == [2, 4], at
for r in rows:
    assert r["T_lo_s"] <= r["T_s"] <= r["T_hi_s"] and r["T_lo_s"] < r["T_hi_s"], r
    assert r["efficiency_lo"] <= r["efficiency"] <= r["efficiency_hi"], r
for r in at:
    assert [r[k] for k in ["T_s"] + band] == [table1[r["N"]][k] for k in ["T_s"] + band], (r, table1[r["N"]])
PY
expect_usage "--table: no table 'bogus' (the tables: assumed, time_speedup" "$work/run" --hardware "$work/hw.json" \
  --world 4 --table time_speedup,bogus
expect_usage "--table crossings is a table of --vary" "$work/run" --hardware "$work/hw.json" --world 4 --table crossings

echo "PASS: dtbench predict end to end"
