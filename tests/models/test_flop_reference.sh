#!/usr/bin/env bash
# expected/flops.json still says what PyTorch's FlopCounterMode says on the torch dtbench builds
# against: generate_flops.py runs again into a temporary file and the two must be equal (a new torch or
# torchvision that counts otherwise shows here; regenerate the file and look at what moved).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
"$root/scripts/torch_python" "$here/generate_flops.py" "$fresh" >/dev/null
if ! diff -u "$here/expected/flops.json" "$fresh"; then
  echo "test_flop_reference: tests/models/expected/flops.json differs from this torch's FlopCounterMode" \
       "(above); regenerate it: scripts/torch_python tests/models/generate_flops.py" >&2
  exit 1
fi
echo "test_flop_reference: expected/flops.json is FlopCounterMode's on this torch"
