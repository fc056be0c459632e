#!/usr/bin/env bash
# netns_world.sh: a small emulated cluster of K hosts on one machine, with real packet loss and
# rate limits. Sourced as a library (loss_sweep.sh, run_rank.sh, the tests) or run as a command.
#
# Contract
#   Every object belongs to one PREFIX (default dtb$$, the PID of the shell that sources this file, so
#   parallel invocations never collide; letters and digits only, at most 10 characters):
#     bridge           PREFIXbr              root namespace, no address, STP off
#     namespace i      PREFIXns<i>           i = 0..K-1, loopback up, IPv6 off on its veth
#     veth pair i      PREFIXh<i> (root side, a bridge port) <-> PREFIXv<i> (inside namespace i)
#                      both ends with gso_max_segs 1: every packet is one MTU-sized segment, as on a
#                      real wire, so the loss rule drops packets, not 64 KB GSO super-packets
#                      (NW_GSO_MAX_SEGS overrides the 1; experiments/cluster/cluster.sh sets 65535)
#     address i        $NW_SUBNET.<i+1>/24 on PREFIXv<i> (NW_SUBNET default 10.77.0); every
#                      namespace has its own stack and the root namespace gets no address on the
#                      bridge, so neither host routes nor a parallel world can clash with it
#     loss             nftables table `ip PREFIXloss` in every namespace: an input-hook chain with
#                      `iifname PREFIXv<i> numgen random mod 10000 < N counter drop`, N = percent x 100
#                      (and before it a counter of every packet arriving on the veth)
#                      (resolution 0.01 %); 0 % = no table, so no rule at all. Dropped on the
#                      RECEIVING side: the sender's TCP sees a packet that vanished on the wire, not a
#                      local send error. Each direction of each link loses `percent` of its packets;
#                      loopback traffic (a rank talking to itself) is never dropped.
#     rate             tc tbf as the root qdisc of every PREFIXv<i> (each namespace's egress)
#     TCP              every namespace's net.ipv4.tcp_congestion_control is NW_TCP_CC (default cubic,
#                      Linux's default), never the host's: a new namespace would inherit the host's
#                      setting (bbr on some machines), and what loss or a shaped link costs depends on
#                      it. Where the kernel has NW_TCP_CC but does not let namespaces choose it, up adds
#                      it to the host's net.ipv4.tcp_allowed_congestion_control; where the kernel lacks
#                      it, up fails naming the ones it has
#   Interface names stay within Linux's 15 characters (checked). netem is not used (not available on
#   every kernel this runs on).
#
# Library (after `source netns_world.sh`; callers use `set -euo pipefail`):
#   nw_require                      refuse unless root with ip, nft and tc (messages say what to fix)
#   nw_up K                         create the world; refuses if PREFIX already has objects
#   nw_down                         remove every object of PREFIX (idempotent; safe on half-built
#                                   worlds); non-zero if something could not be removed
#   nw_loss PERCENT                 replace the loss rule in every namespace (counters restart at 0)
#   nw_rate MBIT                    tbf rate limit on every namespace's veth; 0 removes it
#   nw_size                         K, counted from the namespaces that exist
#   nw_ns I / nw_iface I / nw_addr I / nw_bridge / nw_table    the names above
#   nw_exec I CMD...                run CMD inside namespace I
#   nw_ruleset I                    `nft list ruleset` of namespace I (with the drop counter)
#   nw_dropped I                    packets the loss rule of namespace I dropped (0 without a rule)
#   nw_arrived I                    packets that arrived on namespace I's veth since the rule was set
#   nw_leftovers                    print every object of PREFIX that still exists (empty: none)
# Command: netns_world.sh [--prefix P] up K | down | loss PERCENT | rate MBIT | status | leftovers
#   `up` leaves the world in place and prints its prefix; pass the same --prefix to later commands.

NW_PREFIX=${NW_PREFIX:-dtb$$}
NW_SUBNET=${NW_SUBNET:-10.77.0}
# Segments per packet a veth accepts: 1 (the default) keeps packets wire-sized for the loss rule;
# experiments/cluster raises it to the kernel's 65535 (GSO), which forwards several times faster.
NW_GSO_MAX_SEGS=${NW_GSO_MAX_SEGS:-1}
# Every namespace's TCP congestion control (see the contract above).
NW_TCP_CC=${NW_TCP_CC:-cubic}

nw_die() { echo "netns_world: $*" >&2; return 1; }

nw_bridge() { echo "${NW_PREFIX}br"; }
nw_ns() { echo "${NW_PREFIX}ns$1"; }
nw_iface() { echo "${NW_PREFIX}v$1"; }
nw_host_iface() { echo "${NW_PREFIX}h$1"; }
nw_addr() { echo "${NW_SUBNET}.$(($1 + 1))"; }
nw_table() { echo "${NW_PREFIX}loss"; }

nw_check_prefix() {
  [[ $NW_PREFIX =~ ^[A-Za-z][A-Za-z0-9]*$ ]] ||
    nw_die "prefix '$NW_PREFIX' must be letters and digits, starting with a letter" || return 1
  ((${#NW_PREFIX} <= 10)) ||
    nw_die "prefix '$NW_PREFIX' is longer than 10 characters: interface names (PREFIXh<i>) must fit in 15" ||
    return 1
  [[ $NW_SUBNET =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] ||
    nw_die "NW_SUBNET '$NW_SUBNET' must be the first three octets of a /24, e.g. 10.77.0"
}

nw_require() {
  if [[ $(id -u) -ne 0 ]]; then
    nw_die "must run as root: network namespaces, bridges, nftables and tc need CAP_NET_ADMIN (run it with sudo)"
    return 1
  fi
  local tool package
  for tool in ip:iproute2 nft:nftables tc:iproute2; do
    package=${tool#*:} tool=${tool%%:*}
    command -v "$tool" >/dev/null 2>&1 ||
      nw_die "'$tool' not found on PATH; install the Debian package $package (apt-get install $package)" || return 1
  done
  nw_check_prefix
}

# Names of this prefix's namespaces (ns0, ns1, ... as they exist, in numeric order).
nw_namespaces() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${NW_PREFIX}ns[0-9]+\$" | sort -V || true
}
nw_size() { nw_namespaces | wc -l; }
# Root-namespace links of this prefix (bridge and root-side veths).
nw_links() {
  ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
    grep -E "^${NW_PREFIX}(br|h[0-9]+)\$" || true
}

nw_exec() {
  local i=$1
  shift
  ip netns exec "$(nw_ns "$i")" "$@"
}

nw_up() {
  local k=${1:-}
  nw_check_prefix || return 1
  [[ $k =~ ^[0-9]+$ ]] && ((k >= 1 && k <= 99)) || nw_die "up: K must be a whole number in 1..99, got '$k'" || return 1
  if [[ -n $(nw_namespaces) || -n $(nw_links) ]]; then
    nw_die "up: objects of prefix $NW_PREFIX already exist ($(nw_leftovers | tr '\n' ' ')); run 'netns_world.sh --prefix $NW_PREFIX down' first"
    return 1
  fi
  local br i ns veth host
  br=$(nw_bridge)
  ip link add "$br" type bridge stp_state 0 || nw_die "up: cannot create bridge $br (is the bridge module available?)" || return 1
  nw_quiet_ipv6 "$br"
  ip link set "$br" up
  for ((i = 0; i < k; i++)); do
    ns=$(nw_ns "$i") veth=$(nw_iface "$i") host=$(nw_host_iface "$i")
    ip netns add "$ns" || nw_die "up: cannot create network namespace $ns" || return 1
    # gso_max_segs 1: TCP hands the veth one MSS-sized segment per packet, so the loss rule drops
    # wire-sized packets, not 64 KB GSO super-packets (which would make 1 % loss mean ~40 % of bytes
    # in bursts).
    ip link add "$host" gso_max_segs "$NW_GSO_MAX_SEGS" type veth peer name "$veth" netns "$ns" gso_max_segs "$NW_GSO_MAX_SEGS" ||
      nw_die "up: cannot create veth pair $host <-> $veth (is the veth module available?)" || return 1
    nw_quiet_ipv6 "$host"
    ip link set "$host" master "$br" up
    ip netns exec "$ns" sh -c "echo 1 > /proc/sys/net/ipv6/conf/$veth/disable_ipv6" 2>/dev/null || true
    ip -n "$ns" addr add "$(nw_addr "$i")/24" dev "$veth"
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "$veth" up
    nw_congestion_control "$i" || return 1
  done
  nw_probe
}

# nw_congestion_control I: NW_TCP_CC in namespace I (new connections use it).
nw_congestion_control() {
  local i=$1 allowed
  nw_exec "$i" sysctl -qw "net.ipv4.tcp_congestion_control=$NW_TCP_CC" 2>/dev/null && return 0
  # A namespace may choose only what the host allows: allow it, if the kernel has it at all.
  allowed=$(sysctl -n net.ipv4.tcp_allowed_congestion_control)
  if [[ " $allowed " != *" $NW_TCP_CC "* ]] &&
    sysctl -qw "net.ipv4.tcp_allowed_congestion_control=$allowed $NW_TCP_CC" 2>/dev/null; then
    echo "netns_world: added $NW_TCP_CC to the host's net.ipv4.tcp_allowed_congestion_control ($allowed), so that the namespaces may use it" >&2
    nw_exec "$i" sysctl -qw "net.ipv4.tcp_congestion_control=$NW_TCP_CC" 2>/dev/null && return 0
  fi
  nw_die "up: cannot set TCP congestion control '$NW_TCP_CC' in $(nw_ns "$i"): this kernel has $(sysctl -n net.ipv4.tcp_available_congestion_control) (load its module, e.g. modprobe tcp_$NW_TCP_CC, or choose one of those with NW_TCP_CC or cluster.sh up --congestion-control)"
}

# No IPv6 link-local chatter on root-side links (best effort; absent when IPv6 is off).
nw_quiet_ipv6() { echo 1 >"/proc/sys/net/ipv6/conf/$1/disable_ipv6" 2>/dev/null || true; }

# Every namespace reaches ns0 over the bridge: a TCP connect to a closed port must be refused (the
# RST came back) within 5 s. Fails clearly when the root namespace's firewall drops bridged traffic.
nw_probe() {
  local i k target out
  k=$(nw_size) target=$(nw_addr 0)
  for ((i = 1; i < k; i++)); do
    out=$(nw_exec "$i" timeout 5 bash -c "exec 3<>/dev/tcp/$target/9" 2>&1) && continue
    if [[ $out == *"refused"* ]]; then continue; fi
    nw_die "up: $(nw_ns "$i") cannot reach $target over bridge $(nw_bridge) (${out:-no answer in 5 s}); if the root namespace filters bridged traffic (br_netfilter with an iptables/nftables FORWARD drop, as Docker installs), allow $(nw_bridge)"
    return 1
  done
}

nw_percent_to_n() {  # PERCENT -> N of `numgen random mod 10000 < N`; rejects what 0.01 % cannot express
  awk -v p="$1" 'BEGIN {
    if (p !~ /^([0-9]+\.?[0-9]*|\.[0-9]+)$/ || p + 0 > 100) exit 1
    n = p * 100; r = int(n + 0.5)
    if (n - r > 1e-6 || r - n > 1e-6) exit 2
    print r }'
}

nw_loss() {
  local percent=${1:-} n i k table veth rc=0
  n=$(nw_percent_to_n "$percent") || rc=$?
  ((rc != 1)) || nw_die "loss: PERCENT must be a number in [0, 100], got '$percent'" || return 1
  ((rc != 2)) || nw_die "loss: $percent % is finer than the rule's resolution of 0.01 %" || return 1
  k=$(nw_size) table=$(nw_table)
  ((k > 0)) || nw_die "loss: no namespaces of prefix $NW_PREFIX; run 'up K' first" || return 1
  for ((i = 0; i < k; i++)); do
    veth=$(nw_iface "$i")
    nw_exec "$i" nft delete table ip "$table" 2>/dev/null || true
    ((n > 0)) || continue
    nw_exec "$i" nft -f - <<EOF || nw_die "loss: nft refused the rule in $(nw_ns "$i") (kernel without nf_tables or nft_numgen?)" || return 1
table ip $table {
  chain input {
    type filter hook input priority filter; policy accept;
    iifname "$veth" counter comment "dtbench impair: arrived"
    iifname "$veth" numgen random mod 10000 < $n counter drop comment "dtbench impair: $percent % loss"
  }
}
EOF
  done
}

nw_rate() {
  local mbit=${1:-} i k veth burst
  [[ $mbit =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] || nw_die "rate: MBIT must be a non-negative number, got '$mbit'" || return 1
  k=$(nw_size)
  ((k > 0)) || nw_die "rate: no namespaces of prefix $NW_PREFIX; run 'up K' first" || return 1
  # Bucket: 10 ms at the rate, at least 32 KiB (a few segments of a GSO burst).
  burst=$(awk -v m="$mbit" 'BEGIN { b = m * 1e6 / 8 / 100; if (b < 32768) b = 32768; printf "%d", b }')
  for ((i = 0; i < k; i++)); do
    veth=$(nw_iface "$i")
    nw_exec "$i" tc qdisc del dev "$veth" root 2>/dev/null || true
    if awk -v m="$mbit" 'BEGIN { exit !(m + 0 > 0) }'; then
      nw_exec "$i" tc qdisc add dev "$veth" root tbf rate "${mbit}mbit" burst "$burst" latency 50ms ||
        nw_die "rate: tc refused tbf on $veth in $(nw_ns "$i") (kernel without sch_tbf?)" || return 1
    fi
  done
}

nw_ruleset() { nw_exec "$1" nft list ruleset; }
nw_dropped() {
  nw_exec "$1" nft list table ip "$(nw_table)" 2>/dev/null |
    sed -n 's/.*numgen.*counter packets \([0-9]*\) bytes.*/\1/p' | awk '{s += $1} END {print s + 0}'
}
nw_arrived() {
  nw_exec "$1" nft list table ip "$(nw_table)" 2>/dev/null |
    sed -n 's/.*counter packets \([0-9]*\) bytes.*"dtbench impair: arrived".*/\1/p' | awk '{s += $1} END {print s + 0}'
}

nw_leftovers() {
  nw_namespaces
  nw_links
  # nftables tables of this prefix in the root namespace (none are made there; a stray one is reported)
  nft list tables 2>/dev/null | awk '{print $NF}' | grep -E "^${NW_PREFIX}loss\$" || true
}

nw_down() {
  local ns link status=0 i
  for ns in $(nw_namespaces); do
    i=${ns#"${NW_PREFIX}ns"}
    ip netns exec "$ns" nft delete table ip "$(nw_table)" 2>/dev/null || true
    # Deleting the root-side end removes the pair now; a namespace's own teardown is asynchronous.
    ip link del "$(nw_host_iface "$i")" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || { echo "netns_world: down: cannot delete namespace $ns" >&2; status=1; }
  done
  for link in $(nw_links); do  # the bridge, and root-side veths of a half-built namespace
    ip link del "$link" 2>/dev/null || { echo "netns_world: down: cannot delete link $link" >&2; status=1; }
  done
  nft delete table ip "$(nw_table)" 2>/dev/null || true
  local left
  left=$(nw_leftovers)
  if [[ -n $left ]]; then
    echo "netns_world: down: still present after cleanup: $(tr '\n' ' ' <<<"$left")" >&2
    status=1
  fi
  return $status
}

nw_status() {
  local i k
  k=$(nw_size)
  echo "prefix $NW_PREFIX: $k namespace(s), bridge $(nw_links | grep -c 'br$' || true), TCP congestion control $( ((k > 0)) && nw_exec 0 sysctl -n net.ipv4.tcp_congestion_control)"
  for ((i = 0; i < k; i++)); do
    echo "$(nw_ns "$i") $(nw_iface "$i") $(nw_addr "$i") arrived=$(nw_arrived "$i") dropped=$(nw_dropped "$i") qdisc: $(nw_exec "$i" tc qdisc show dev "$(nw_iface "$i")" | head -n 1)"
  done
}

nw_main() {
  set -euo pipefail
  if [[ ${1:-} == --prefix ]]; then
    [[ $# -ge 2 ]] || nw_die "--prefix needs a value"
    NW_PREFIX=$2
    shift 2
  elif [[ ${1:-} != up && ${1:-} != -h && ${1:-} != --help ]]; then
    nw_die "${1:-a command} needs --prefix P (the prefix 'up' printed)" || exit 2
  fi
  case ${1:-} in
    up)
      nw_require
      nw_up "${2:-}"
      echo "netns_world: up: prefix $NW_PREFIX, $(nw_size) namespace(s); tear down with: $0 --prefix $NW_PREFIX down"
      ;;
    down) nw_require; nw_down ;;
    loss) nw_require; nw_loss "${2:-}" ;;
    rate) nw_require; nw_rate "${2:-}" ;;
    status) nw_require; nw_status ;;
    leftovers) nw_leftovers ;;
    -h | --help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0" ;;
    *) nw_die "unknown command '${1:-}'; use up K, down, loss PERCENT, rate MBIT, status or leftovers" || exit 2 ;;
  esac
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  nw_main "$@"
fi
