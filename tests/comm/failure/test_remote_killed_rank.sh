#!/usr/bin/env bash
# A killed rank on another host is named by the survivors through its socket endpoint.
#
# Three ranks of `dtbench allreduce` over gloo run in network namespaces on one bridge
# (experiments/impair/netns_world.sh, with a prefix of this invocation's own), each under
# `unshare --uts` with the host name of its namespace, so the peer table sees real "other hosts",
# where its "is no longer running" check (peers on this host only) cannot see. Rank 0, the hub of
# --topology star, is killed with SIGKILL mid-run: every survivor waits on its connection to the
# hub, so Gloo's error on every survivor is about the killed rank's address. (With the native
# all-reduce a survivor may first see the other survivor close its connections on the way out, and
# blame that one, rightly by address; the test wants one answer.) Scenarios:
#   alone   three hosts, one rank each. Ranks 1 and 2 must say "rank 0 on host <host 0>".
#   shared  ranks 0 and 1 share host 0, rank 2 is on host 1. Rank 2 must say "rank 0 on host
#           <host 0>": with two ranks behind that address only the port can tell (rank 2 connected
#           to rank 0, so Gloo reports rank 0's real endpoint, byte-swapped on LibTorch 1.13).
#           Rank 1, on the same host, must name rank 0 (by endpoint or as no longer running).
# Passes when every survivor exits non-zero, not by a timeout, within the deadline, with the message
# above, and every namespace, veth and the bridge of the prefix is gone afterwards.
# Skips (exit 77) unless root with working `ip netns` and `unshare --uts`.
# Usage: remote_killed_rank_test.sh path/to/dtbench alone|shared
set -uo pipefail
dtbench=${1:?usage: remote_killed_rank_test.sh path/to/dtbench alone|shared}
scenario=${2:-alone}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

case $scenario in
  alone) hosts=(0 1 2) ;;   # hosts[r]: the namespace (= host) of rank r
  shared) hosts=(0 0 1) ;;
  *) echo "usage: remote_killed_rank_test.sh path/to/dtbench alone|shared" >&2; exit 2 ;;
esac
[[ $(id -u) -eq 0 ]] || skip "needs root: it creates network namespaces, a bridge and veth pairs"
command -v ip >/dev/null 2>&1 || skip "'ip' (iproute2) is not installed"
command -v unshare >/dev/null 2>&1 || skip "'unshare' (util-linux) is not installed"
[[ -x $dtbench ]] || { echo "FAIL: dtbench binary '$dtbench' is not executable"; exit 1; }
# shellcheck source=experiments/impair/netns_world.sh
source "$here/../../../experiments/impair/netns_world.sh"
NW_PREFIX=drk$$            # letters and digits, at most 10 characters (netns_world.sh's rule)
NW_SUBNET=10.79.$((RANDOM % 250))
probe=${NW_PREFIX}probe
ip netns add "$probe" >/dev/null 2>&1 || skip "'ip netns add' does not work here (no CAP_SYS_ADMIN?)"
ip netns del "$probe"
unshare --uts true 2>/dev/null || skip "'unshare --uts' does not work here"

tmp=$(mktemp -d)
pids=()
failures=0
victim=0
cleanup() {
  local p
  pkill -9 -P $$ 2>/dev/null  # its children, not every pid it started: one it reaped may be another's now
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  pids=()
  nw_down >/dev/null 2>&1
}
trap 'cleanup; rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start=$(date +%s)
nw_up "$(( hosts[2] + 1 ))" || { echo "FAIL: could not build the namespaces"; exit 1; }
port=$(( 20000 + RANDOM % 20000 ))
for r in 0 1 2; do
  h=${hosts[$r]}
  # A plain command (no shell function) in the background: the forked child execs ip, and ip netns
  # exec, unshare and sh all exec in turn, so $! is dtbench's own PID.
  # shellcheck disable=SC2016  # $0 and $@ belong to the inner sh
  ip netns exec "$(nw_ns "$h")" unshare --uts sh -c 'hostname "$0" && exec "$@"' "${NW_PREFIX}host$h" \
    env RANK=$r WORLD_SIZE=3 MASTER_ADDR="$(nw_addr 0)" MASTER_PORT=$port \
    "$dtbench" allreduce --backend gloo --topology star --counts 100000 --warmup-iters 0 \
    --iters 100000000 --timeout 5 --gloo-iface "$(nw_iface "$h")" >"$tmp/out.$r" 2>"$tmp/err.$r" &
  pids+=($!)
done
for _ in $(seq 1 200); do grep -q '# topology' "$tmp/out.0" 2>/dev/null && break; sleep 0.1; done
if ! grep -q '# topology' "$tmp/out.0"; then
  echo "FAIL: the ranks never started"; tail -n 5 "$tmp"/err.*; exit 1
fi
sleep 0.5
kill -9 "${pids[$victim]}"
wait "${pids[$victim]}" 2>/dev/null
killed=$(date +%s)
victim_host=${NW_PREFIX}host${hosts[$victim]}
for r in 0 1 2; do
  [[ $r -ne $victim ]] || continue
  timeout 20 tail --pid="${pids[$r]}" -f /dev/null
  if kill -0 "${pids[$r]}" 2>/dev/null; then
    fail "rank $r still runs 20 s after rank $victim was killed"
    kill -9 "${pids[$r]}"
  fi
  wait "${pids[$r]}"
  rc=$?
  [[ $rc -ne 0 && $rc -lt 124 ]] || fail "rank $r ended with exit code $rc (expected a failure, not 0 or a kill)"
  if [[ ${hosts[$r]} -ne ${hosts[$victim]} ]]; then
    grep -q "rank $victim on host $victim_host" "$tmp/err.$r" ||
      fail "rank $r's message does not name rank $victim on host $victim_host through its endpoint"
  else
    grep -Eq "rank $victim (on this host|\(pid [0-9]+ on this host\) is no longer running)" "$tmp/err.$r" ||
      fail "rank $r's message does not name rank $victim, which ran on its own host"
  fi
  echo "rank $r (exit $rc): $(head -c 700 "$tmp/err.$r")"
done
pids=()
elapsed=$(( $(date +%s) - killed ))
[[ $elapsed -le 12 ]] || fail "the survivors took ${elapsed}s to stop (deadline 5 s)"

nw_down || fail "netns_world.sh could not remove everything"
left=$(nw_leftovers)
[[ -z $left ]] || fail "left behind: $(tr '\n' ' ' <<<"$left")"
left_links=$(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^${NW_PREFIX}" || true)
[[ -z $left_links ]] || fail "links left behind: $(tr '\n' ' ' <<<"$left_links")"

if [[ $failures -eq 0 ]]; then
  echo "ok ($scenario): every survivor named rank $victim in ${elapsed}s; nothing left behind ($(( $(date +%s) - start ))s in all)"
else
  exit 1
fi
