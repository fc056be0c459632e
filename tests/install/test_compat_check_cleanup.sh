#!/usr/bin/env bash
# scripts/compat_check.sh deletes at its end what its own run made, never what was there before it:
# a complete torch environment of the same release (the CUDA 12 one docs/cluster-quickstart.md has
# users make) and its CUDA toolkit survive the run, while an environment and a toolkit the run made
# are deleted. No network: the script runs from a copy of scripts/ in a temporary checkout whose
# install_deps.sh is a stand-in that makes the environment and the toolkit where scripts/deps_paths.sh
# puts them (DTBENCH_CACHE_DIR in the temporary folder) and then fails, as an install can; the row
# then says "install failed". Also: --out without its FILE is a usage error (exit 2) naming --out.
# Usage: test_compat_check_cleanup.sh REPO
set -uo pipefail
repo=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checkout=$tmp/checkout
mkdir -p "$checkout/scripts"
cp "$repo/scripts/compat_check.sh" "$repo/scripts/deps_paths.sh" "$repo/scripts/torch.env" "$checkout/scripts/"
cat >"$checkout/scripts/install_deps.sh" <<'EOF'
#!/usr/bin/env bash
# Stand-in: the environment and the CUDA toolkit where the real script puts them, then a failure.
source "$(dirname "$0")/deps_paths.sh"
mkdir -p "$TORCH_VENV" "$DEPS_CACHE/cuda-toolkit-$TORCH_CUDA"
echo "$TORCH_VERSION+$TORCH_CUDA" >"$TORCH_VENV/.dtbench-complete"
echo "install_deps: error: no network in this test" >&2
exit 1
EOF
chmod +x "$checkout/scripts/install_deps.sh"
export DTBENCH_CACHE_DIR=$tmp/cache
venv=$DTBENCH_CACHE_DIR/torch-2.8.0-cu128 toolkit=$DTBENCH_CACHE_DIR/cuda-toolkit-cu128
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

# 1. A complete environment and its toolkit that were there before: kept.
mkdir -p "$venv/lib" "$toolkit/root/bin"
echo "2.8.0+cu128 CUDA 12.8 NCCL 2.27.3" >"$venv/.dtbench-complete"
echo "a file of the environment" >"$venv/lib/kept"
echo "nvcc" >"$toolkit/root/bin/nvcc"
"$checkout/scripts/compat_check.sh" 2.8.0 cu128 --out "$tmp/matrix.md" >"$tmp/out1" 2>&1
rc=$?
[[ $rc -eq 1 ]] || fail "exit $rc with the install failing, want 1: $(cat "$tmp/out1")"
grep -q '^| 2.8.0 | cu128 | install failed: .*no network in this test' "$tmp/matrix.md" 2>/dev/null ||
  fail "no 'install failed' row in $tmp/matrix.md: $(cat "$tmp/matrix.md" 2>/dev/null)"
[[ -f $venv/lib/kept && -f $venv/.dtbench-complete ]] ||
  fail "the complete environment that was there before the run was deleted"
[[ -f $toolkit/root/bin/nvcc ]] || fail "the CUDA toolkit that was there before the run was deleted"

# 2. Nothing there before: what the run made is deleted.
rm -rf "$DTBENCH_CACHE_DIR"
"$checkout/scripts/compat_check.sh" 2.8.0 cu128 --out "$tmp/matrix.md" >"$tmp/out2" 2>&1
rc=$?
[[ $rc -eq 1 ]] || fail "exit $rc with the install failing, want 1: $(cat "$tmp/out2")"
[[ ! -e $venv ]] || fail "the environment this run made was kept"
[[ ! -e $toolkit ]] || fail "the CUDA toolkit this run made was kept"

# 3. --out without its FILE.
"$checkout/scripts/compat_check.sh" 2.8.0 cu128 --out >"$tmp/out3" 2>&1
rc=$?
[[ $rc -eq 2 ]] || fail "--out without FILE: exit $rc, want 2"
grep -q -- '--out needs a FILE' "$tmp/out3" || fail "--out without FILE: the message does not name it: $(cat "$tmp/out3")"
grep -q 'unbound variable' "$tmp/out3" && fail "--out without FILE: bash's own error: $(cat "$tmp/out3")"

[[ $status -eq 0 ]] && echo "ok: an environment from before the run kept, one the run made deleted; --out checked"
exit $status
