#!/bin/bash
# sacct_jobs.sh: the cluster's job records from Slurm accounting, in the one form the report ingests.
#   slurm/sacct_jobs.sh [--since TIME] [OUT]        (writes OUT, or stdout)
# It runs exactly
#   sacct -a -D -X -S <start> --parsable2 \
#     --format=JobID,JobName,User,Partition,State,ExitCode,Submit,Start,End,ElapsedRaw,NNodes,AllocTRES
#   -a           every user's jobs, not only the caller's
#   -D           duplicates: each attempt of a requeued job is a row of its own (same JobID; the earlier
#                attempts end REQUEUED), instead of only the last one
#   -X           the job allocations only, not their steps (batch, extern, srun steps)
#   -S <start>   sacct's default window starts at today's midnight; the start is 2000-01-01 (every
#                record) unless --since TIME (any time sacct's -S takes: 2026-11-26, 2026-11-26T07:00, now-2hours)
#   --parsable2  fields separated by '|', one header line, no trailing '|'
# The field list is a contract with the report's parser: change both together or neither.
# Needs a Slurm with accounting (slurmdbd): on the emulated cluster `cluster.sh up --accounting`, with
# SLURM_CONF from `cluster.sh env` (docs/cluster.md, "Accounting").
set -euo pipefail

prog=sacct_jobs.sh
die() { echo "$prog: error: $*" >&2; exit 1; }
usage_die() { echo "$prog: $*" >&2; echo "usage: $prog [--since TIME] [OUT]" >&2; exit 2; }

since=2000-01-01 out=""
while (($#)); do
  case $1 in
    --since) [[ -n ${2:-} ]] || usage_die "--since needs a time (e.g. 2026-11-26T07:00)"; since=$2; shift ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    -*) usage_die "unknown option '$1'" ;;
    *) [[ -z $out ]] || usage_die "one output file, got '$out' and '$1'"; out=$1 ;;
  esac
  shift
done
command -v sacct >/dev/null || die "sacct not found: install Debian's slurm-client (scripts/install_deps.sh)"

format=JobID,JobName,User,Partition,State,ExitCode,Submit,Start,End,ElapsedRaw,NNodes,AllocTRES
cmd=(sacct -a -D -X -S "$since" --parsable2 --format="$format")
if [[ -z $out ]]; then
  "${cmd[@]}" || die "sacct failed (see its message above): is accounting on? On the emulated cluster: cluster.sh up --accounting, then eval \"\$(cluster.sh env)\""
  exit 0
fi
# Through a temporary file, so a failed sacct leaves no half-written OUT.
tmp=$(mktemp "$out.XXXXXX") || die "cannot write beside $out"
trap 'rm -f -- "$tmp"' EXIT
chmod 0644 "$tmp"
"${cmd[@]}" >"$tmp" || die "sacct failed (see its message above): is accounting on? On the emulated cluster: cluster.sh up --accounting, then eval \"\$(cluster.sh env)\""
mv -- "$tmp" "$out"
