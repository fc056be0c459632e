#!/bin/bash
# A live one-node Slurm cluster for tests, from Debian's slurm-wlm and munge packages, as root.
#
#   eval "$(tests/slurm/live_slurm.sh start)"   # prints: export LIVE_SLURM_DIR=...; export SLURM_CONF=...
#   sinfo; sbatch ...; squeue
#   tests/slurm/live_slurm.sh env  [DIR]        # the same export lines again
#   tests/slurm/live_slurm.sh stop [DIR]        # DIR defaults to $LIVE_SLURM_DIR
#
# Every instance lives in its own temporary directory (mktemp, under $TMPDIR or /tmp): a munge key
# and socket of its own, a slurm.conf generated for this machine (CPUs from nproc, RealMemory from
# /proc/meminfo minus a margin, NodeName from `hostname -s`, partition `debug`), free TCP ports
# of its own, state, spool and logs. Nothing under /etc is read or changed: clients find the
# cluster through SLURM_CONF. `stop` kills exactly the daemons this instance started (their pid
# files, checked against /proc/PID/cmdline) and removes the directory. `start` first clears the
# remains of crashed instances (whose starting process is gone): their daemons and directories.
#
# Environment: LIVE_SLURM_CPUS (default nproc), LIVE_SLURM_MEM_MARGIN_MB (default 1024),
# LIVE_SLURM_WAIT (seconds to wait for the node to become idle, default 60).
set -euo pipefail

prog=live_slurm.sh
die() { echo "$prog: error: $*" >&2; exit 1; }
note() { echo "$prog: $*" >&2; }

base=${TMPDIR:-/tmp}
prefix=live-slurm

# pd_live_pid, pd_show_log, pd_start_munge
# shellcheck source=../../experiments/cluster/private_daemons.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../../experiments/cluster/private_daemons.sh"

# Stop the daemons of instance DIR (slurmd, slurmctld, munged, in that order) and remove DIR.
stop_instance() {
  local dir=$1 name pid waited
  [[ -d $dir && -f $dir/instance ]] || die "$dir is not a live Slurm instance directory"
  local file
  for file in pids/slurmd.pid pids/slurmctld.pid munge/munged.pid; do  # munged writes its own
    name=$(basename "$file" .pid)
    pid=$(pd_live_pid "$dir/$file" "$dir") || continue
    kill -TERM "$pid" 2>/dev/null || true
    for waited in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      note "$name (pid $pid) ignored SIGTERM for 5 s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  # Job processes this instance's slurmd left behind: slurmstepd, and the tasks (they carry
  # SLURM_JOB_ID), whose environment names this instance's slurm.conf.
  local environ
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}; pid=${pid%/environ}
    [[ $pid == "$$" ]] && continue
    tr '\0' '\n' 2>/dev/null <"$environ" | grep -qxF "SLURM_CONF=$dir/etc/slurm.conf" || continue
    if [[ $(cat "/proc/$pid/comm" 2>/dev/null) == slurmstepd ]] ||
       tr '\0' '\n' 2>/dev/null <"$environ" | grep -q '^SLURM_JOB_ID='; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  rm -rf -- "$dir"
}

# Instances whose starter is gone (a crashed or killed test) are stopped and removed.
clear_stale() {
  local dir starter
  for dir in "$base"/$prefix.*; do
    [[ -d $dir && -f $dir/instance ]] || continue
    starter=$(cat "$dir/starter.pid" 2>/dev/null || true)
    if [[ -n $starter ]] && kill -0 "$starter" 2>/dev/null; then
      continue  # in use by a running process
    fi
    note "clearing stale instance $dir (starter ${starter:-?} is gone)"
    stop_instance "$dir" || true
  done
}

port_in_use() { ss -Htan "( sport = :$1 )" 2>/dev/null | grep -q .; }

# A TCP port free now, between dtbench's Slurm rendezvous ports (10000-29999) and the ephemeral
# range.
free_port() {
  local p tries
  for tries in $(seq 1 200); do
    p=$((30100 + RANDOM % 2600))
    if ! port_in_use "$p" && [[ " ${used_ports:-} " != *" $p "* ]]; then
      used_ports="${used_ports:-} $p"
      echo "$p"
      return 0
    fi
  done
  die "no free TCP port found in 30100-32699"
}

env_lines() {
  local dir=$1
  echo "export LIVE_SLURM_DIR=$dir"
  echo "export SLURM_CONF=$dir/etc/slurm.conf"
}

start() {
  [[ $(id -u) == 0 ]] || die "must run as root (slurmd runs jobs as their user)"
  local cmd
  for cmd in munged mungekey slurmctld slurmd sinfo scontrol ss hostname nproc; do
    command -v "$cmd" >/dev/null || die "$cmd not found (install Debian's slurm-wlm and munge)"
  done
  clear_stale

  local dir
  dir=$(mktemp -d "$base/$prefix.XXXXXX") || die "cannot create a temporary directory in $base"
  chmod 0755 "$dir"  # munged refuses group/world-writable parents; jobs of other users may read
  mkdir -p "$dir"/{etc,munge,pids,log,state,spool,tmp}
  chmod 0700 "$dir/munge"
  echo "${LIVE_SLURM_STARTER:-$PPID}" >"$dir/starter.pid"
  touch "$dir/instance"
  # From here on, a failure removes what was started.
  trap 'rc=$?; if [[ $rc != 0 ]]; then stop_instance "'"$dir"'" 2>/dev/null || true; fi' EXIT

  # --- munge: a key and a socket of this instance's own.
  local sock=$dir/munge/munge.socket i ok
  pd_start_munge "$dir/munge" "$dir/log" || die "munged did not come up (see above)"

  # --- slurm.conf for this machine.
  local node cpus mem_kb margin mem ctld_port slurmd_port select
  node=$(hostname -s)
  cpus=${LIVE_SLURM_CPUS:-$(nproc)}
  mem_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
  margin=${LIVE_SLURM_MEM_MARGIN_MB:-1024}
  mem=$((mem_kb / 1024 - margin))
  ((mem >= 256)) || mem=256
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  local plugdir
  plugdir=$(dirname "$(find /usr/lib -name select_cons_res.so -path '*slurm*' 2>/dev/null | head -n1)")
  if [[ -e $plugdir/select_cons_tres.so ]]; then select=select/cons_tres; else select=select/cons_res; fi
  : >"$dir/etc/plugstack.conf"
  cat >"$dir/etc/slurm.conf" <<EOF
# Generated by tests/slurm/live_slurm.sh for $node ($cpus CPUs, $mem MB); instance $dir
ClusterName=live$(basename "$dir" | tr -dc 'a-zA-Z0-9' | tr 'A-Z' 'a-z' | tail -c 8)
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/pids/slurmctld.daemon.pid
SlurmdPidFile=$dir/pids/slurmd.daemon.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$dir/tmp
PlugStackConfig=$dir/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=$select
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
JobRequeue=1
MinJobAge=600
KillWait=10
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=10
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/etc/slurm.conf

  # --- slurmctld, then slurmd (foreground mode, so $! is the daemon itself).
  setsid slurmctld -D -c -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmctld.out" 2>&1 &
  echo $! >"$dir/pids/slurmctld.pid"
  ok=0
  for i in $(seq 1 100); do
    if scontrol ping 2>/dev/null | grep -q UP; then ok=1; break; fi
    pd_live_pid "$dir/pids/slurmctld.pid" "$dir" >/dev/null || break
    sleep 0.2
  done
  if [[ $ok != 1 ]]; then
    pd_show_log "$dir/log/slurmctld.log"; pd_show_log "$dir/log/slurmctld.out"
    die "slurmctld did not come up (port $ctld_port)"
  fi
  setsid slurmd -D -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmd.out" 2>&1 &
  echo $! >"$dir/pids/slurmd.pid"

  local wait_s=${LIVE_SLURM_WAIT:-60} state=""
  for i in $(seq 1 $((wait_s * 5))); do
    state=$(sinfo -h -n "$node" -o '%T' 2>/dev/null | head -n1 || true)
    [[ $state == idle ]] && break
    if ! pd_live_pid "$dir/pids/slurmd.pid" "$dir" >/dev/null; then
      pd_show_log "$dir/log/slurmd.log"; pd_show_log "$dir/log/slurmd.out"
      die "slurmd exited before the node became idle"
    fi
    sleep 0.2
  done
  if [[ $state != idle ]]; then
    pd_show_log "$dir/log/slurmd.log"; pd_show_log "$dir/log/slurmctld.log"
    die "node $node is '${state:-unknown}', not idle, after ${wait_s} s"
  fi
  trap - EXIT
  note "Slurm $(sinfo --version | awk '{print $2}') up: node $node ($cpus CPUs, $mem MB), partition debug, $select, ports $ctld_port/$slurmd_port, in $dir"
  env_lines "$dir"
}

resolve_dir() {
  local dir=${1:-${LIVE_SLURM_DIR:-}}
  [[ -n $dir ]] || die "no instance: give its directory or set LIVE_SLURM_DIR"
  echo "$dir"
}

case ${1:-} in
  start) start ;;
  stop)
    dir=$(resolve_dir "${2:-}")
    [[ -d $dir ]] || { note "$dir is already gone"; exit 0; }
    stop_instance "$dir" ;;
  env)
    dir=$(resolve_dir "${2:-}")
    [[ -f $dir/instance ]] || die "$dir is not a live Slurm instance directory"
    env_lines "$dir" ;;
  *) echo "usage: $prog start | stop [DIR] | env [DIR]" >&2; exit 2 ;;
esac
