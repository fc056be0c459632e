#!/usr/bin/env bash
# scripts/container_check.sh's command line, up to its %post, without root or a network: stand-ins
# for id (root), debootstrap (an empty root file system), mount, umount and chroot (which writes out
# the %post script it was given and fails) come first on PATH. Checked:
#   - a relative OUTDIR is the caller's, never the checkout's: the logs land under the caller's
#     folder, and a refusal (debootstrap missing) makes no folder anywhere;
#   - without OUTDIR: a usage message naming OUTDIR, exit 2;
#   - %post runs container/setup.sh with the definition's build arguments (%arguments: 2.11.0 cu130),
#     or with those of --build-arg (2.8.0 cu128); a --build-arg the definition lacks: exit 2.
# Usage: test_container_check_args.sh REPO
set -uo pipefail
repo=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
stubs=$tmp/stubs caller=$tmp/caller
mkdir -p "$stubs" "$caller"
printf '#!/bin/sh\n[ "$1" = -u ] && { echo 0; exit 0; }\nexec /usr/bin/id "$@"\n' >"$stubs/id"
# debootstrap [options] SUITE TARGET MIRROR: the target with the folders container_check writes into.
printf '#!/bin/sh\nfor a; do :; done\nshift $(($# - 2))\nmkdir -p "$1/proc" "$1/dev" "$1/tmp" "$1/etc/ssl/certs"\n' \
  >"$stubs/debootstrap"
printf '#!/bin/sh\nexit 0\n' >"$stubs/mksquashfs"
printf '#!/bin/sh\nexit 0\n' >"$stubs/mount"
printf '#!/bin/sh\nexit 0\n' >"$stubs/umount"
# chroot ROOT /bin/bash -euo pipefail /tmp/post.sh: show the script, then fail as a %%post can.
printf '#!/bin/sh\necho "post script:"\ncat "$1/tmp/post.sh"\nexit 1\n' >"$stubs/chroot"
chmod +x "$stubs"/*
run_check() { (cd "$caller" && PATH=$stubs:$PATH "$repo/scripts/container_check.sh" "$@") >"$tmp/out" 2>&1; }

# 1. A relative OUTDIR, the definition's build arguments.
run_check rel/out
rc=$?
[[ $rc -eq 1 ]] || fail "exit $rc with %post failing, want 1: $(cat "$tmp/out")"
[[ -f $caller/rel/out/debootstrap.log && -f $caller/rel/out/post.log ]] ||
  fail "no debootstrap.log and post.log under the caller's rel/out: $(cat "$tmp/out")"
[[ ! -e $repo/rel ]] || { fail "OUTDIR rel/out was made under the checkout ($repo/rel)"; rm -rf "$repo/rel"; }
grep -qE '^[[:space:]]*/opt/dtbench/src/container/setup.sh 2\.11\.0 cu130$' "$caller/rel/out/post.log" 2>/dev/null ||
  fail "%post does not run setup.sh with %arguments' 2.11.0 cu130: $(cat "$caller/rel/out/post.log" 2>/dev/null)"

# 2. --build-arg for CUDA 12.
run_check cu12 --build-arg TORCH_VERSION=2.8.0 --build-arg TORCH_CUDA=cu128
grep -qE '^[[:space:]]*/opt/dtbench/src/container/setup.sh 2\.8\.0 cu128$' "$caller/cu12/post.log" 2>/dev/null ||
  fail "--build-arg: %post does not run setup.sh 2.8.0 cu128: $(cat "$caller/cu12/post.log" 2>/dev/null)"
run_check unknown --build-arg TORCH_VERSON=2.8.0
rc=$?
[[ $rc -eq 2 ]] && grep -q 'TORCH_VERSON: not among' "$tmp/out" ||
  fail "an unknown --build-arg: exit $rc, want 2 naming it: $(cat "$tmp/out")"

# 3. A refusal: debootstrap missing (PATH holds only what runs before the check).
mkdir -p "$tmp/few"
for tool in dirname realpath mkdir awk sed cat; do ln -s "$(command -v "$tool")" "$tmp/few/$tool"; done
ln -s "$stubs/id" "$tmp/few/id"
(cd "$caller" && PATH=$tmp/few /bin/bash "$repo/scripts/container_check.sh" refused) >"$tmp/out" 2>&1
rc=$?
[[ $rc -eq 2 ]] && grep -q 'needs debootstrap' "$tmp/out" || fail "without debootstrap: exit $rc: $(cat "$tmp/out")"
[[ ! -e $caller/refused && ! -e $repo/refused ]] || { fail "a refusal made OUTDIR"; rm -rf "$repo/refused"; }

# 4. No OUTDIR.
(cd "$caller" && "$repo/scripts/container_check.sh") >"$tmp/out" 2>&1
rc=$?
[[ $rc -eq 2 ]] || fail "without OUTDIR: exit $rc, want 2"
grep -q 'usage: .*OUTDIR' "$tmp/out" || fail "without OUTDIR: no usage message naming OUTDIR: $(cat "$tmp/out")"
grep -qi 'unbound\|parameter null' "$tmp/out" && fail "without OUTDIR: bash's own error: $(cat "$tmp/out")"

[[ $status -eq 0 ]] && echo "ok: OUTDIR is the caller's, build arguments reach %post, usage errors exit 2"
exit $status
