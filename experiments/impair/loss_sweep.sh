#!/usr/bin/env bash
# loss_sweep.sh: data-parallel training slowdown versus real packet loss, K ranks in K network
# namespaces on one Linux bridge (the slowdown-vs-loss table of "Network Traffic Characteristics of
# ML Frameworks Under the Microscope", on an emulated cluster).
#
# Usage: loss_sweep.sh [--ranks K] [--losses 0,0.01,0.1,1,2] [--rate-mbit R] [--out DIR]
#                      [--dtbench PATH] [--port N] [--run-timeout S] [--capture [--keep-pcap]]
#                      [-- <dtbench train flags>]
#
# Contract
#   Needs root, ip, nft and tc (refused with what to install otherwise) and Debian's /usr/bin/python3
#   (or a python3 on PATH) for the table. Builds a world of K namespaces (netns_world.sh, prefix
#   dtb<PID>, printed), then for each loss in order: rate-limits every namespace's egress with tc tbf
#   when --rate-mbit R > 0, installs the receiving-side nftables drop rule (netns_world.sh), runs the
#   K ranks (run_rank.sh: gloo over real TCP between the namespaces, --gloo-iface the namespace's
#   veth) into DIR/loss-<P>pct (rank 0 writes it), captures every namespace's nft ruleset (with the
#   drop counter) and tc statistics before the next loss, and writes DIR/loss-<P>pct/impairment.json.
#   After every loss, DIR/slowdown.csv and DIR/slowdown.md are rewritten (sweep_report.py: loss_pct,
#   status, epoch time T = slowest rank's sum(step_s - data_s) over the last epoch, comm_total_s,
#   wall_s, slowdown = T / T(0 %), dropped packets); the Markdown table is printed at the end.
#   A run that fails (a rank exits non-zero, dtbench reports failed, or it outlives --run-timeout,
#   default 600 s) is a "failed" row with its reason, and the sweep goes on. Rank logs: DIR/logs/.
#   The train flags default to a short lenet run on synthetic data (two epochs of 40 steps, batch
#   32 per rank, one thread; the table uses epoch 2); rank, rendezvous and interface flags are set
#   here and refused in them, and so is --out (use --out DIR of this script).
#   DIR (default runs/impair-<time>-<PID> of this checkout) must be new or empty.
#   Cleanup: on exit, error, SIGINT and SIGTERM the ranks get SIGTERM (SIGKILL 10 s later) and every
#   namespace, veth, bridge and nftables table of the prefix is removed (SIGKILL of this script
#   cannot be trapped: then `netns_world.sh --prefix dtb<PID> down`).
#   Run i of the sweep rendezvouses on port N + i (default N 29500) of ns0's address.
#   --capture: every namespace's veth is captured during each run (`dtbench capture record`, libpcap,
#   headers only, into DIR/capture/loss-<P>pct) and the ranks write their message log there; after
#   the run `dtbench capture analyze` writes the wire tables into DIR/loss-<P>pct/wire/ (docs/wire.md)
#   and the table gains the retransmissions seen on the wire (fast and after a timeout) beside the
#   rules' drops and tbf's. The pcaps are deleted after the analysis unless --keep-pcap.
#   Exit: 0 when at least one run completed (failed runs are results, in the table), 1 when none did
#   or the cleanup left something behind, 2 for a bad command line, 128+N on signal N.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=experiments/impair/netns_world.sh
source "$here/netns_world.sh"

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//p}' "$0"; }
die() { echo "loss_sweep: $*" >&2; exit 2; }
need_value() { [[ $# -ge 2 ]] || die "$1 needs a value"; }
is_number() { [[ $1 =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]]; }

ranks=2 losses=0,0.01,0.1,1,2 rate=0 out='' port=29500 run_timeout=600 capture=0 keep_pcap=()
dtbench=${DTBENCH:-$repo/build/dtbench}
while [[ $# -gt 0 ]]; do
  case $1 in
    --ranks) need_value "$@"; ranks=$2; shift 2 ;;
    --losses) need_value "$@"; losses=$2; shift 2 ;;
    --rate-mbit) need_value "$@"; rate=$2; shift 2 ;;
    --out) need_value "$@"; out=$2; shift 2 ;;
    --dtbench) need_value "$@"; dtbench=$2; shift 2 ;;
    --port) need_value "$@"; port=$2; shift 2 ;;
    --run-timeout) need_value "$@"; run_timeout=$2; shift 2 ;;
    --capture) capture=1; shift ;;
    --keep-pcap) keep_pcap=(--keep-pcap); shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (dtbench train flags go after --; see --help)" ;;
  esac
done
if [[ $# -gt 0 ]]; then
  train_flags=("$@")
else
  train_flags=(--model lenet --dataset synthetic --synthetic-train-size 8192 --synthetic-test-size 100
               --batch-size 32 --lr 0.02 --epochs 2 --max-steps 40 --threads 1 --workers 1 --no-eval --quiet --timeout 120)
fi

[[ $ranks =~ ^[0-9]+$ ]] && ((ranks >= 2 && ranks <= 99)) || die "--ranks must be a whole number in 2..99, got '$ranks'"
is_number "$rate" || die "--rate-mbit must be a non-negative number (Mbit/s; 0 = no limit), got '$rate'"
[[ $port =~ ^[0-9]+$ ]] && ((port >= 1024 && port <= 60000)) || die "--port must be in 1024..60000, got '$port'"
[[ $run_timeout =~ ^[0-9]+$ ]] && ((run_timeout >= 1)) || die "--run-timeout must be whole seconds >= 1, got '$run_timeout'"
IFS=, read -r -a loss_list <<<"$losses"
((capture || ${#keep_pcap[@]} == 0)) || die "--keep-pcap needs --capture"
((${#loss_list[@]} > 0)) || die "--losses is empty; give percentages such as 0,0.01,0.1,1,2"
labels=() label=''
for loss in "${loss_list[@]}"; do
  nw_percent_to_n "$loss" >/dev/null ||
    die "--losses: '$loss' is not a percentage in [0, 100] with at most two decimals (the rule's resolution is 0.01 %)"
  label=$(awk -v p="$loss" 'BEGIN { printf "%g", p }')
  [[ " ${labels[*]} " != *" $label "* ]] || die "--losses lists $label % twice; each loss gets one run directory"
  labels+=("$label")
done
if [[ " ${labels[*]} " != *" 0 "* ]]; then
  echo "loss_sweep: warning: --losses has no 0; the table will have no slowdown column values" >&2
fi
for flag in "${train_flags[@]}"; do
  case $flag in
    --out | --out=*) die "train flag '$flag': the sweep names the run directories; use loss_sweep.sh --out DIR" ;;
    --rank | --rank=* | --world-size* | --master-addr* | --master-port* | --gloo-iface* | --store-path* | --backend*)
      die "train flag '$flag' is set by the sweep (gloo over the namespaces' veths); remove it" ;;
  esac
done

nw_require || exit 1
python=/usr/bin/python3
[[ -x $python ]] || python=$(command -v python3 || true)
[[ -n $python ]] || { echo "loss_sweep: no python3 for the table; install Debian's python3" >&2; exit 1; }
[[ -x $dtbench ]] || { echo "loss_sweep: dtbench binary '$dtbench' is not executable; build it or pass --dtbench PATH" >&2; exit 1; }
out=${out:-$repo/runs/impair-$(date +%Y%m%d-%H%M%S)-$$}
if [[ -e $out && -n $(ls -A "$out" 2>/dev/null) ]]; then
  echo "loss_sweep: --out '$out' exists and is not empty; results are never overwritten, choose a new directory" >&2
  exit 2
fi
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)

# --- state shared with the traps ------------------------------------------------------------------
rank_pids=()     # PIDs of the current run's ranks in rank order (each is dtbench: run_rank.sh execs)
capture_pids=()  # the current run's packet recorders (--capture), one per namespace
declare -A rc_of # exit code of every rank PID already reaped
watch_pid=''     # the current run's timeout sleeper
current=''       # index into loss_list of the run in progress
run_start=''
run_dirs=()      # run directories with an impairment.json, in sweep order
completed=0
world_up=0

live_pids() {  # the current run's ranks not reaped yet (only those may be signalled: no PID reuse)
  local pid
  for pid in "${rank_pids[@]}"; do [[ -n ${rc_of[$pid]:-} ]] || echo "$pid"; done
}

stop_ranks() {  # SIGTERM every live rank, SIGKILL what is left after 10 s, reap them all
  local pid i alive rc live
  live=$(live_pids)
  [[ -n $live ]] || return 0
  for pid in $live; do kill -TERM "$pid" 2>/dev/null || true; done
  for ((i = 0; i < 100; i++)); do
    alive=0
    for pid in $live; do
      # a zombie still answers kill -0: look at its state
      [[ $(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) =~ ^[^Z]$ ]] && alive=1
    done
    ((alive)) || break
    sleep 0.1
  done
  for pid in $live; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in $live; do rc=0; wait "$pid" 2>/dev/null || rc=$?; rc_of[$pid]=$rc; done
}

ranks_rcs() {  # exit codes in rank order, comma-separated
  local pid rcs=()
  for pid in "${rank_pids[@]}"; do rcs+=("${rc_of[$pid]:-}"); done
  (IFS=,; echo "${rcs[*]}")
}
elapsed() { awk -v s="$run_start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }'; }

# start_capture DIR: one recorder per namespace on its veth; returns once all capture.
start_capture() {
  local cap=$1 i tries
  mkdir -p "$cap/messages"
  capture_pids=()
  for ((i = 0; i < ranks; i++)); do
    # exec: the background job becomes the recorder itself, so $! is the pid that SIGTERM must reach.
    (exec ip netns exec "$(nw_ns "$i")" "$dtbench" capture record --node "host$i" --interface "$(nw_iface "$i")" \
      --output "$cap") </dev/null >"$cap/host$i.record.log" 2>&1 &
    capture_pids+=("$!")
  done
  for ((i = 0; i < ranks; i++)); do
    for ((tries = 0; tries < 200; tries++)); do
      [[ -e $cap/host$i.ready ]] && break
      kill -0 "${capture_pids[$i]}" 2>/dev/null || break
      sleep 0.05
    done
    [[ -e $cap/host$i.ready ]] || echo "loss_sweep: the recorder of host$i did not start: $(tail -n 3 "$cap/host$i.record.log")" >&2
  done
}

# stop_capture DIR RUN_DIR: end the recorders, then the wire tables into RUN_DIR/wire.
stop_capture() {
  local cap=$1 dir=$2 pid
  ((${#capture_pids[@]})) || return 0
  for pid in "${capture_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${capture_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  capture_pids=()
  "$dtbench" capture analyze "$cap" --messages "$cap/messages" --output "$dir/wire" "${keep_pcap[@]}" \
    >"$cap/analyze.log" 2>&1 || echo "loss_sweep: capture analyze failed: $(tail -n 3 "$cap/analyze.log")" >&2
}

stop_watch() {
  [[ -n $watch_pid ]] || return 0
  kill "$watch_pid" 2>/dev/null || true
  wait "$watch_pid" 2>/dev/null || true
  watch_pid=''
}

# record INDEX WALL_S STATUS RCS: capture every namespace's ruleset and qdisc statistics, write the
# run's impairment.json and rewrite the table.
record() {
  local index=$1 wall=$2 status=$3 codes=$4 i dir snap
  dir=$out/loss-${labels[$index]}pct
  snap=$(mktemp -d)
  for ((i = 0; i < ranks; i++)); do
    nw_ruleset "$i" >"$snap/nft-$i.txt" 2>&1 || true
    nw_exec "$i" tc -s qdisc show dev "$(nw_iface "$i")" >"$snap/tc-$i.txt" 2>&1 || true
    nw_exec "$i" sysctl -n net.ipv4.tcp_congestion_control >"$snap/cc-$i.txt" 2>&1 || true
  done
  "$python" "$here/sweep_report.py" impairment "$dir" "${loss_list[$index]}" "$rate" "$wall" "$status" "$codes" "$snap" ||
    echo "loss_sweep: could not write $dir/impairment.json" >&2
  rm -rf "$snap"
  run_dirs+=("$dir")
  DTBENCH=$dtbench "$python" "$here/sweep_report.py" table "$out" "${run_dirs[@]}" >/dev/null ||
    echo "loss_sweep: could not write $out/slowdown.csv" >&2
}

cleanup() {
  local rc=$?
  trap '' INT TERM
  trap - EXIT
  set +e
  if [[ -n $current ]]; then
    stop_ranks
    stop_watch
    for pid in "${capture_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    record "$current" "$(elapsed)" interrupted "$(ranks_rcs)"
    current='' rank_pids=()
  fi
  stop_watch
  if ((world_up)); then
    if nw_down; then
      echo "loss_sweep: removed namespaces, veths, bridge and nftables tables of prefix $NW_PREFIX" >&2
    else
      echo "loss_sweep: cleanup incomplete; inspect with 'ip netns list; ip link; nft list tables' and run" \
        "'$here/netns_world.sh --prefix $NW_PREFIX down'" >&2
      ((rc != 0)) || rc=1
    fi
  fi
  exit "$rc"
}
on_signal() {
  echo "loss_sweep: $1 received; stopping the ranks and tearing down prefix $NW_PREFIX" >&2
  exit "$2"
}
trap cleanup EXIT
trap 'on_signal SIGINT 130' INT
trap 'on_signal SIGTERM 143' TERM

echo "loss_sweep: $ranks ranks, losses ${labels[*]} %, rate ${rate} Mbit/s (0 = none), world prefix $NW_PREFIX -> $out"
world_up=1
nw_up "$ranks"

for index in "${!loss_list[@]}"; do
  loss=${loss_list[$index]} label=${labels[$index]}
  dir=$out/loss-${label}pct
  nw_loss "$loss"
  nw_rate "$rate"  # reinstalled for each run: its statistics in impairment.json are this run's
  run_port=$((port + index))
  rank_pids=() rc_of=()
  cap=$out/capture/loss-${label}pct
  if ((capture)); then start_capture "$cap"; export DTBENCH_MESSAGE_LOG=$cap/messages; fi
  run_start=$(date +%s.%N) current=$index
  for ((i = 0; i < ranks; i++)); do
    "$here/run_rank.sh" --prefix "$NW_PREFIX" --rank "$i" --world-size "$ranks" --port "$run_port" --dtbench "$dtbench" \
      -- "${train_flags[@]}" --out "$dir" >"$out/logs/loss-${label}pct-rank$i.log" 2>&1 &
    rank_pids+=("$!")
  done
  sleep "$run_timeout" &
  watch_pid=$!
  status=finished
  while [[ -n $(live_pids) ]]; do
    finished='' rc=0
    # shellcheck disable=SC2046
    wait -n -p finished $(live_pids) "$watch_pid" || rc=$?
    if [[ $finished == "$watch_pid" ]]; then
      watch_pid='' status=timeout
      echo "loss_sweep: loss $label %: still running after $run_timeout s; stopping the ranks" >&2
      stop_ranks
    elif [[ -n $finished ]]; then
      rc_of[$finished]=$rc
    fi
  done
  wall=$(elapsed)
  stop_watch
  ((capture)) && stop_capture "$cap" "$dir"
  record "$index" "$wall" "$status" "$(ranks_rcs)"
  current='' rank_pids=()
  row=$(awk -F, -v d="$dir" '$11 == d { print $2 " (T " ($3 == "" ? "-" : $3) " s, wall " $5 " s, dropped " $7 " of " ($8 == "" ? 0 : $8) " packets)" }' "$out/slowdown.csv")
  echo "loss_sweep: loss $label %: ${row:-no row} -> $dir"
  [[ $row != completed* ]] || completed=$((completed + 1))
done

echo
cat "$out/slowdown.md"
echo "loss_sweep: table in $out/slowdown.csv and $out/slowdown.md; rank logs in $out/logs"
if ((completed == 0)); then
  echo "loss_sweep: no run completed; see the rank logs in $out/logs" >&2
  exit 1
fi
