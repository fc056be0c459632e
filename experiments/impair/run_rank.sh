#!/usr/bin/env bash
# run_rank.sh: one dtbench rank inside its network namespace of a netns_world.sh world.
# Usage: run_rank.sh --prefix P --rank I --world-size K [--port N] [--dtbench PATH] -- <train flags>
#
# Contract
#   Replaces itself (exec) with
#     ip netns exec Pns<I> env RANK=I WORLD_SIZE=K MASTER_ADDR=<ns0's address> MASTER_PORT=N \
#       GLOO_SOCKET_IFNAME=Pv<I> DTBENCH_RANKS_PER_HOST=1 DTBENCH train <train flags> --gloo-iface Pv<I>
#   so the caller's PID is the rank's PID (signals reach dtbench directly). gloo talks real TCP over the
#   namespace's veth, named explicitly; the rendezvous store is served by rank 0 on ns0's address.
#   Each namespace is one emulated host (DTBENCH_RANKS_PER_HOST=1 unless the caller set it).
#   Every rank gets the same train flags, --out included; only rank 0 writes the run directory.
#   The rank, world, rendezvous and interface flags belong to this script: they are refused in
#   <train flags>. DTBENCH defaults to $DTBENCH, else build/dtbench of this checkout.
#   NW_SUBNET must match the one the world was built with (netns_world.sh's default otherwise).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=experiments/impair/netns_world.sh
source "$here/netns_world.sh"

die() { echo "run_rank: $*" >&2; exit 2; }

prefix='' rank='' world='' port=29500 dtbench=${DTBENCH:-$here/../../build/dtbench}
while [[ $# -gt 0 ]]; do
  case $1 in
    --prefix) [[ $# -ge 2 ]] || die "--prefix needs a value"; prefix=$2; shift 2 ;;
    --rank) [[ $# -ge 2 ]] || die "--rank needs a value"; rank=$2; shift 2 ;;
    --world-size) [[ $# -ge 2 ]] || die "--world-size needs a value"; world=$2; shift 2 ;;
    --port) [[ $# -ge 2 ]] || die "--port needs a value"; port=$2; shift 2 ;;
    --dtbench) [[ $# -ge 2 ]] || die "--dtbench needs a value"; dtbench=$2; shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) die "unknown option '$1' (train flags go after --)" ;;
  esac
done
[[ -n $prefix ]] || die "--prefix is required (the prefix of a world made by netns_world.sh up)"
[[ $world =~ ^[0-9]+$ ]] && ((world >= 1)) || die "--world-size must be a positive whole number, got '$world'"
[[ $rank =~ ^[0-9]+$ ]] && ((rank < world)) || die "--rank must be a whole number below --world-size $world, got '$rank'"
[[ $port =~ ^[0-9]+$ ]] && ((port >= 1 && port <= 65535)) || die "--port must be in 1..65535, got '$port'"
[[ -x $dtbench ]] || die "dtbench binary '$dtbench' is not executable; build it or pass --dtbench PATH"
for flag in "$@"; do
  case $flag in
    --rank | --rank=* | --world-size* | --master-addr* | --master-port* | --gloo-iface* | --store-path*)
      die "train flag '$flag' is set by run_rank.sh (rendezvous and interface come from the world); remove it" ;;
    --backend*)
      die "train flag '$flag': ranks here talk gloo (the default) over the namespaces' veths; remove it" ;;
  esac
done

NW_PREFIX=$prefix  # read by the netns_world.sh functions below
nw_check_prefix || exit 2
ns=$(nw_ns "$rank") iface=$(nw_iface "$rank")
ip netns list | awk '{print $1}' | grep -qxF "$ns" ||
  die "network namespace $ns does not exist; build the world first (netns_world.sh up K)"

exec ip netns exec "$ns" env RANK="$rank" WORLD_SIZE="$world" MASTER_ADDR="$(nw_addr 0)" MASTER_PORT="$port" \
  GLOO_SOCKET_IFNAME="$iface" DTBENCH_RANKS_PER_HOST="${DTBENCH_RANKS_PER_HOST:-1}" \
  "$dtbench" train "$@" --gloo-iface "$iface"
