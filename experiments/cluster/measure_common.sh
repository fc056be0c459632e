# shellcheck shell=bash disable=SC2034  # sets the variables its callers read
# measure_common.sh: the preamble of the measurements on the emulated cluster (sourced, never run):
# measure_bound.sh, measure_capture.sh, measure_compression.sh and validate_predict.sh, each called as
#   SCRIPT DTBENCH OUT [--FLAG VALUE]...
# Sourcing it sets `set -euo pipefail` and defines:
#   here                      experiments/cluster/ (cluster.sh, the scripts' Python halves)
#   die MESSAGE               "SCRIPT: MESSAGE" on stderr, exit 2
#   log MESSAGE               "[hh:mm:ss] MESSAGE" on stderr
#   measure_start USAGE "--FLAG=VAR ..." "$@"
#                             the script's arguments: dtbench (absolute; it must be executable) and out, then
#                             each --FLAG VALUE into its VAR (the script sets the defaults before); dies with
#                             "usage: SCRIPT DTBENCH OUT USAGE" on fewer than two arguments, and on an unknown
#                             flag or one without its value
#   measure_need_cluster      dies unless a cluster is up in this shell's environment (DTBENCH_CLUSTER, from
#                             `eval "$(experiments/cluster/cluster.sh env)"`); sets name, the cluster's name
#   cluster ARGS...           cluster.sh --name "$name" ARGS, with DTBENCH=$dtbench
#   set_rate RATE             every link of the cluster at RATE (cluster.sh rate), or dies
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "${0##*/}: $*" >&2; exit 2; }
log() { echo "[$(date +%T)] $*" >&2; }

measure_start() {
  local usage=$1 table=$2 pair found
  shift 2
  [[ $# -ge 2 ]] || die "usage: $0 DTBENCH OUT $usage"
  dtbench=$(realpath "$1") out=$2
  shift 2
  while (($#)); do
    [[ $# -ge 2 ]] || die "$1 needs a value"
    found=''
    for pair in $table; do
      if [[ $1 == "${pair%%=*}" ]]; then
        printf -v "${pair#*=}" '%s' "$2"
        found=1
        break
      fi
    done
    [[ -n $found ]] || die "unknown option $1"
    shift 2
  done
  [[ -x $dtbench ]] || die "$dtbench is not executable"
}

measure_need_cluster() {
  [[ -n ${DTBENCH_CLUSTER:-} && -f $DTBENCH_CLUSTER ]] || die "no cluster: run eval \"\$(experiments/cluster/cluster.sh env)\" first"
  name=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$DTBENCH_CLUSTER")
}

cluster() { DTBENCH=$dtbench "$here/cluster.sh" --name "$name" "$@"; }
set_rate() { cluster rate "$1" >/dev/null 2>&1 || die "cannot set the links to $1"; }
