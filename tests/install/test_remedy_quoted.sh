#!/usr/bin/env bash
# The `rm -rf` that scripts/install_deps.sh prints for a damaged environment names that environment
# alone when a shell reads it, whatever its path holds: here DTBENCH_CACHE_DIR has a space and a
# quote, the environment is complete (stamped) and its python fails `import torch`, and the command
# in the message must read back, word for word, as `rm -rf` of exactly that folder.
# Usage: test_remedy_quoted.sh REPO
set -uo pipefail
repo=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export DTBENCH_CACHE_DIR="$tmp/a cache's dir" DTBENCH_TORCH_VERSION=2.11.0 DTBENCH_TORCH_CUDA=cu130
venv=$DTBENCH_CACHE_DIR/torch-2.11.0-cu130
mkdir -p "$venv/bin"
printf '#!/bin/sh\necho "MemoryError: cannot allocate memory" >&2\nexit 1\n' >"$venv/bin/python"
chmod +x "$venv/bin/python"
echo "2.11.0+cu130 CUDA 13.0 NCCL 2.28.9" >"$venv/.dtbench-complete"

"$repo/scripts/install_deps.sh" --user >"$tmp/out" 2>&1
rc=$?
status=0
[[ $rc -eq 1 ]] || { echo "FAIL: exit $rc, want 1: $(cat "$tmp/out")" >&2; status=1; }
arguments=$(sed -n 's/.*(rm -rf \(.*\)) and run again.*/\1/p' "$tmp/out")
[[ -n $arguments ]] || { echo "FAIL: no 'rm -rf ...' in the message: $(cat "$tmp/out")" >&2; exit 1; }
# The words a shell makes of what follows `rm -rf`: exactly one, the environment's path.
words=$(bash -c 'eval "set -- $1" 2>/dev/null || exit 1; printf "%s\n" "$#" "$@"' _ "$arguments")
if [[ $words != $'1\n'"$venv" ]]; then
  echo "FAIL: a shell reads 'rm -rf $arguments' as other paths than $venv:" >&2
  echo "${words:-(a syntax error)}" >&2
  status=1
fi
[[ $status -eq 0 ]] && echo "ok: the printed remedy is rm -rf $arguments, one word: the environment"
exit $status
