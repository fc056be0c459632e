#!/usr/bin/env bash
# dtbench train --download when the download cannot finish, loopback only:
# - SIGINT while the server never answers, and SIGTERM while it sends slowly: dtbench stops
#   within seconds (a hang is killed after 20 s and counted as a failure), exits 1 with a message,
#   leaves nothing in --data-dir and trains nothing (no run directory).
# - A full disk while extracting: with `ulimit -f` (EFBIG, any user) and, as root where mounting
#   is allowed, in a small tmpfs (ENOSPC; skipped with a message otherwise): exit 1 naming the file
#   and the cause, and nothing but the verified archive left in --data-dir.
# Usage: test_download_failures.sh path/to/dtbench HAVE_DOWNLOAD(0|1)
set -uo pipefail
dtbench=$1 have_download=${2:-1}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
tmp=$(mktemp -d)
server_pids=() mounted=
cleanup() {
  for pid in "${server_pids[@]}"; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  [[ -n $mounted ]] && umount "$mounted"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

if [[ $have_download != 1 ]]; then
  echo "skip: this build cannot download (DTBENCH_WITH_DOWNLOAD=OFF or libcurl/libarchive missing)"
  exit 0
fi

train=(train --dataset cifar10 --model lenet --batch-size 8 --epochs 1 --max-steps 2 --threads 1 --workers 1 --quiet)
md5=$("$py" "$here/make_cifar10_archive.py" "$tmp/www") || { echo "cannot generate the test archive" >&2; exit 1; }
archive=$tmp/www/cifar-10-binary.tar.gz
dead_port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

# start_server MODE: starts unhelpful_http_server.py MODE and sets `port`.
start_server() {
  "$py" -u "$here/unhelpful_http_server.py" "$1" "$archive" >"$tmp/server-$1.log" 2>&1 &
  server_pids+=($!)
  port=
  for _ in $(seq 100); do
    port=$(grep -oE 'port [0-9]+' "$tmp/server-$1.log" | head -n 1 | cut -d' ' -f2)
    [[ -n $port ]] && return 0
    sleep 0.1
  done
  echo "the local HTTP server ($1) did not start: $(cat "$tmp/server-$1.log")" >&2
  exit 1
}

# interrupt MODE SIGNAL: a download from a MODE server, sent SIGNAL once the transfer is under way.
interrupt() {
  local mode=$1 signal=$2 data=$tmp/$1-data run=$tmp/$1-run
  start_server "$mode"
  "$dtbench" "${train[@]}" --download --download-url "http://127.0.0.1:$port/cifar-10-binary.tar.gz" \
    --download-md5 "$md5" --data-dir "$data" --out "$run" >"$tmp/$mode.out" 2>&1 &
  local pid=$! waited=0 rc
  # Under way: the partial archive exists (slow) or a second has passed (silent).
  for _ in $(seq 50); do
    compgen -G "$data/cifar-10-binary.tar.gz.part-*" >/dev/null && break
    sleep 0.1
  done
  sleep 1
  kill "-$signal" "$pid"
  while kill -0 "$pid" 2>/dev/null && ((waited < 200)); do
    sleep 0.1
    waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null
    fail "$mode server, SIG$signal: dtbench still running 20 s after the signal; output: $(cat "$tmp/$mode.out")"
    return
  fi
  wait "$pid"; rc=$?
  local out left
  out=$(cat "$tmp/$mode.out")
  left=$(ls -A "$data" 2>&1)
  if [[ $rc -eq 1 ]] && grep -q "the download of http://127.0.0.1:$port/cifar-10-binary.tar.gz was interrupted" <<<"$out" \
     && grep -q -- "run again with --download" <<<"$out" && [[ -z $left && ! -e $run ]]; then
    echo "ok: SIG$signal stops a download from a $mode server"
  else
    fail "$mode server, SIG$signal: exit $rc, left in --data-dir: '$left', run dir: $([[ -e $run ]] && echo yes || echo no), output: $out"
  fi
}

interrupt silent INT
interrupt slow TERM

# full_disk WHAT DATA_DIR CAUSE [COMMAND PREFIX...]: extraction of the (verified) archive into
# DATA_DIR fails with CAUSE.
full_disk() {
  local what=$1 data=$2 cause=$3 out rc left
  shift 3
  cp "$archive" "$data/"
  out=$("$@" "$dtbench" "${train[@]}" --download --download-url "http://127.0.0.1:$dead_port/x.tar.gz" \
        --download-md5 "$md5" --data-dir "$data" --out "$tmp/run-full" 2>&1); rc=$?
  left=$(ls -A "$data")
  if [[ $rc -eq 1 ]] && grep -q "cannot write cifar-10-batches-bin/data_batch_1.bin of $data/cifar-10-binary.tar.gz into $data" <<<"$out" \
     && grep -q "$cause" <<<"$out" && grep -q "free some space" <<<"$out" \
     && [[ $left == cifar-10-binary.tar.gz && ! -e $tmp/run-full ]]; then
    echo "ok: a full disk ($what) fails naming the file and '$cause', and keeps nothing"
  else
    fail "full disk ($what): exit $rc, left in --data-dir: '$left', output: $out"
  fi
}

# `ulimit -f` in KB: room for the archive and 1 MB more. SIGXFSZ ignored, so write(2) fails.
limit_kb=$(( $(stat -c %s "$archive") / 1024 + 1024 ))
mkdir "$tmp/limited"
full_disk "ulimit -f" "$tmp/limited" "File too large" \
  bash -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$@"' limit "$limit_kb"

mkdir "$tmp/tmpfs"
if [[ $(id -u) -eq 0 ]] && mount -t tmpfs -o size=$((limit_kb + 2048))k dtbench-test "$tmp/tmpfs" 2>"$tmp/mount.err"; then
  mounted=$tmp/tmpfs
  full_disk "tmpfs" "$tmp/tmpfs" "No space left on device"
else
  echo "skip: full tmpfs (needs root and permission to mount: $(cat "$tmp/mount.err" 2>/dev/null))"
fi

echo "download_failures_test: $failures failure(s)"
exit $((failures > 0))
