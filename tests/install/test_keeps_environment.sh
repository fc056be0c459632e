#!/usr/bin/env bash
# scripts/install_deps.sh never deletes a complete torch environment because `import torch` failed
# once: here the environment's python fails the import (as under a login node's memory limit); the
# script must stop with exit 1, say that the environment is complete and what to do, and leave it as
# it was. Usage: test_keeps_environment.sh REPO
set -uo pipefail
repo=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export DTBENCH_CACHE_DIR=$tmp/cache DTBENCH_TORCH_VERSION=2.11.0 DTBENCH_TORCH_CUDA=cu130
venv=$DTBENCH_CACHE_DIR/torch-2.11.0-cu130
mkdir -p "$venv/bin" "$venv/lib"
printf '#!/bin/sh\necho "MemoryError: cannot allocate memory" >&2\nexit 1\n' >"$venv/bin/python"
chmod +x "$venv/bin/python"
echo "2.11.0+cu130 CUDA 13.0 NCCL 2.28.9" >"$venv/.dtbench-complete"
echo "a file of the environment" >"$venv/lib/kept"

"$repo/scripts/install_deps.sh" --user >"$tmp/out" 2>&1
rc=$?
status=0
[[ $rc -eq 1 ]] || { echo "FAIL: exit $rc, want 1: $(cat "$tmp/out")" >&2; status=1; }
grep -q "is complete (its stamp says torch 2.11.0+cu130 CUDA 13.0 NCCL 2.28.9) but 'import torch' failed" "$tmp/out" ||
  { echo "FAIL: the message does not say the environment is complete: $(cat "$tmp/out")" >&2; status=1; }
grep -q 'MemoryError' "$tmp/out" || { echo "FAIL: the import's own error is not shown" >&2; status=1; }
grep -q "rm -rf $venv" "$tmp/out" || { echo "FAIL: the message does not say how to start over" >&2; status=1; }
[[ -f $venv/lib/kept && -f $venv/.dtbench-complete ]] || { echo "FAIL: the environment was deleted" >&2; status=1; }
[[ $status -eq 0 ]] && echo "ok: the complete environment was kept; $(grep -c . "$tmp/out") lines said why"
exit $status
