#!/usr/bin/env bash
# cluster.sh: a small Slurm cluster on one machine (root). K nodes, each with a network namespace,
# a UTS namespace (its own hostname) and a mount namespace (its own /etc/hosts), one link each on a
# bridge, shaped in both directions with tc tbf, one slurmd each, and a slurmctld and munged of the
# cluster's own. docs/cluster.md says what it emulates and what it cannot.
#
#   cluster.sh up [--nodes K] [--rate RATE] [--cpus C] [--gpus G] [--slurmd-timeout S] [--accounting]
#                 [--congestion-control CC] [--name N] [--subnet A.B.C]
#                                      --accounting: also a MariaDB and a slurmdbd of the cluster's own,
#                                      so sacct shows its jobs (slurm/sacct_jobs.sh)
#                                      --congestion-control: the nodes' TCP congestion control (default
#                                      cubic, Linux's own default; never the host's, see below)
#   cluster.sh env                     export lines: SLURM_CONF, DTBENCH_CLUSTER, Open MPI's TCP subnet
#   cluster.sh status                  nodes, links (rate, tbf drops), Slurm's view
#   cluster.sh rate RATE [NODE...]     reshape links (every node by default); cluster.json follows
#   cluster.sh exec NODE CMD...        run CMD inside NODE (its namespaces), e.g. a shell
#   cluster.sh node-down NODE          power loss: link down, then slurmd and every process in NODE killed
#   cluster.sh node-up NODE            link up, slurmd started again (Slurm returns the node to service)
#   cluster.sh down                    stop everything and remove every object (also the remains of an
#                                      instance whose daemons died or whose `up` was killed)
#                                      `up` and `down` of one instance hold its lock: of two `up`s at
#                                      once one brings it up, the other is refused; `down` stops an `up`
#                                      still running and waits for another `down`
#   cluster.sh capture start DIR [--snaplen N] [--nodes node1,node2]
#                                      packet capture on every node's link and loopback (dtbench capture
#                                      record, libpcap, headers only) into DIR; docs/wire.md. --nodes
#                                      names each node once (a node twice, or one the instance lacks,
#                                      is refused and nothing starts)
#   cluster.sh capture stop            ends the capture; each node's pcap_stats and counters are in DIR
# Every command takes --name N (default dtbc; letters and digits, at most 8) to pick the instance.
# An option that takes a value, given without one (last, or before another --option), is a usage error
# (exit 2) naming it.
#
# RATE: a number with a unit, as tc writes it: 1gbit, 200mbit, 500kbit, or 0 for an unshaped link.
# Defaults: 4 nodes, 1gbit, C = G = 2 (Slurm is told each node has C CPUs and G gpus; the nodes
# share this machine's cores), SlurmdTimeout 10 s, subnet 10.78.0 (nodes .1 .. .K, the controller
# on the bridge at .254).
#
# Objects of instance N (names, so `down` finds them without the instance directory):
#   directory   ${DTBENCH_CLUSTER_ROOT:-/run/dtbench-cluster}/N: cluster.json, etc/ (slurm.conf,
#               gres.conf, hosts, slurmdbd.conf), munge/, pids/, log/, state/, spool/<node>, tmp/<node>,
#               gpu/<node>/gpuJ (the fake GPU files), ns/ (a private bind mount holding each node's uts and
#               mnt namespace), db/ (with --accounting: MariaDB's data, socket and pid file)
#   lock        ${DTBENCH_CLUSTER_ROOT:-/run/dtbench-cluster}/.N.lock (flock; "OP PID" of its holder), held
#               by `up` and `down`, removed with the instance. (.ports.lock beside it, one for every
#               instance, is held by an `up` while it picks its ports and starts slurmctld on them.)
#   network     experiments/impair/netns_world.sh with prefix N: network namespaces Nns0.., veth pairs
#               Nh<i> (bridge port) <-> Nv<i> (the node's link), bridge Nbr with the controller's address
#   processes   munged and slurmctld in the root namespaces, one slurmd per node (nsenter into the node);
#               with --accounting also mariadbd (127.0.0.1) and slurmdbd (every address) in the root namespaces
#
# tbf: rate R on both ends of every veth (the node's egress: its uplink; the bridge port's egress: its
# downlink). Bucket (burst) = 1 ms at R, at least 4 full frames: a burst can leave at line rate, so
# transfers much larger than it run at R. Queue (limit) = 10 ms at R, at least 64 frames: a switch
# port's buffer, shallow enough to keep queueing delay small (a star's or tree root's incast can
# overflow it at low rates: docs/cluster.md). netem is not used (absent in some kernels):
# added latency comes from dtbench's --inject-delay-ms, loss from experiments/impair.
#
# TCP congestion control: every node's namespace runs CC (cubic unless --congestion-control says
# otherwise), the default of a Linux kernel and so of a cluster's nodes, never the host's setting,
# which a new namespace would otherwise take: under bbr these links measured all-reduces below their
# bound in every launch at 1 Gbit/s (docs/cluster.md). netns_world.sh sets it (NW_TCP_CC).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=cluster.sh
die() { echo "$prog: error: $*" >&2; exit 1; }
usage_die() { echo "$prog: $*" >&2; echo "run '$prog --help' for the commands and options" >&2; exit 2; }
note() { echo "$prog: $*" >&2; }
# need_value CONTEXT OPTION WANT ARGC [NEXT]: the options parsers' check that OPTION (at $1 of ARGC
# arguments left) has a value: none (OPTION last), an empty one, or another option (--...) in its
# place is a usage error naming OPTION and what it wants (WANT), never a silent `shift` past the end.
need_value() {
  local context=$1 option=$2 want=$3 argc=$4 next=${5-}
  if ((argc < 2)) || [[ -z $next || $next == --* ]]; then usage_die "${context:+$context: }$option needs a value: $want"; fi
}

NAME=dtbc
WORKER=0  # 1 in the worker of an up or a down (run_worker)
ROOT=${DTBENCH_CLUSTER_ROOT:-/run/dtbench-cluster}

# ---------------------------------------------------------------------------------------------- names
dir_of() { echo "$ROOT/$NAME"; }
# While `up` runs, its pid (the instance's directory does not exist yet when it starts).
up_pid_file() { echo "$ROOT/.$NAME.up.pid"; }
# The instance's lock (flock), held by `up` and `down` from start to end ("lock" below).
lock_file() { echo "$ROOT/.$NAME.lock"; }
node_name() { echo "node$(($1 + 1))"; }             # index 0.. -> node1..
node_index() {                                      # node1.. -> index 0..; refuses other names
  local node=$1 k
  [[ $node =~ ^node([1-9][0-9]*)$ ]] || die "'$node' is not a node name (node1, node2, ...)"
  k=$(nw_size)
  ((BASH_REMATCH[1] <= k)) || die "no node $node: instance $NAME has $k node(s)"
  echo $((BASH_REMATCH[1] - 1))
}
uts_file() { echo "$(dir_of)/ns/$(node_name "$1").uts"; }
mnt_file() { echo "$(dir_of)/ns/$(node_name "$1").mnt"; }
ctl_addr() { echo "$NW_SUBNET.254"; }

# Runs CMD in node i's namespaces (network, hostname, mounts). nsenter, not `ip netns exec`, which
# remounts /sys and leaves slurmd unable to start its cgroup plugin.
in_node() {
  local i=$1; shift
  nsenter --net="/run/netns/$(nw_ns "$i")" --uts="$(uts_file "$i")" --mount="$(mnt_file "$i")" -- "$@"
}

# Pids of every process inside node i's network namespace.
node_pids() { ip netns pids "$(nw_ns "$1")" 2>/dev/null || true; }

kill_node_processes() {
  local i=$1 pids tries
  for tries in 1 2 3 4 5 6 7 8 9 10; do
    pids=$(node_pids "$i" | tr '\n' ' ')
    [[ -n ${pids// /} ]] || return 0
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    sleep 0.05
  done
  [[ -z $(node_pids "$i") ]] || note "processes still alive in $(node_name "$i"): $(node_pids "$i" | tr '\n' ' ')"
}

# ----------------------------------------------------------------------------------------------- rate
# "1gbit" -> 1000000000; "0" -> 0; refuses anything tc would read differently, and rates below 8kbit
# or above 1000gbit (beyond any link this emulates; tc would refuse them with a misleading message).
rate_bps() {
  awk -v r="$1" 'BEGIN {
    if (r == "0") { print 0; exit 0 }
    if (match(r, /^[0-9]+(\.[0-9]+)?/) == 0) exit 1
    n = substr(r, 1, RLENGTH); u = tolower(substr(r, RLENGTH + 1))
    if (u == "bit") m = 1; else if (u == "kbit") m = 1e3; else if (u == "mbit") m = 1e6;
    else if (u == "gbit") m = 1e9; else exit 1
    v = n * m; if (v < 8000 || v > 1e12) exit 1
    printf "%.0f\n", v }'
}
burst_bytes() { awk -v b="$1" 'BEGIN { x = b / 8 / 1000; if (x < 4 * 1514) x = 4 * 1514; printf "%d\n", x }'; }
limit_bytes() { awk -v b="$1" 'BEGIN { x = b / 8 / 100; if (x < 64 * 1514) x = 64 * 1514; printf "%d\n", x }'; }

# shape_link I BPS: tbf on both ends of node i's veth (0 removes it).
shape_link() {
  local i=$1 bps=$2 burst limit
  tc -n "$(nw_ns "$i")" qdisc del dev "$(nw_iface "$i")" root 2>/dev/null || true
  tc qdisc del dev "$(nw_host_iface "$i")" root 2>/dev/null || true
  ((bps > 0)) || return 0
  burst=$(burst_bytes "$bps") limit=$(limit_bytes "$bps")
  tc -n "$(nw_ns "$i")" qdisc add dev "$(nw_iface "$i")" root tbf rate "${bps}bit" burst "$burst" limit "$limit" ||
    die "tc refused tbf on $(nw_iface "$i") (kernel without sch_tbf?)"
  tc qdisc add dev "$(nw_host_iface "$i")" root tbf rate "${bps}bit" burst "$burst" limit "$limit" ||
    die "tc refused tbf on $(nw_host_iface "$i")"
}

# fit_gso_to_bursts: the largest GSO super-packet every link's tbf passes whole, on both ends of every
# veth. tbf cuts a GSO packet longer than its bucket into wire-sized segments in software, and every
# segment then crosses veth, bridge and the receiver's TCP alone: below ~520 Mbit/s (a bucket under
# 64 KB) that cost the ranks' cores 4 s of softirq in 8 ResNet-18 steps at 500 Mbit/s (0.1 s at 5 Gbit/s)
# and slowed their backward pass by half (docs/cluster.md). A packet of S segments counts S x 1514 bytes
# (1448 of payload, 66 of headers); one segment less than the smallest bucket holds leaves a margin
# for tbf's rounding of the bucket to time. Sockets opened afterwards take it (a run's, not Slurm's).
gso_segs_for_bursts() {
  local dir k i node bps burst segs=65535
  dir=$(dir_of) k=$(nw_size)
  for ((i = 0; i < k; i++)); do
    node=$(node_name "$i") bps=$(sed -n "s/^$node //p" "$dir/etc/rates")
    ((bps > 0)) || continue
    burst=$(burst_bytes "$bps")
    ((burst / 1514 - 1 < segs)) && segs=$((burst / 1514 - 1))
  done
  echo "$segs"
}
fit_gso_to_bursts() {
  local k i segs
  k=$(nw_size) segs=$(gso_segs_for_bursts)
  for ((i = 0; i < k; i++)); do
    ip -n "$(nw_ns "$i")" link set dev "$(nw_iface "$i")" gso_max_segs "$segs" ||
      die "cannot set gso_max_segs $segs on $(nw_iface "$i")"
    ip link set dev "$(nw_host_iface "$i")" gso_max_segs "$segs" || die "cannot set gso_max_segs $segs on $(nw_host_iface "$i")"
  done
}

# cluster.json from the live objects (rates read back from the instance's rates file).
write_cluster_json() {
  local dir k i bps node sep="" burst limit rate_json
  dir=$(dir_of) k=$(nw_size)
  {
    echo "{"
    echo "  \"name\": \"$NAME\","
    echo "  \"subnet\": \"$NW_SUBNET.0/24\","
    echo "  \"controller\": {\"address\": \"$(ctl_addr)\", \"port\": $(cat "$dir/etc/ctld_port")},"
    echo "  \"slurm_conf\": \"$dir/etc/slurm.conf\","
    echo "  \"tcp_congestion_control\": \"$(in_node 0 sysctl -n net.ipv4.tcp_congestion_control)\","
    echo "  \"gso_max_segs\": $(gso_segs_for_bursts),"
    if [[ -f $dir/etc/dbd_port ]]; then
      echo "  \"accounting\": {\"slurmdbd_port\": $(cat "$dir/etc/dbd_port"), \"mariadb_socket\": \"$dir/db/mariadb.sock\"},"
    else
      echo "  \"accounting\": null,"
    fi
    echo "  \"nodes\": ["
    for ((i = 0; i < k; i++)); do
      node=$(node_name "$i") bps=$(sed -n "s/^$node //p" "$dir/etc/rates")
      if ((bps > 0)); then
        rate_json=$bps burst=$(burst_bytes "$bps") limit=$(limit_bytes "$bps")
      else
        rate_json=null burst=null limit=null
      fi
      printf '%s    {"name": "%s", "address": "%s", "interface": "%s", "link_rate_bps": %s, "tbf_burst_bytes": %s, "tbf_limit_bytes": %s, "cpus": %s, "gpus": %s}' \
        "$sep" "$node" "$(nw_addr "$i")" "$(nw_iface "$i")" "$rate_json" "$burst" "$limit" "$(cat "$dir/etc/cpus")" "$(cat "$dir/etc/gpus")"
      sep=$',\n'
    done
    printf '\n  ]\n}\n'
  } >"$dir/cluster.json.new"
  mv "$dir/cluster.json.new" "$dir/cluster.json"
}

# -------------------------------------------------------------------------------------------- down
# The cluster's state is thrown away with it, so its daemons get SIGKILL (no orderly shutdown to wait for).
kill_pidfile() {
  local pid
  pid=$(pd_live_pid "$1" "$2") || return 0
  kill -KILL "$pid" 2>/dev/null || true
}

# The pids of this machine's process PID and its ancestors: the caller of `down`, never to be killed.
caller_tree() {
  local pid=$1
  while [[ -n $pid && $pid != 0 ]]; do
    echo "$pid"
    pid=$(awk '{print $4}' "/proc/$pid/stat" 2>/dev/null) || break
  done
}

# The instance's daemons in the root namespace (slurmctld with its slurmscriptd, slurmdbd, munged,
# MariaDB), also those an interrupted `up` started before they wrote their pid files: a process whose
# name (comm) is one of these daemons' and whose command line names the instance's directory (or,
# for slurmdbd, whose environment holds its slurm.conf). Never a pattern over every process: an editor
# or a `tail -f` of the instance's log, and the caller's own tree, are never among them.
instance_daemons() {
  local dir=$1 entry pid callers
  callers=" $(caller_tree $$ | tr '\n' ' ') $(caller_tree "$BASHPID" | tr '\n' ' ') "
  for entry in /proc/[0-9]*; do
    pid=${entry#/proc/}
    [[ $callers == *" $pid "* ]] && continue
    instance_daemon "$pid" "$dir"
  done
}

# PID when process PID is one of instance_daemons' for the instance in DIR; nothing, and nothing on
# stderr, when it is not or has gone (it may end between the listing of /proc and these reads: 2>
# comes before <, so that the failed open's message goes to /dev/null too).
instance_daemon() {
  local pid=$1 dir=$2 name
  read -r name 2>/dev/null <"/proc/$pid/comm" || return 0  # a builtin read: no process per entry
  case $name in
    slurmctld | slurmscriptd | slurmdbd | munged | mariadbd | mysqld) ;;
    *) return 0 ;;
  esac
  # (The environment only for slurmdbd: another instance's daemons may carry this one's slurm.conf
  # in theirs, inherited from a shell that ran this instance's env.)
  if tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$dir/" ||
    { [[ $name == slurmdbd ]] && grep -qzxF "SLURM_CONF=$dir/etc/slurm.conf" "/proc/$pid/environ" 2>/dev/null; }; then
    echo "$pid"
  fi
}

# Cancels every job of the instance while its slurmctld still runs, so that Slurm clients the user
# started (an `srun` in the background) end because their job ended, and waits (up to 5 s) for the
# queue to empty.
cancel_instance_jobs() {
  local dir=$1 tries ids
  [[ -f $dir/etc/slurm.conf ]] || return 0
  pd_live_pid "$dir/pids/slurmctld.daemon.pid" "$dir" >/dev/null || return 0
  ids=$(SLURM_CONF=$dir/etc/slurm.conf timeout 5 squeue -h -o %i 2>/dev/null | tr '\n' ' ') || true  # a slurmctld that does not answer: nothing to cancel
  [[ -n ${ids// /} ]] || return 0
  # shellcheck disable=SC2086
  SLURM_CONF=$dir/etc/slurm.conf timeout 5 scancel --quiet $ids 2>/dev/null || true
  for tries in $(seq 1 50); do
    [[ -z $(SLURM_CONF=$dir/etc/slurm.conf timeout 2 squeue -h -o %i 2>/dev/null) ]] && return 0
    sleep 0.1
  done
}

# An `up` of this instance still running (another process, not this one): killed first, so that it
# starts nothing after down has looked.
stop_running_up() {
  local pid tries
  [[ -s $(up_pid_file) ]] || return 0
  pid=$(tr -dc 0-9 <"$(up_pid_file)")
  if [[ -n $pid && $pid != "$$" ]] && { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qE -- "cluster\.sh .*(^| )up( |$)"; then
    kill -KILL "$pid" 2>/dev/null || true
    for tries in $(seq 1 100); do
      [[ -e /proc/$pid ]] || break
      sleep 0.02
    done
  fi
  rm -f -- "$(up_pid_file)"
}

cluster_down() {
  local dir i k status=0 f pid daemons tries
  dir=$(dir_of)
  k=$(nw_size)
  stop_running_up
  cancel_instance_jobs "$dir"
  for ((i = 0; i < k; i++)); do kill_node_processes "$i"; done
  kill_pidfile "$dir/pids/slurmctld.daemon.pid" "$dir"
  if pid=$(slurmdbd_pid); then kill -KILL "$pid" 2>/dev/null || true; fi
  kill_pidfile "$dir/db/mariadb.pid" "$dir"
  kill_pidfile "$dir/munge/munged.pid" "$dir"
  # Down returns once the daemons are gone (slurmscriptd and munged outlive a SIGKILL by a moment).
  for tries in $(seq 1 100); do
    daemons=$(instance_daemons "$dir" | tr '\n' ' ')
    [[ -n ${daemons// /} ]] || break
    # shellcheck disable=SC2086
    kill -KILL $daemons 2>/dev/null || true
    sleep 0.05
  done
  [[ -z $(instance_daemons "$dir") ]] || { note "down: daemons of $NAME still alive: $(instance_daemons "$dir" | tr '\n' ' ')"; status=1; }
  if [[ -d $dir/ns ]]; then
    for f in "$dir"/ns/*.uts "$dir"/ns/*.mnt; do
      [[ -e $f ]] || continue
      umount "$f" 2>/dev/null || true
    done
    while mountpoint -q "$dir/ns" 2>/dev/null; do umount "$dir/ns" || break; done
  fi
  nw_down || status=1
  if [[ -d $dir ]]; then
    if grep -qF " $dir/" /proc/self/mounts; then
      note "down: mounts under $dir remain: $(grep -F " $dir/" /proc/self/mounts | awk '{print $2}' | tr '\n' ' ')"
      status=1
    else
      rm -rf -- "$dir"
    fi
  fi
  return $status
}

# ------------------------------------------------------------------------------------------- lock
# `up` and `down` of one instance hold its lock (flock on lock_file) from start to end, so they never
# interleave: two `up`s at once each took the other's half-made objects for remains and both failed.
# The lock file holds "OP PID" of its holder; it is removed (by its holder) when no instance remains.
LOCK_FD=""

# "OP PID" of the live cluster.sh that wrote the lock file (its holder); fails when none is known: the
# holder has not written yet, or it died and a command it ran still holds the file for a moment.
lock_holder() {
  local op pid cmd
  { read -r op pid <"$(lock_file)"; } 2>/dev/null || return 1
  [[ $op =~ ^(up|down)$ && $pid =~ ^[0-9]+$ && $pid != "$$" ]] || return 1
  cmd=$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null) || return 1
  [[ $cmd =~ cluster\.sh\ (.*\ )?$op(\ |$) ]] || return 1
  echo "$op $pid"
}

# The processes that have the lock file open, "PID (COMMAND)" each (for a message).
lock_users() {
  local pid
  for pid in $(find /proc/[0-9]*/fd -maxdepth 1 -lname "$(lock_file)" 2>/dev/null | cut -d/ -f3 | sort -un); do
    [[ $pid == "$$" ]] || echo "$pid ($({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | cut -c1-100))"
  done
}

# cluster_lock OP: takes the instance's lock for OP (up or down), or exits saying who holds it. An
# `up` is refused at once while another `up` or a `down` of the instance runs (of two `up`s at once
# one brings it up); a `down` stops an `up` still running (SIGKILL: down removes what it made) and
# waits for another `down`. The lock taken must be the file at the path (a holder may remove it).
cluster_lock() {
  local op=$1 holder pid killed="" deadline
  mkdir -p "$ROOT"
  while :; do
    exec {LOCK_FD}<>"$(lock_file)"
    deadline=$((SECONDS + 15))
    until flock -n "$LOCK_FD"; do
      if holder=$(lock_holder); then
        pid=${holder#* }
        case $op:${holder% *} in
          up:up) die "up: cluster $NAME is being brought up by another process (pid $pid); wait for it, or stop it with '$prog --name $NAME down'" ;;
          up:down) die "up: cluster $NAME is being taken down by another process (pid $pid); try again when it is done" ;;
          down:up)
            if [[ $killed != "$pid" ]]; then
              note "down: stopping the up of $NAME still running (pid $pid)"
              # Its worker (run_stoppable) dies with it; what they started, down removes.
              kill -KILL "$pid" 2>/dev/null || true
              killed=$pid
            fi ;;
          down:down) deadline=$((SECONDS + 15)) ;;  # as long as the other down runs
        esac
      fi
      ((SECONDS < deadline)) ||
        die "$op: cluster $NAME is locked by another process: $(lock_file) is held by $(lock_users | paste -sd ';' -); try again when it is done"
      sleep 0.05
    done
    [[ $(stat -L -c %d:%i "/proc/$$/fd/$LOCK_FD") == "$(stat -c %d:%i "$(lock_file)" 2>/dev/null)" ]] && break
    exec {LOCK_FD}>&-
  done
  echo "$op $$" >"$(lock_file)"
}

# run_stoppable VAR COMMAND...: runs COMMAND (a program, not a function) as a child that dies with
# this shell (setpriv --pdeathsig: also when this shell is killed with SIGKILL), waits for it and sets
# VAR to its status; SIGINT or SIGTERM kills the child (SIGKILL) and sets VAR to 130 or 143. Why a
# child: bash 5.2 can fail to run a trap whose signal arrives while it parses a command substitution (it
# prints "trap: line 2: unexpected EOF while looking for matching `)'" and carries on as if no signal had
# come, or exits 2), and up and down run many of those; a shell waiting in `wait` parses nothing, so
# its traps always run. The child finds this shell's pid in DTBENCH_CLUSTER_PARENT (cluster.sh's
# worker checks it: a parent gone before the child started is a stop). Its own names start with _rs_, so
# VAR may be any other. It returns 0 and must be called as a plain command: on the left of || or && its
# traps' shell would run under ignored set -e.
run_stoppable() {
  local _rs_var=$1 _rs_signal="" _rs_child="" _rs_rc
  shift
  trap '_rs_signal=130' INT
  trap '_rs_signal=143' TERM
  DTBENCH_CLUSTER_PARENT=$$ setpriv --pdeathsig KILL -- "$@" &
  _rs_child=$!
  wait "$_rs_child" && _rs_rc=0 || _rs_rc=$?
  if [[ -n $_rs_signal ]]; then
    kill -KILL "$_rs_child" 2>/dev/null || true
    wait "$_rs_child" 2>/dev/null || true
    _rs_rc=$_rs_signal
  fi
  trap - INT TERM
  printf -v "$_rs_var" %s "$_rs_rc"
}

# run_worker VAR COMMAND ARGS...: this script's COMMAND (up or down) with ARGS, on this instance (its
# name and subnet as this process has them), as run_stoppable's worker, without the lock's descriptor.
run_worker() {
  local var=$1
  shift
  run_stoppable "$var" "$BASH" "$here/$prog" --name "$NAME" --subnet "$NW_SUBNET" "$@" {LOCK_FD}>&-
}

# At the end of an up or down that holds the lock: the lock file goes when no instance remains.
cluster_unlock() {
  local op pid
  { read -r op pid <"$(lock_file)"; } 2>/dev/null || return 0
  [[ $pid == "$$" && ! -e $(dir_of) ]] || return 0
  rm -f -- "$(lock_file)"
}

# --------------------------------------------------------------------------------------------- up
wait_until() {  # wait_until TENTHS COMMAND...: polls every 0.05 s
  local n=$(($1 * 2)); shift
  while ((n-- > 0)); do
    "$@" && return 0
    sleep 0.05
  done
  return 1
}

# The first port at or above START that nothing in the root namespace uses and that is not among TAKEN.
free_port() {
  local port=$1; shift
  while ss -Htan "( sport = :$port )" 2>/dev/null | grep -q . || [[ " $* " == *" $port "* ]]; do port=$((port + 1)); done
  echo "$port"
}

# slurmdbd's pid, from its pid file, when that process has the instance's slurm.conf in its environment
# (slurmdbd takes no config path on its command line; it reads slurmdbd.conf beside SLURM_CONF).
slurmdbd_pid() {
  local dir pid
  dir=$(dir_of)
  [[ -s $dir/pids/slurmdbd.pid ]] || return 1
  pid=$(tr -dc 0-9 <"$dir/pids/slurmdbd.pid")
  [[ -n $pid ]] && grep -qzxF "SLURM_CONF=$dir/etc/slurm.conf" "/proc/$pid/environ" 2>/dev/null || return 1
  echo "$pid"
}

# Accounting (--accounting): a MariaDB of the instance's own (pd_start_mariadb; root only through its
# socket, in a 0700 directory), a database user for slurmdbd (its password in slurmdbd.conf, root's,
# mode 600: slurmdbd refuses any other), slurmdbd, and the cluster registered in it. Needs slurm.conf
# written (sacctmgr finds slurmdbd through it) and runs before slurmctld starts, so slurmctld
# registers with a slurmdbd that knows the cluster.
start_accounting() {
  local dir=$1 db_port=$2 dbd_port=$3 pass t0 t1
  t0=$EPOCHREALTIME
  mkdir -m 0700 "$dir/db"
  pd_start_mariadb "$dir/db" "$dir/log" "$db_port" || die "up: MariaDB did not start (its log is above)"
  pass=$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')
  mariadb --no-defaults --socket="$dir/db/mariadb.sock" -uroot -e \
    "DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1'; CREATE USER 'slurmdbd'@'127.0.0.1' IDENTIFIED BY '$pass'; GRANT ALL ON slurm_acct_db.* TO 'slurmdbd'@'127.0.0.1';" \
    >"$dir/log/mariadb-user.log" 2>&1 || { pd_show_log "$dir/log/mariadb-user.log"; die "up: could not create MariaDB's user for slurmdbd"; }
  (umask 077 && cat >"$dir/etc/slurmdbd.conf" <<EOF
# Generated by experiments/cluster/cluster.sh for instance $NAME; see docs/cluster.md, "Accounting"
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
DbdHost=localhost
DbdPort=$dbd_port
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurmdbd
StoragePass=$pass
StorageLoc=slurm_acct_db
PidFile=$dir/pids/slurmdbd.pid
LogFile=$dir/log/slurmdbd.log
DebugLevel=info
EOF
  )
  chown root:root "$dir/etc/slurmdbd.conf"
  chmod 0600 "$dir/etc/slurmdbd.conf"
  SLURM_CONF=$dir/etc/slurm.conf setsid slurmdbd -D </dev/null >>"$dir/log/slurmdbd.out" 2>&1 &
  local dbd=$! deadline=$((SECONDS + 30))
  # A refused sacctmgr can take a second, so the wait is bounded by the clock, not by a count.
  until timeout 10 sacctmgr -n -P show cluster format=cluster >"$dir/log/sacctmgr.log" 2>&1; do
    if ! kill -0 "$dbd" 2>/dev/null || ((SECONDS >= deadline)); then
      pd_show_log "$dir/log/slurmdbd.out"; pd_show_log "$dir/log/sacctmgr.log"
      kill -0 "$dbd" 2>/dev/null && die "up: slurmdbd did not answer on port $dbd_port within 30 s (its log and sacctmgr's errors are above)"
      die "up: slurmdbd exited before answering (its log is above)"
    fi
    sleep 0.1
  done
  t1=$EPOCHREALTIME
  echo "$dbd_port" >"$dir/etc/dbd_port"
  echo "$db_port" >"$dir/etc/db_port"
  sacctmgr -i add cluster "$NAME" >"$dir/log/sacctmgr.log" 2>&1 ||
    { pd_show_log "$dir/log/sacctmgr.log"; die "up: sacctmgr could not register cluster $NAME with slurmdbd"; }
  note "up: accounting: MariaDB on 127.0.0.1:$db_port and slurmdbd on port $dbd_port answered $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s after MariaDB's start"
}

start_slurmd() {
  local i=$1 dir node
  dir=$(dir_of) node=$(node_name "$i")
  # A command of its own in the background, not in_node (a function): the subshell running a function
  # would stay between this shell and slurmd, holding what it holds open (an up's lock among it).
  nsenter --net="/run/netns/$(nw_ns "$i")" --uts="$(uts_file "$i")" --mount="$(mnt_file "$i")" -- \
    setsid slurmd -D -N "$node" -f "$dir/etc/slurm.conf" </dev/null >>"$dir/log/slurmd.$node.out" 2>&1 &
}
# The daemons write their own pid files (setsid may fork, so $! is not always the daemon).
slurmd_pid() { pd_live_pid "$(dir_of)/pids/slurmd.$(node_name "$1").daemon.pid" "$(dir_of)"; }

nodes_idle() {
  local want=$1 have
  have=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | grep -c . || true)
  ((have >= want))
}

# A node's hostname and mount namespaces, its link's shaping, its directories and fake GPUs. (One node
# after another: a background helper would outlive an `up` killed half-way and race the `down`.)
setup_node() {
  local i=$1 bps=$2 gpus=$3 dir node j
  dir=$(dir_of) node=$(node_name "$i")
  touch "$(uts_file "$i")" "$(mnt_file "$i")"
  unshare --uts="$(uts_file "$i")" --mount="$(mnt_file "$i")" --propagation private \
    sh -c "hostname $node && mount --bind $dir/etc/hosts /etc/hosts" ||
    die "up: cannot create the hostname and mount namespaces of $node"
  shape_link "$i" "$bps"
  mkdir -p "$dir/spool/$node" "$dir/tmp/$node" "$dir/gpu/$node"
  for ((j = 0; j < gpus; j++)); do : >"$dir/gpu/$node/gpu$j"; done
}

cluster_up() {
  local given=("$@")
  local k=4 rate=1gbit cpus=2 gpus=2 timeout=10 accounting=0 cc=cubic
  while (($#)); do
    case $1 in
      --nodes) need_value up "$1" "a number of nodes, 1..64" "$#" "${2-}"; k=$2; shift ;;
      --rate) need_value up "$1" "a rate such as 1gbit or 200mbit (8kbit to 1000gbit), or 0 for unshaped links" "$#" "${2-}"; rate=$2; shift ;;
      --cpus) need_value up "$1" "the number of CPUs Slurm is told each node has, 1 or more" "$#" "${2-}"; cpus=$2; shift ;;
      --gpus) need_value up "$1" "the number of gpus per node, 0..16" "$#" "${2-}"; gpus=$2; shift ;;
      --slurmd-timeout) need_value up "$1" "Slurm's SlurmdTimeout in seconds, 3 or more" "$#" "${2-}"; timeout=$2; shift ;;
      --accounting) accounting=1 ;;
      --congestion-control) need_value up "$1" "a TCP congestion control of this kernel, such as cubic, reno or bbr" "$#" "${2-}"; cc=$2; shift ;;
      *) usage_die "up: unknown option '$1'" ;;
    esac
    shift
  done
  [[ $k =~ ^[0-9]+$ ]] && ((k >= 1 && k <= 64)) || usage_die "up: --nodes must be a whole number in 1..64, got '$k'"
  [[ $cpus =~ ^[0-9]+$ ]] && ((cpus >= 1)) || usage_die "up: --cpus must be a positive whole number, got '$cpus'"
  [[ $gpus =~ ^[0-9]+$ ]] && ((gpus <= 16)) || usage_die "up: --gpus must be a whole number in 0..16, got '$gpus'"
  [[ $timeout =~ ^[0-9]+$ ]] && ((timeout >= 3)) || usage_die "up: --slurmd-timeout must be a whole number of seconds >= 3, got '$timeout'"
  [[ $cc =~ ^[a-z][a-z0-9_]{0,15}$ ]] || usage_die "up: --congestion-control must name a TCP congestion control (cubic, reno, bbr, ...), got '$cc'"
  local bps
  bps=$(rate_bps "$rate") || usage_die "up: --rate '$rate' is not a rate: give a number with bit, kbit, mbit or gbit (e.g. 1gbit, 200mbit; from 8kbit to 1000gbit), or 0 for unshaped links"
  require
  local cmd
  for cmd in munged mungekey slurmctld slurmd sinfo scontrol nsenter unshare mountpoint; do
    command -v "$cmd" >/dev/null || die "$cmd not found: install Debian's slurm-wlm, munge and util-linux (scripts/install_deps.sh)"
  done
  if ((accounting)); then
    for cmd in mariadbd mariadb-install-db mariadb-admin mariadb slurmdbd sacctmgr; do
      command -v "$cmd" >/dev/null || die "up --accounting: $cmd not found: install Debian's slurmdbd and mariadb-server (scripts/install_deps.sh)"
    done
  fi
  if ((WORKER)); then
    up_make "$k" "$rate" "$bps" "$cpus" "$gpus" "$timeout" "$accounting" "$cc"
    return
  fi
  # Until the making starts, Ctrl-C or SIGTERM ends up at once: nothing is made yet, and the lock goes
  # with the process (a lock file naming a dead process is no holder).
  trap 'cluster_unlock' EXIT
  cluster_lock up
  up_check_free
  # The making runs in a worker (run_worker), without the lock's descriptor (bash keeps it open,
  # close-on-exec, in this process only): nothing up starts holds the lock, or a daemon would hold it
  # for as long as it lives. This process keeps the lock, and removes what was made when the making
  # fails or a signal stops it, ignoring further signals until that is done.
  local rc
  run_worker rc up "${given[@]+"${given[@]}"}"
  if ((rc != 0)); then
    trap '' INT TERM
    note "up failed: removing what it made"
    cluster_down >/dev/null 2>&1 || true
  fi
  exit "$rc"  # through the EXIT trap: the lock file goes when no instance remains
}

# Under the instance's lock, before anything is made: the remains of an earlier instance are cleared,
# and an instance that is up, or a subnet in use, is refused.
up_check_free() {
  local dir
  dir=$(dir_of)
  if [[ -e $dir || -n $(nw_leftovers) ]]; then
    # Up means finished: cluster.json is its last step. Live daemons without it are the remains of
    # an up that was killed after starting them, cleared like any other remains.
    if [[ -f $dir/cluster.json ]] && pd_live_pid "$dir/pids/slurmctld.daemon.pid" "$dir" >/dev/null; then
      die "up: cluster $NAME is already up ($dir); '$prog --name $NAME down' first, or pick another --name"
    fi
    note "up: clearing the remains of an earlier instance $NAME"
    cluster_down || die "up: the remains of instance $NAME could not be removed; see the messages above"
  fi
  if ip -o -4 addr show 2>/dev/null | grep -q " inet $NW_SUBNET\."; then
    die "up: subnet $NW_SUBNET.0/24 is already in use on this machine; choose another with --subnet A.B.C"
  fi
}

# The making of an instance (cluster_up's checked options as arguments), in up's worker: a failure
# exits it, and the up that started the worker removes everything made so far.
up_make() {
  local k=$1 rate=$2 bps=$3 cpus=$4 gpus=$5 timeout=$6 accounting=$7 cc=$8
  local dir
  dir=$(dir_of)
  local t0=$EPOCHREALTIME
  mkdir -p "$ROOT"
  echo "$BASHPID" >"$(up_pid_file)"
  # Every daemon up starts has this instance's slurm.conf in its environment, never one its caller had
  # (a shell that ran another instance's env): down finds slurmdbd by it.
  export SLURM_CONF=$dir/etc/slurm.conf
  mkdir -m 0755 "$dir"  # munged refuses a socket directory that is not 0755 (and its parents writable by others)
  mkdir -p "$dir"/{etc,pids,log,state,spool,tmp,gpu,ns}
  mkdir -m 0755 "$dir/munge"
  echo "$cpus" >"$dir/etc/cpus"; echo "$gpus" >"$dir/etc/gpus"; echo "$NW_SUBNET" >"$dir/etc/subnet"

  # Network: namespaces, veths, bridge (netns_world.sh), the controller's address on the bridge.
  NW_TCP_CC=$cc nw_up "$k" >/dev/null || die "up: the network could not be built (see above)"
  ip addr add "$(ctl_addr)/24" dev "$(nw_bridge)"

  # Node names for every node (and the controller), in a private /etc/hosts per node.
  local i node
  {
    echo "127.0.0.1 localhost"
    echo "$(ctl_addr) $(hostname -s)-ctl controller"
    for ((i = 0; i < k; i++)); do echo "$(nw_addr "$i") $(node_name "$i")"; done
  } >"$dir/etc/hosts"
  # The ns directory is a private mount, as persistent namespace files require.
  mount --bind "$dir/ns" "$dir/ns"
  mount --make-private "$dir/ns"
  : >"$dir/etc/rates"
  for ((i = 0; i < k; i++)); do
    setup_node "$i" "$bps" "$gpus"
    echo "$(node_name "$i") $bps" >>"$dir/etc/rates"
  done
  fit_gso_to_bursts

  # munge: a key and socket of the cluster's own.
  local sock=$dir/munge/munge.socket
  pd_start_munge "$dir/munge" "$dir/log" || die "up: munge did not start (see above)"

  # The ports are chosen, and slurmctld (with --accounting, MariaDB and slurmdbd before it) listens on
  # them, under the lock of this machine's instances' ports: two ups at once (of two names) would
  # otherwise take the same free port, and one slurmctld would fail to bind it. This shell holds it;
  # the daemons start with it closed (bash keeps its copy close-on-exec, as for the instance's lock).
  local ports_fd
  exec {ports_fd}<>"$ROOT/.ports.lock"
  flock -w 120 "$ports_fd" ||
    die "up: the lock of this machine's cluster ports, $ROOT/.ports.lock, stayed held for 2 minutes"
  { # ---------------------------------------------------------------------- under the ports lock
  # slurm.conf and gres.conf.
  local port ctl_host db_port="" dbd_port="" acct_lines="AccountingStorageType=accounting_storage/none"
  port=$(free_port 6817)
  echo "$port" >"$dir/etc/ctld_port"
  if ((accounting)); then
    dbd_port=$(free_port 6819 "$port") db_port=$(free_port 3307 "$port" "$dbd_port")
    # slurmdbd listens on every address: the controller's address reaches it from the nodes too.
    # AccountingStoragePass names the munge socket for connections to slurmdbd (AuthInfo's is not
    # used for them; without it sacct and slurmctld try the machine's default munged).
    acct_lines="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=$(ctl_addr)
AccountingStoragePort=$dbd_port
AccountingStoragePass=$sock
AccountingStorageTRES=gres/gpu"
  fi
  ctl_host=$(hostname -s)
  local nodes_line=""
  {
    echo "# Generated by experiments/cluster/cluster.sh for instance $NAME ($k nodes); see docs/cluster.md"
    echo "AutoDetect=off"
    for ((i = 0; i < k; i++)); do
      node=$(node_name "$i")
      ((gpus > 0)) && echo "NodeName=$node Name=gpu File=$dir/gpu/$node/gpu[0-$((gpus - 1))]"
    done
  } >"$dir/etc/gres.conf"
  [[ $gpus -gt 0 ]] && nodes_line=" Gres=gpu:$gpus"
  cat >"$dir/etc/slurm.conf" <<EOF
# Generated by experiments/cluster/cluster.sh for instance $NAME ($k nodes); see docs/cluster.md
ClusterName=$NAME
SlurmctldHost=$ctl_host($(ctl_addr))
SlurmctldPort=$port
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/pids/slurmctld.daemon.pid
SlurmdPidFile=$dir/pids/slurmd.%n.daemon.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$dir/tmp/%n
PlugStackConfig=$dir/etc/plugstack.conf
GresTypes=gpu
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
$acct_lines
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
JobRequeue=1
MinJobAge=600
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=$timeout
MessageTimeout=5
TreeWidth=64
EOF
  for ((i = 0; i < k; i++)); do
    echo "NodeName=$(node_name "$i") NodeAddr=$(nw_addr "$i") NodeHostname=$(node_name "$i") CPUs=$cpus RealMemory=1024$nodes_line State=UNKNOWN" >>"$dir/etc/slurm.conf"
  done
  echo "PartitionName=cluster Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$dir/etc/slurm.conf"
  : >"$dir/etc/plugstack.conf"
  ((accounting == 0)) || start_accounting "$dir" "$db_port" "$dbd_port"

  setsid slurmctld -D -c -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmctld.out" 2>&1 &
  local ctld=$!
  ctld_up() { scontrol ping 2>/dev/null | grep -q UP || ! kill -0 "$ctld" 2>/dev/null; }
  wait_until 100 ctld_up
  scontrol ping 2>/dev/null | grep -q UP ||
    { pd_show_log "$dir/log/slurmctld.log"; pd_show_log "$dir/log/slurmctld.out"; die "slurmctld did not come up on $(ctl_addr):$port"; }
  } {ports_fd}>&- # ------------------------------------------------------ end of the ports lock
  exec {ports_fd}>&-
  for ((i = 0; i < k; i++)); do start_slurmd "$i"; done
  if ! wait_until 300 nodes_idle "$k"; then
    sinfo -N >&2 || true
    for ((i = 0; i < k; i++)); do pd_show_log "$dir/log/slurmd.$(node_name "$i").log"; done
    die "the nodes did not all become idle within 30 s"
  fi
  write_cluster_json
  rm -f -- "$(up_pid_file)"
  local took
  took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
  note "up: $NAME, $k nodes (node1..$(node_name $((k - 1)))), links $rate, $cpus CPUs and $gpus gpus per node, in $took s; Slurm $(sinfo --version | awk '{print $2}') partition 'cluster'$( ((accounting)) && echo ", accounting (sacct)")"
  note "use it with: eval \"\$($here/$prog --name $NAME env)\""
}

# ------------------------------------------------------------------------------------- other commands
require_up() {
  [[ -f $(dir_of)/cluster.json ]] || die "no cluster $NAME is up (no $(dir_of)/cluster.json); start one with '$prog up'"
}

cluster_env() {
  require_up
  local dir
  dir=$(dir_of)
  echo "export SLURM_CONF=$dir/etc/slurm.conf"
  echo "export DTBENCH_CLUSTER=$dir/cluster.json"
  # Open MPI's TCP transport and its out-of-band channel on the cluster's links only.
  echo "export OMPI_MCA_btl_tcp_if_include=$NW_SUBNET.0/24"
  echo "export OMPI_MCA_oob_tcp_if_include=$NW_SUBNET.0/24"
}

cluster_status() {
  require_up
  local dir i k node
  dir=$(dir_of) k=$(nw_size)
  export SLURM_CONF=$dir/etc/slurm.conf
  echo "cluster $NAME: $k node(s), subnet $NW_SUBNET.0/24, controller $(ctl_addr):$(cat "$dir/etc/ctld_port") (slurmctld $(pd_live_pid "$dir/pids/slurmctld.daemon.pid" "$dir" >/dev/null && echo up || echo DOWN))"
  if [[ -f $dir/etc/dbd_port ]]; then
    echo "accounting: slurmdbd $(ctl_addr):$(cat "$dir/etc/dbd_port") ($(slurmdbd_pid >/dev/null && echo up || echo DOWN)), MariaDB 127.0.0.1:$(cat "$dir/etc/db_port") socket $dir/db/mariadb.sock ($(pd_live_pid "$dir/db/mariadb.pid" "$dir" >/dev/null && echo up || echo DOWN))"
  else
    echo "accounting: none (up --accounting adds slurmdbd and MariaDB)"
  fi
  echo "tcp congestion control: $(in_node 0 sysctl -n net.ipv4.tcp_congestion_control) in the nodes (the host's own: $(sysctl -n net.ipv4.tcp_congestion_control))"
  for ((i = 0; i < k; i++)); do
    node=$(node_name "$i")
    local link slurmd up_drops down_drops
    link=$(ip -n "$(nw_ns "$i")" -br link show "$(nw_iface "$i")" 2>/dev/null | awk '{print $2}')
    slurmd=$(slurmd_pid "$i" >/dev/null && echo up || echo down)
    up_drops=$(in_node "$i" tc -s qdisc show dev "$(nw_iface "$i")" 2>/dev/null | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n1)
    down_drops=$(tc -s qdisc show dev "$(nw_host_iface "$i")" 2>/dev/null | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n1)
    printf '%-7s %-12s link %-5s rate %-12s slurmd %-4s tbf drops up %s down %s\n' "$node" "$(nw_addr "$i")" "$link" \
      "$(sed -n "s/^$node //p" "$dir/etc/rates")bit/s" "$slurmd" "${up_drops:-0}" "${down_drops:-0}"
  done
  sinfo -N -o '%N %T %c %G' 2>/dev/null || echo "(sinfo failed: slurmctld not answering)"
}

cluster_rate() {
  require_up
  local rate=${1:-} bps i k node dir
  [[ -n $rate ]] || usage_die "rate: give a RATE (e.g. 200mbit, or 0 for unshaped) and optionally nodes"
  bps=$(rate_bps "$rate") || usage_die "rate: '$rate' is not a rate (e.g. 1gbit, 200mbit, from 8kbit to 1000gbit, or 0)"
  shift
  dir=$(dir_of) k=$(nw_size)
  local targets=()
  if (($#)); then for node in "$@"; do targets+=("$(node_index "$node")"); done; else for ((i = 0; i < k; i++)); do targets+=("$i"); done; fi
  for i in "${targets[@]}"; do
    node=$(node_name "$i")
    shape_link "$i" "$bps"
    sed -i "s/^$node .*/$node $bps/" "$dir/etc/rates"
  done
  fit_gso_to_bursts
  write_cluster_json
  note "rate: ${#targets[@]} link(s) at $rate"
}

cluster_exec() {
  require_up
  local i
  i=$(node_index "${1:-}")
  shift
  (($#)) || usage_die "exec: give a command to run in the node"
  export SLURM_CONF DTBENCH_CLUSTER
  SLURM_CONF=$(dir_of)/etc/slurm.conf DTBENCH_CLUSTER=$(dir_of)/cluster.json
  exec nsenter --net="/run/netns/$(nw_ns "$i")" --uts="$(uts_file "$i")" --mount="$(mnt_file "$i")" -- "$@"
}

node_down() {
  require_up
  local i node dir
  i=$(node_index "${1:-}")  # on its own: exits naming a NODE missing or not the instance's
  node=$1 dir=$(dir_of)
  # The link first, so peers see packets vanish (no FIN, no RST), then everything in the node.
  ip link set "$(nw_host_iface "$i")" down
  in_node "$i" ip link set "$(nw_iface "$i")" down
  kill_node_processes "$i"
  note "node-down: $node lost power (link down, slurmd and every process in it killed); Slurm marks it DOWN after SlurmdTimeout"
}

node_up() {
  require_up
  local i node dir
  i=$(node_index "${1:-}")  # on its own: exits naming a NODE missing or not the instance's
  node=$1 dir=$(dir_of)
  in_node "$i" ip link set "$(nw_iface "$i")" up
  ip link set "$(nw_host_iface "$i")" up
  if ! slurmd_pid "$i" >/dev/null; then
    SLURM_CONF=$dir/etc/slurm.conf start_slurmd "$i"
  fi
  note "node-up: $node link up, slurmd started; Slurm returns it to service when it registers"
}

require() {
  [[ $(id -u) -eq 0 ]] || die "must run as root: namespaces, bridges, tc and slurmd need it (run it with sudo)"
  nw_require
}

# ---------------------------------------------------------------------------------------- capture
# One `dtbench capture record` per node, inside the node's namespaces (it captures what the node's
# link carries, after its shaper, and the node's loopback). State: <instance>/capture/{dir,<node>.pid}.
dtbench_binary() {
  local bin=${DTBENCH:-$here/../../build/dtbench}
  [[ -x $bin ]] || die "capture: no dtbench binary at $bin: build it, or name it with DTBENCH=/path/to/dtbench"
  (cd "$(dirname "$bin")" && echo "$PWD/$(basename "$bin")")
}

capture_start() {
  local out="" snaplen=128 nodes="" state dir k i node bin
  while (($#)); do
    case $1 in
      --snaplen) need_value "capture start" "$1" "the bytes kept of each packet, 64..262144" "$#" "${2-}"; snaplen=$2; shift ;;
      --nodes) need_value "capture start" "$1" "a comma-separated list of nodes, such as node1,node2" "$#" "${2-}"; nodes=$2; shift ;;
      -*) usage_die "capture start: unknown option '$1'" ;;
      *) [[ -z $out ]] || usage_die "capture start: one output directory, got '$out' and '$1'"; out=$1 ;;
    esac
    shift
  done
  [[ -n $out ]] || usage_die "capture start: give the directory the pcaps go to"
  [[ $snaplen =~ ^[0-9]+$ ]] && ((snaplen >= 64 && snaplen <= 262144)) || usage_die "capture start: --snaplen must be 64..262144 bytes, got '$snaplen'"
  require_up
  dir=$(dir_of) state=$dir/capture k=$(nw_size)
  # The nodes, each once (one recorder per node: `capture stop` stops one per node), all checked
  # before anything is made: a node the instance lacks or one named twice starts nothing.
  local targets=()
  if [[ -n $nodes ]]; then
    local n idx seen=" "
    IFS=, read -r -a n <<<"$nodes"
    for node in "${n[@]}"; do
      idx=$(node_index "$node")  # exits naming a node that is not one of the instance's
      [[ $seen != *" $idx "* ]] || usage_die "capture start: --nodes names $node twice ('$nodes'); name each node once"
      seen+="$idx "
      targets+=("$idx")
    done
  else
    for ((i = 0; i < k; i++)); do targets+=("$i"); done
  fi
  [[ ! -e $state/dir ]] || die "capture start: a capture into $(cat "$state/dir") is running; '$prog capture stop' first"
  bin=$(dtbench_binary)
  mkdir -p "$out" "$state"
  out=$(cd "$out" && pwd)
  echo "$out" >"$state/dir"
  for i in "${targets[@]}"; do
    node=$(node_name "$i")
    rm -f "$out/$node.ready"
    # exec: the background job becomes the recorder itself (nsenter execs it), so $! is its pid.
    (exec nsenter --net="/run/netns/$(nw_ns "$i")" --uts="$(uts_file "$i")" --mount="$(mnt_file "$i")" -- \
      "$bin" capture record --node "$node" --interface "$(nw_iface "$i"),lo" --snaplen "$snaplen" --output "$out") \
      </dev/null >"$out/$node.record.log" 2>&1 &
    echo $! >"$state/$node.pid"
  done
  for i in "${targets[@]}"; do
    node=$(node_name "$i")
    local pid
    pid=$(cat "$state/$node.pid")
    is_ready() { [[ -e $out/$node.ready ]] || ! kill -0 "$pid" 2>/dev/null; }
    wait_until 100 is_ready
    if [[ ! -e $out/$node.ready ]]; then
      cat "$out/$node.record.log" >&2 || true
      capture_stop >/dev/null 2>&1 || true
      die "capture start: the recorder on $node did not start (its log is above)"
    fi
  done
  note "capture: ${#targets[@]} node(s) recording their link and loopback into $out (snap length $snaplen); '$prog capture stop' ends it"
}

capture_stop() {
  require_up
  local dir state out pidfile node pid status=0 n=0
  dir=$(dir_of) state=$dir/capture
  [[ -e $state/dir ]] || die "capture stop: no capture is running"
  out=$(cat "$state/dir")
  for pidfile in "$state"/*.pid; do
    [[ -e $pidfile ]] || continue
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pidfile in "$state"/*.pid; do
    [[ -e $pidfile ]] || continue
    node=$(basename "$pidfile" .pid) pid=$(cat "$pidfile")
    gone() { ! kill -0 "$pid" 2>/dev/null; }
    wait_until 300 gone || { kill -KILL "$pid" 2>/dev/null || true; note "capture stop: the recorder on $node did not end within 30 s; killed"; status=1; }
    wait "$pid" 2>/dev/null || true
    if [[ ! -s $out/$node.capture.json ]]; then
      note "capture stop: $node wrote no capture.json; its log:"; cat "$out/$node.record.log" >&2 || true; status=1
    elif grep -q '"pcap_dropped": *[1-9]' "$out/$node.capture.json"; then
      note "capture stop: $node's capture DROPPED packets (pcap_stats in $out/$node.capture.json): the tables will be incomplete"; status=1
    fi
    rm -f "$pidfile"
    n=$((n + 1))
  done
  rm -f "$state/dir"
  note "capture: stopped on $n node(s); tables: dtbench capture analyze $out [--messages DIR]"
  return $status
}

cluster_capture() {
  local sub=${1:-}
  (($#)) && shift
  case $sub in
    start) capture_start "$@" ;;
    stop) capture_stop "$@" ;;
    *) usage_die "capture: use 'capture start DIR [--snaplen N] [--nodes LIST]' or 'capture stop'" ;;
  esac
}

# ------------------------------------------------------------------------------------------- main
main() {
  local args=() subnet=""
  while (($#)); do
    case $1 in
      --name) need_value "" "$1" "an instance name (lower-case letters and digits, starting with a letter, at most 8)" "$#" "${2-}"; NAME=$2; shift ;;
      --subnet) need_value "" "$1" "the first three octets of a /24, such as 10.78.0" "$#" "${2-}"; subnet=$2; shift ;;
      -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
      *) args+=("$1") ;;
    esac
    shift
  done
  [[ $NAME =~ ^[a-z][a-z0-9]{0,7}$ ]] || usage_die "--name '$NAME' must be lower-case letters and digits, starting with a letter, at most 8 characters"
  # A live instance keeps the subnet it was made with.
  if [[ -z $subnet ]]; then subnet=$(cat "$(dir_of)/etc/subnet" 2>/dev/null || echo 10.78.0); fi
  # shellcheck source=../impair/netns_world.sh
  source "$here/../impair/netns_world.sh"
  # shellcheck source=private_daemons.sh
  source "$here/private_daemons.sh"
  NW_PREFIX=$NAME NW_SUBNET=$subnet
  # GSO on the veths: 64 KB super-packets cross veth and bridge as one skb. With one segment per packet
  # (netns_world's default, for exact loss) these 2 cores forward only ~180 Mbit/s per flow whatever
  # the shaping; with GSO a 1 Gbit/s link carries 956 Mbit/s of TCP payload, its full payload rate.
  # tbf still counts every segment's headers (the kernel's per-segment packet length), so shaping and
  # the bound stay exact (docs/cluster.md).
  NW_GSO_MAX_SEGS=65535
  # As the worker of an up or a down (run_worker): gone at once if its parent went before it started.
  if [[ -n ${DTBENCH_CLUSTER_PARENT:-} ]]; then
    [[ $PPID == "$DTBENCH_CLUSTER_PARENT" ]] || exit 143
    WORKER=1
    unset DTBENCH_CLUSTER_PARENT
  fi
  set -- "${args[@]+"${args[@]}"}"
  local command=${1:-}
  (($#)) && shift
  case $command in
    up) cluster_up "$@" ;;
    down)
      require
      if ((WORKER)); then
        cluster_down
        return
      fi
      trap 'cluster_unlock' EXIT
      cluster_lock down
      local rc
      run_worker rc down
      exit "$rc"  # through the EXIT trap
      ;;
    env) cluster_env ;;
    status) cluster_status ;;
    rate) require; cluster_rate "$@" ;;
    exec) require; cluster_exec "$@" ;;
    node-down) require; node_down "$@" ;;
    node-up) require; node_up "$@" ;;
    capture) require; cluster_capture "$@" ;;
    "") usage_die "give a command: up, down, env, status, rate, exec, node-down, node-up or capture" ;;
    *) usage_die "unknown command '$command'; use up, down, env, status, rate, exec, node-down, node-up or capture" ;;
  esac
}

# Run, not sourced (a test sources this file for its functions).
[[ ${BASH_SOURCE[0]} != "$0" ]] || main "$@"
