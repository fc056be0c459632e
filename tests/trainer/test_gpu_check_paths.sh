#!/usr/bin/env bash
# scripts/gpu_check.sh takes its folders relative to where it is started, not to the checkout: `run
# OUTDIR --staged DIR` and `bench OUTDIR --staged DIR` from another folder make OUTDIR there (and
# nothing under the checkout) before they stop at the torch, which here cannot be imported
# (DTBENCH_TORCH_PYTHON is a stand-in that fails): exit 1, saying so. No GPU, torch or build needed.
# Usage: test_gpu_check_paths.sh REPO
set -uo pipefail
repo=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
caller=$tmp/caller
mkdir -p "$caller"
printf '#!/bin/sh\necho "ModuleNotFoundError: No module named torch" >&2\nexit 1\n' >"$tmp/python"
chmod +x "$tmp/python"
export DTBENCH_TORCH_PYTHON=$tmp/python

for command in run bench; do
  out=gpu-check-$command-$$
  (cd "$caller" && "$repo/scripts/gpu_check.sh" "$command" "$out" --staged staged) >"$tmp/log" 2>&1
  rc=$?
  [[ $rc -eq 1 ]] && grep -q 'cannot import torch' "$tmp/log" ||
    fail "$command: exit $rc, want 1 saying torch cannot be imported: $(cat "$tmp/log")"
  [[ -d $caller/$out ]] || fail "$command: OUTDIR $out was not made in the caller's folder"
  [[ ! -e $repo/$out ]] || { fail "$command: OUTDIR $out was made under the checkout"; rm -rf "${repo:?}/$out"; }
done
[[ $status -eq 0 ]] && echo "ok: gpu_check.sh run and bench make OUTDIR where they are started"
exit $status
