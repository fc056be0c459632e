#!/usr/bin/env bash
# container/setup.sh's torch, as the image's build arguments give it, through --print (the steps it
# would run, none run): by default scripts/torch.env's torch from PyPI and no CUDA 12 toolkit; with
# 2.8.0 cu128 (the torch scripts/install_deps.sh names for a GPU driver of CUDA 12) pytorch.org's cu128
# index and NVIDIA's CUDA 12.8 toolkit for Debian 12, nvcc first on PATH; a bad version or variant, or
# one argument alone, exit 2. The defaults of the definition's %arguments and of the Containerfile's
# ARGs are scripts/torch.env's. Usage: test_container_setup.sh REPO
set -uo pipefail
repo=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
setup=$repo/container/setup.sh
# shellcheck source=../../scripts/torch.env
source "$repo/scripts/torch.env"

"$setup" --print >"$tmp/default" 2>&1 || fail "--print: exit $?: $(cat "$tmp/default")"
grep -q "DTBENCH_TORCH_VERSION=$TORCH_VERSION DTBENCH_TORCH_CUDA=$TORCH_CUDA DTBENCH_TORCH_INDEX= scripts/install_deps.sh --minimal" \
  "$tmp/default" || fail "the default is not torch.env's $TORCH_VERSION $TORCH_CUDA from PyPI: $(cat "$tmp/default")"
grep -q 'cuda-nvcc\|developer.download.nvidia.com' "$tmp/default" &&
  fail "the default installs a CUDA toolkit from NVIDIA's repository: $(cat "$tmp/default")"

"$setup" --print 2.8.0 cu128 >"$tmp/cu128" 2>&1 || fail "--print 2.8.0 cu128: exit $?: $(cat "$tmp/cu128")"
grep -q 'DTBENCH_TORCH_VERSION=2.8.0 DTBENCH_TORCH_CUDA=cu128 DTBENCH_TORCH_INDEX=https://download.pytorch.org/whl/cu128 scripts/install_deps.sh --minimal' \
  "$tmp/cu128" || fail "2.8.0 cu128: not torch 2.8.0 from pytorch.org's cu128 index: $(cat "$tmp/cu128")"
grep -q 'https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring' "$tmp/cu128" ||
  fail "2.8.0 cu128: NVIDIA's Debian 12 repository is not added: $(cat "$tmp/cu128")"
grep -q 'apt-get install .*cuda-nvcc-12-8 cuda-libraries-dev-12-8' "$tmp/cu128" ||
  fail "2.8.0 cu128: no CUDA 12.8 toolkit: $(cat "$tmp/cu128")"
# The toolkit is on PATH before install_deps.sh (which looks for nvcc there) runs.
[[ $(grep -n 'export PATH=/usr/local/cuda-12.8/bin:' "$tmp/cu128" | cut -d: -f1) -lt \
   $(grep -n 'install_deps.sh' "$tmp/cu128" | cut -d: -f1) ]] 2>/dev/null ||
  fail "2.8.0 cu128: /usr/local/cuda-12.8/bin is not put first on PATH before the install: $(cat "$tmp/cu128")"

for bad in "2.8 cu128" "2.8.0 cu12" "2.8.0 cpu" "2.8.0" "--bogus"; do
  # shellcheck disable=SC2086
  "$setup" --print $bad >"$tmp/bad" 2>&1
  rc=$?
  [[ $rc -eq 2 ]] || fail "setup.sh $bad: exit $rc, want 2: $(cat "$tmp/bad")"
  grep -q 'usage:\|is not a' "$tmp/bad" || fail "setup.sh $bad: no message saying what to give: $(cat "$tmp/bad")"
done

# The image's build arguments default to torch.env's.
awk '$1 == "%arguments" {on = 1; next} $1 ~ /^%/ {on = 0} on && NF {print $1}' "$repo/container/dtbench.def" >"$tmp/arguments"
grep -qx "TORCH_VERSION=$TORCH_VERSION" "$tmp/arguments" && grep -qx "TORCH_CUDA=$TORCH_CUDA" "$tmp/arguments" ||
  fail "dtbench.def's %arguments are not torch.env's $TORCH_VERSION $TORCH_CUDA: $(cat "$tmp/arguments")"
grep -qx "ARG TORCH_VERSION=$TORCH_VERSION" "$repo/container/Containerfile" &&
  grep -qx "ARG TORCH_CUDA=$TORCH_CUDA" "$repo/container/Containerfile" ||
  fail "the Containerfile's ARGs are not torch.env's $TORCH_VERSION $TORCH_CUDA"

[[ $status -eq 0 ]] && echo "ok: the image's torch is a build argument (default $TORCH_VERSION $TORCH_CUDA, or 2.8.0 cu128 with CUDA 12.8's toolkit)"
exit $status
