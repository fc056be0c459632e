#!/usr/bin/env bash
# The main job on the embedded default: a small scaling study of ResNet-18 on synthetic
# CIFAR-shaped data (no download): per-rank batch 32 and 64 on 1 and 2 ranks (one CPU thread per
# rank, gloo ring all-reduce), two epochs each cut to 4 steps (epoch 1 is warm-up; the tables report
# epoch 2, extrapolated to the full epoch). lr 0.02 rather than the default 0.1: from scratch,
# without warm-up, 0.1 overshoots on this very separable task. Ends by printing Tables 1-3; the
# whole report (report.md, one CSV per table) and the figures land in the study's directory
# under runs/. Usage: scripts/main_job.sh [path/to/dtbench]
set -euo pipefail
cd "$(dirname "$0")/.."
dtbench=${1:-build/dtbench}
study=runs/study-$(date +%Y%m%d-%H%M%S)-$$
common=(--model resnet18 --dataset synthetic --synthetic-test-size 256 --epochs 2 --max-steps 4
        --lr 0.02 --threads 1 --quiet)
for batch in 32 64; do
  for world in 1 2; do
    out=$study/resnet18-b$batch-n$world
    echo "main job: batch $batch per rank on $world rank(s) -> $out"
    if [[ $world -eq 1 ]]; then
      "$dtbench" train "${common[@]}" --batch-size "$batch" --out "$out"
    else
      "$dtbench" launch -n "$world" -- "$dtbench" train "${common[@]}" --batch-size "$batch" --topology ring --out "$out"
    fi
  done
done

# Figures need matplotlib in the python dtbench draws with (/usr/bin/python3; a cluster without it gets
# the tables and says so).
plots=(--plots "$study/figures")
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  echo "main job: no figures (/usr/bin/python3 has no matplotlib); the tables follow"
  plots=()
fi
"$dtbench" report "$study" --csv-dir "$study/tables" --job-table "$study/jobs.csv" "${plots[@]}" > "$study/report.md"
echo
"$dtbench" report "$study" --table time_speedup,compute_comm,bandwidth
echo "study: $study (report.md: every table; tables/*.csv; jobs.csv; figures/*.png and *.pdf)"
