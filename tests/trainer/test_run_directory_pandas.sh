#!/usr/bin/env bash
# dtbench train --model resnet18 --dataset synthetic --epochs 2 --max-steps 5 --out D, then
# D's files read back with pandas, as the users of the run directory read them.
set -euo pipefail
dtbench=$1 checker=$2
if ! /usr/bin/python3 -c 'import pandas' 2>/dev/null; then
  echo "python3-pandas is missing: run scripts/install_deps.sh" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# On an emulated cluster whose node is this host (DTBENCH_CLUSTER): config.json's link_rate_bps.
echo "{\"nodes\": [{\"name\": \"$(hostname)\", \"link_rate_bps\": 1000000000}]}" >"$tmp/cluster.json"
DTBENCH_CLUSTER=$tmp/cluster.json \
  "$dtbench" train --model resnet18 --dataset synthetic --synthetic-train-size 1000 --synthetic-test-size 200 \
  --epochs 2 --max-steps 5 --batch-size 16 --threads 2 --quiet --out "$tmp/D"
/usr/bin/python3 "$checker" "$tmp/D" --epochs 2 --steps 5 --cluster-file "$tmp/cluster.json" \
  --link-rate "$(hostname)=1000000000"
