#!/bin/bash
# The emulated cluster's life: `up` makes K nodes with their own hostnames, /etc/hosts, shaped links,
# slurmd and fake GPUs; `rate`, `node-down`, `node-up` do what they say; `down` leaves nothing behind,
# kills neither its caller (which ran the env's eval) nor a process that merely names the instance's
# directory, and a backgrounded srun ends with its job; an up stopped by SIGTERM cleans up; the
# remains of an `up` killed half-way, or of an instance whose daemons died, are cleaned by `down` (and
# by the next `up`). An option without its value is a usage error naming it; `capture start` refuses a
# node named twice or one the cluster lacks, starting nothing; of two `up`s of one name at once exactly
# one brings it up (an `up` of another name beside them works too).
#   tests/experiments/cluster/test_lifecycle.sh [path/to/dtbench]   (dtbench: the capture recorder; the
#   refusals tested here need none)
set -uo pipefail
source "$(dirname "$0")/common.sh"
dir=/run/dtbench-cluster/$CLUSTER_NAME
[[ -n ${1:-} ]] && export DTBENCH=$1

# Everything of this instance that still exists, one line each (empty: nothing).
remains() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${CLUSTER_NAME}ns" | sed 's/^/netns /'
  ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^${CLUSTER_NAME}(br|h[0-9]+)\$" | sed 's/^/link /'
  [[ -e $dir ]] && echo "directory $dir"
  grep -F " $dir" /proc/self/mounts | awk '{print "mount " $2}'
  pgrep -a -f "$dir/" | sed 's/^/process /'
  return 0
}
expect_clean() {
  local left
  left=$(remains)
  [[ -z $left ]] || fail "$1: left behind: $(tr '\n' ';' <<<"$left")"
}

# no_value OPTION ARGS...: `cluster.sh ARGS...` is refused as a usage error (exit 2) naming OPTION's
# missing value (not the silent exit 1 of a `shift` past the end).
no_value() {
  local opt=$1 out rc
  shift
  out=$("$cluster_sh" "$@" 2>&1)
  rc=$?
  [[ $rc == 2 && $out == *"$opt needs a value"* ]] ||
    fail "cluster.sh $*: exit $rc, want 2 and a message that $opt needs a value: '$out'"
}

info "an option without its value (last, or before another option) is a usage error naming it, before anything is made"
for opt in --nodes --rate --cpus --gpus --slurmd-timeout --congestion-control; do
  no_value "$opt" --name "$CLUSTER_NAME" --subnet "$CLUSTER_SUBNET" up --nodes 2 "$opt"
done
no_value --nodes --name "$CLUSTER_NAME" --subnet "$CLUSTER_SUBNET" up --nodes --rate 1gbit
no_value --congestion-control --name "$CLUSTER_NAME" --subnet "$CLUSTER_SUBNET" up --congestion-control --accounting
no_value --name --subnet "$CLUSTER_SUBNET" up --nodes 2 --name
no_value --name --name --subnet "$CLUSTER_SUBNET" status
no_value --subnet --name "$CLUSTER_NAME" up --nodes 2 --subnet
no_value --subnet --name "$CLUSTER_NAME" --subnet --name "$CLUSTER_NAME" up
expect_clean "ups refused for an option without its value"

info "a rate beyond any link is a usage error, before anything is made"
rate_out=$(cluster --subnet "$CLUSTER_SUBNET" up --nodes 2 --rate 99999999999999999999gbit 2>&1)
rate_rc=$?
[[ $rate_rc == 2 && $rate_out == *"is not a rate"*"from 8kbit to 1000gbit"* ]] ||
  fail "up --rate 99999999999999999999gbit: exit $rate_rc: $rate_out"
expect_clean "an up refused for its rate"

info "a congestion control the kernel lacks is refused, naming the ones it has"
cc_out=$(cluster --subnet "$CLUSTER_SUBNET" up --nodes 2 --congestion-control nosuchcc 2>&1)
cc_rc=$?
[[ $cc_rc == 1 && $cc_out == *"cannot set TCP congestion control 'nosuchcc'"*"this kernel has"* ]] ||
  fail "up --congestion-control nosuchcc: exit $cc_rc: $cc_out"
expect_clean "an up refused for its congestion control"

info "up: 3 nodes at 200mbit, 2 gpus each"
cluster_up --nodes 3 --rate 200mbit --gpus 2 --slurmd-timeout 5
[[ $(sinfo -h -N -t idle -o '%N %G' | sort | tr '\n' ' ') == "node1 gpu:2 node2 gpu:2 node3 gpu:2 " ]] ||
  fail "sinfo does not show 3 idle nodes with gpu:2: $(sinfo -N -o '%N %T %G' | tr '\n' ';')"
for n in 1 2 3; do
  [[ $(cluster exec node$n hostname) == node$n ]] || fail "node$n's hostname is $(cluster exec node$n hostname)"
done
[[ $(cluster exec node2 getent hosts node3 | awk '{print $1}') == "$CLUSTER_SUBNET.3" ]] ||
  fail "node3 does not resolve to $CLUSTER_SUBNET.3 inside node2"
[[ $(hostname) != node1 ]] || fail "the root namespace's hostname changed"
# A TCP connection between nodes over the cluster's subnet.
cluster exec node3 timeout 5 bash -c "exec 3<>/dev/tcp/node1/6818" || fail "node3 cannot reach node1's slurmd port"
# tbf on both ends of node2's link, at the rate and with the burst and limit cluster.json states.
/usr/bin/python3 - "$DTBENCH_CLUSTER" "$CLUSTER_SUBNET" <<'PY' || fail "cluster.json is wrong"
import json, sys
c = json.load(open(sys.argv[1]))
assert [n["name"] for n in c["nodes"]] == ["node1", "node2", "node3"], c["nodes"]
for i, n in enumerate(c["nodes"]):
    assert n["address"] == f"{sys.argv[2]}.{i + 1}", n
    assert n["link_rate_bps"] == 200_000_000, n
    assert n["tbf_burst_bytes"] == 25_000 and n["tbf_limit_bytes"] == 250_000, n  # 1 ms and 10 ms at 200 Mbit/s
    assert n["gpus"] == 2, n
assert c["tcp_congestion_control"] == "cubic", c.get("tcp_congestion_control")  # Linux's default, not the host's
assert c["gso_max_segs"] == 15, c.get("gso_max_segs")  # 25,000 // 1514 - 1: a GSO packet tbf passes whole
PY
# Every node runs the congestion control cluster.json names, whatever the host's default.
for n in 1 2 3; do
  cc=$(cluster exec node$n sysctl -n net.ipv4.tcp_congestion_control)
  [[ $cc == cubic ]] || fail "node$n's TCP congestion control is '$cc', not cubic"
done
up_qdisc=$(cluster exec node2 tc qdisc show dev "${CLUSTER_NAME}v1")
down_qdisc=$(tc qdisc show dev "${CLUSTER_NAME}h1")
for q in "$up_qdisc" "$down_qdisc"; do
  [[ $q == *"tbf"*"rate 200Mbit burst 25000b"* ]] || fail "node2's link is not shaped to 200Mbit with a 25000-byte burst: $q"
done
# Both ends of every link send GSO packets no longer than the bucket (tbf would cut longer ones in software).
gso_segs() { sed -n 's/.* gso_max_segs \([0-9]*\) .*/\1/p'; }
for n in 1 2 3; do
  up_segs=$(cluster exec node$n ip -d link show "${CLUSTER_NAME}v$((n - 1))" | gso_segs)
  down_segs=$(ip -d link show "${CLUSTER_NAME}h$((n - 1))" | gso_segs)
  [[ $up_segs == 15 && $down_segs == 15 ]] || fail "node$n's link: gso_max_segs $up_segs / $down_segs, not 15 (a 25,000-byte bucket)"
done
info "srun over every node, with --gres=gpu:2"
out=$(cd "$work" && timeout 60 srun -N 3 --ntasks-per-node=1 --gres=gpu:2 hostname | sort | tr '\n' ' ')
[[ $out == "node1 node2 node3 " ]] || fail "srun -N 3 ran on '$out'"

info "a second up of the same name is refused"
if cluster up --nodes 2 >"$work/second.log" 2>&1; then fail "a second 'up' of $CLUSTER_NAME succeeded"; fi
grep -q "already up" "$work/second.log" || fail "the second up did not say the cluster is already up: $(cat "$work/second.log")"
sinfo -h -N -t idle -o %N | grep -q node3 || fail "the refused up harmed the running cluster"

info "capture start: an option without its value, a node named twice or one the cluster lacks is refused; nothing starts"
no_value --snaplen --name "$CLUSTER_NAME" capture start "$work/cap" --snaplen
no_value --nodes --name "$CLUSTER_NAME" capture start "$work/cap" --nodes
no_value --nodes --name "$CLUSTER_NAME" capture start --nodes --snaplen 128 "$work/cap"
# NODES|EXIT|MESSAGE: a node named twice is a usage error; one the cluster (3 nodes) lacks, an error.
for bad in "node1,node1|2|node1 twice" "node2,node3,node2|2|node2 twice" "node1,node4|1|no node node4" \
  "node1,nodex|1|'nodex' is not a node name"; do
  IFS='|' read -r nodes want_rc want <<<"$bad"
  out=$(cluster capture start "$work/cap" --nodes "$nodes" 2>&1)
  rc=$?
  [[ $rc == "$want_rc" && $out == *"$want"* ]] ||
    fail "capture start --nodes $nodes: exit $rc, want $want_rc and a refusal saying \"$want\": '$out'"
  recorders=$(pgrep -a -f -- "capture record .*$work/cap")
  [[ -z $recorders ]] || fail "capture start --nodes $nodes left recorders running: $(tr '\n' ';' <<<"$recorders")"
  for made in "$work/cap" "$dir/capture/dir"; do
    [[ ! -e $made ]] || fail "capture start --nodes $nodes left a capture half-made: $made"
  done
done
stop_out=$(cluster capture stop 2>&1) && fail "capture stop after refused starts succeeded: $stop_out"
[[ $stop_out == *"no capture is running"* ]] || fail "capture stop after refused starts: '$stop_out'"

info "rate: node2 reshaped to 50mbit"
cluster rate 50mbit node2 2>/dev/null || fail "rate 50mbit node2 failed"
/usr/bin/python3 -c "
import json, sys; c = json.load(open('$DTBENCH_CLUSTER'))
assert [n['link_rate_bps'] for n in c['nodes']] == [200_000_000, 50_000_000, 200_000_000], c['nodes']" ||
  fail "cluster.json does not show node2 at 50mbit"
[[ $(tc qdisc show dev "${CLUSTER_NAME}h1") == *"rate 50Mbit"* ]] || fail "node2's bridge port is not at 50Mbit"
# The slowest link's bucket (6,250 bytes at 50 Mbit/s) bounds every node's GSO packets: they cross it too.
[[ $(ip -d link show "${CLUSTER_NAME}h2" | gso_segs) == 3 ]] || fail "node3's bridge port does not follow the 50mbit bucket (gso_max_segs 3)"
/usr/bin/python3 -c "
import json; c = json.load(open('$DTBENCH_CLUSTER')); assert c['gso_max_segs'] == 3, c['gso_max_segs']" ||
  fail "cluster.json's gso_max_segs does not follow the 50mbit bucket"

info "node-down node3: link down, every process in it killed, Slurm marks it down"
cluster exec node3 setsid sleep 1000 </dev/null >/dev/null 2>&1 &
sleep 0.5
ip netns pids "${CLUSTER_NAME}ns2" | xargs -r ps -o comm= -p | grep -qx sleep || fail "the test's sleep is not running in node3"
cluster node-down node3 2>/dev/null || fail "node-down failed"
[[ -z $(ip netns pids "${CLUSTER_NAME}ns2") ]] || fail "processes survive in node3: $(ip netns pids "${CLUSTER_NAME}ns2" | tr '\n' ' ')"
[[ $(ip -n "${CLUSTER_NAME}ns2" -br link show "${CLUSTER_NAME}v2" | awk '{print $2}') != UP ]] || fail "node3's link is still up"
cluster exec node1 timeout 3 bash -c "exec 3<>/dev/tcp/node3/6818" 2>/dev/null && fail "node1 still reaches node3"
down_state() { [[ $(node_state node3) == down* ]]; }
wait_for 40 "Slurm to mark node3 down" down_state
info "node-up node3: back in service"
cluster node-up node3 2>/dev/null || fail "node-up failed"
idle3() { [[ $(node_state node3) == idle ]]; }
wait_for 40 "node3 to return to idle" idle3

info "down from a shell that ran the env's eval: the caller lives on, a backgrounded srun ends with its job"
# The caller's children carry SLURM_CONF (from the eval); a `tail -f` names the instance's directory.
tail -f "$dir/log/slurmctld.log" >/dev/null 2>&1 &
tailer=$!
(cd "$work" && exec srun -N 1 sleep 1000) >"$work/srun.out" 2>&1 &
client=$!
srun_running() { [[ $(squeue -h -t RUNNING -o %i | wc -l) -ge 1 ]]; }
wait_for 30 "the srun's job to run" srun_running
# A script run from a shell that did the eval (so it carries SLURM_CONF) runs down.
printf '%q --name %q down\necho "down exited $?"\n' "$cluster_sh" "$CLUSTER_NAME" >"$work/inner.sh"
printf 'eval "$(%q --name %q env)"\nbash %q\necho "the caller lives on"\n' "$cluster_sh" "$CLUSTER_NAME" \
  "$work/inner.sh" >"$work/caller.sh"
bash "$work/caller.sh" >"$work/caller.out" 2>&1
grep -q "down exited 0" "$work/caller.out" || fail "the shell that ran down did not live on: $(cat "$work/caller.out")"
grep -q "the caller lives on" "$work/caller.out" || fail "the caller of down was killed: $(cat "$work/caller.out")"
client_gone() { ! kill -0 "$client" 2>/dev/null; }
wait_for 15 "the backgrounded srun to end with its job" client_gone
kill -0 "$tailer" 2>/dev/null || fail "down killed a tail -f of the instance's log"
kill "$tailer" 2>/dev/null
wait "$tailer" 2>/dev/null
expect_clean "down"

info "an up stopped by SIGTERM at any moment removes what it made"
# Several moments of one up (its checks, its daemons' start, its last waits); a fast machine may finish
# an up before the later ones, which then count for nothing. Each stop must exit 143 and leave nothing.
stopped=()
for delay in 0.02 0.1 0.2 0.4 0.6 0.8; do
  "$cluster_sh" --name "$CLUSTER_NAME" --subnet "$CLUSTER_SUBNET" up --nodes 2 >"$work/stopped-up.log" 2>&1 &
  starter=$!  # cluster.sh itself (a `cluster` function in the background would be a subshell)
  sleep "$delay"
  kill -TERM "$starter"
  wait "$starter"
  rc=$?
  if [[ $rc == 0 ]]; then cluster down >/dev/null 2>&1; continue; fi
  stopped+=("$delay")
  [[ $rc == 143 ]] || fail "the up stopped by SIGTERM after $delay s exited $rc, want 143: $(cat "$work/stopped-up.log")"
  if ! grep -q "removing what it made" "$work/stopped-up.log" && [[ -n $(remains) ]]; then
    fail "the up stopped after $delay s did not clean up: $(cat "$work/stopped-up.log"); left: $(remains | tr '\n' ';')"
  fi
  expect_clean "an up stopped by SIGTERM after $delay s"
done
((${#stopped[@]} > 0)) || fail "every up finished within 0.02 s: no up could be stopped"
info "  (stopped at ${stopped[*]} s)"

info "an up killed half-way: down removes its remains, and a later up works"
for delay in 0.1 0.4 0.8 1.2; do
  "$cluster_sh" --name "$CLUSTER_NAME" --subnet "$CLUSTER_SUBNET" up --nodes 3 >/dev/null 2>&1 &
  starter=$!
  sleep "$delay"
  kill -KILL "$starter" 2>/dev/null
  wait "$starter" 2>/dev/null
  cluster down >/dev/null 2>&1
  expect_clean "down after an up killed at ${delay} s"
done
# An up killed before its last step (cluster.json) leaves daemons running; the next up clears them.
# A fast machine may finish an up before the kill: then try an earlier moment.
halfway=
for delay in 0.4 0.2 0.1 0.05; do
  "$cluster_sh" --name "$CLUSTER_NAME" --subnet "$CLUSTER_SUBNET" up --nodes 3 >/dev/null 2>&1 &
  starter=$!
  sleep "$delay"
  kill -KILL "$starter" 2>/dev/null
  wait "$starter" 2>/dev/null
  if [[ ! -f $dir/cluster.json ]]; then halfway=$delay; break; fi
  cluster down >/dev/null 2>&1
done
[[ -n $halfway ]] || fail "every up finished within 0.05 s: no up could be killed half-way"
info "  (killed at $halfway s)"
cluster_up --nodes 2
[[ $(sinfo -h -N -t idle -o %N | sort | tr '\n' ' ') == "node1 node2 " ]] || fail "up after a killed up: $(sinfo -N | tr '\n' ';')"

info "daemons that died: down still cleans"
pkill -KILL -f "$dir/etc/slurm.conf"
pkill -KILL -f "$dir/munge"
sleep 0.3
cluster down >/dev/null 2>&1 || true
expect_clean "down after the daemons died"

info "two ups of one name at once: exactly one brings it up, the other is refused; an up of another name beside them works"
other=u$(($$ % 10000000)) other_subnet=10.81.$(($$ % 250))
lock=/run/dtbench-cluster/.$CLUSTER_NAME.lock
cleanup_other() {
  local rc=$?
  "$cluster_sh" --name "$other" down >/dev/null 2>&1 || true
  return $rc
}
trap 'cleanup_other; cleanup' EXIT
# A bounded wait: two racing ups once left one of them waiting forever on a slurmctld the other removed.
timeout -k 5 60 "$cluster_sh" --name "$CLUSTER_NAME" --subnet "$CLUSTER_SUBNET" up --nodes 2 >"$work/race1.log" 2>&1 &
race1=$!
timeout -k 5 60 "$cluster_sh" --name "$CLUSTER_NAME" --subnet "$CLUSTER_SUBNET" up --nodes 2 >"$work/race2.log" 2>&1 &
race2=$!
timeout -k 5 60 "$cluster_sh" --name "$other" --subnet "$other_subnet" up --nodes 2 >"$work/other.log" 2>&1 &
other_up=$!
wait "$race1"
rc1=$?
wait "$race2"
rc2=$?
wait "$other_up"
rc_other=$?
race_logs="up 1 exit $rc1: $(tr '\n' ' ' <"$work/race1.log"); up 2 exit $rc2: $(tr '\n' ' ' <"$work/race2.log")"
case "$rc1 $rc2" in
  "0 1") loser=$work/race2.log ;;
  "1 0") loser=$work/race1.log ;;
  *) fail "two ups of $CLUSTER_NAME at once: want one exit 0 and one exit 1; $race_logs" ;;
esac
grep -qE "is being brought up by another process|is already up" "$loser" ||
  fail "the refused up does not say another process is bringing $CLUSTER_NAME up (or that it is up): $race_logs"
[[ $rc_other == 0 ]] || fail "an up of $other beside them failed (exit $rc_other): $(cat "$work/other.log")"
cluster status >"$work/status.out" 2>&1 || fail "status after the racing ups failed: $(cat "$work/status.out")"
grep -q "^cluster $CLUSTER_NAME: 2 node(s)" "$work/status.out" || fail "status after the racing ups: $(cat "$work/status.out")"
[[ $(grep -cE '^node[12] idle ' "$work/status.out") == 2 ]] || fail "status after the racing ups shows no 2 idle nodes: $(cat "$work/status.out")"
[[ $(cluster exec node2 getent hosts node1 | awk '{print $1}') == "$CLUSTER_SUBNET.1" ]] || fail "node2 of the raced cluster does not resolve node1"
"$cluster_sh" --name "$other" status >"$work/other-status.out" 2>&1 || fail "status of $other failed: $(cat "$work/other-status.out")"
[[ $(grep -cE '^node[12] idle ' "$work/other-status.out") == 2 ]] || fail "status of $other shows no 2 idle nodes: $(cat "$work/other-status.out")"
# Nothing that up started (its daemons) holds the lock: down takes it at once.
flock -n "$lock" true || fail "the lock $lock is still held after up: $(fuser -v "$lock" 2>&1 | tr '\n' ' ')"
# Nor the machine's ports lock (held by an up only while it starts its slurmctld: another engineer's up
# may hold it a moment).
flock -w 10 /run/dtbench-cluster/.ports.lock true ||
  fail "the ports lock is still held after up: $(fuser -v /run/dtbench-cluster/.ports.lock 2>&1 | tr '\n' ' ')"
cluster down >/dev/null 2>&1 || fail "down after the racing ups failed"
"$cluster_sh" --name "$other" down >/dev/null 2>&1 || fail "down of $other failed"
expect_clean "down after the racing ups"
[[ ! -e $lock ]] || fail "down left the lock file $lock"
if ip netns list | awk '{print $1}' | grep -qE "^${other}ns" || [[ -e /run/dtbench-cluster/$other ]]; then
  fail "down of $other left its namespaces or directory"
fi
echo "PASS: cluster lifecycle (up, rate, node-down/up, down, killed up, dead daemons, options without values, capture --nodes refusals, racing ups)"
