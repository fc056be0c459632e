#!/usr/bin/env bash
# dtbench train --download end to end over real HTTP, loopback only: a local python3 http.server
# serves a small cifar-10-binary.tar.gz in the official layout (generated here, a few records per
# file). Checks: the right MD5 downloads, extracts and trains; a complete folder is reused without
# the network; a wrong MD5, an HTTP 404 and a dead port fail with a clear message and leave
# nothing in --data-dir. The server is stopped on every exit (trap).
# Usage: download_http_test.sh path/to/dtbench HAVE_DOWNLOAD(0|1)
set -uo pipefail
dtbench=$1 have_download=${2:-1}
py=/usr/bin/python3
tmp=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

train=(train --dataset cifar10 --model lenet --batch-size 8 --epochs 1 --max-steps 2 --threads 1 --workers 1 --quiet)

if [[ $have_download != 1 ]]; then
  out=$("$dtbench" "${train[@]}" --download --data-dir "$tmp/d" --out "$tmp/r" 2>&1); rc=$?
  [[ $rc -eq 1 ]] && grep -q "this build cannot download (built without libcurl/libarchive)" <<<"$out" \
    || fail "a build without download: exit $rc, output: $out"
  echo "download_http_test: $failures failure(s)"
  exit $((failures > 0))
fi

# The archive: cifar-10-batches-bin/data_batch_1..5.bin (20 records each), test_batch.bin (10),
# batches.meta.txt; prints its MD5 (Python's hashlib, independent of dtbench's MD5).
md5=$("$py" - "$tmp/www" <<'PY'
import hashlib, io, os, sys, tarfile
www = sys.argv[1]
os.makedirs(www)
def records(f, n):
    out = bytearray()
    for r in range(n):
        out.append((r + f) % 10)
        out.extend((i * 7 + r * 3 + f) % 256 for i in range(3072))
    return bytes(out)
files = {f"data_batch_{f}.bin": records(f, 20) for f in range(1, 6)}
files["test_batch.bin"] = records(0, 10)
files["batches.meta.txt"] = b"airplane\nautomobile\nbird\ncat\ndeer\ndog\nfrog\nhorse\nship\ntruck\n"
path = os.path.join(www, "cifar-10-binary.tar.gz")
with tarfile.open(path, "w:gz") as tar:
    for name, data in files.items():
        info = tarfile.TarInfo("cifar-10-batches-bin/" + name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
print(hashlib.md5(open(path, "rb").read()).hexdigest())
PY
) || { echo "cannot generate the test archive" >&2; exit 1; }

"$py" -u -m http.server --bind 127.0.0.1 --directory "$tmp/www" 0 >"$tmp/server.log" 2>&1 &
server_pid=$!
port=
for _ in $(seq 100); do
  port=$(grep -oE 'port [0-9]+' "$tmp/server.log" | head -n 1 | cut -d' ' -f2)
  [[ -n $port ]] && break
  sleep 0.1
done
[[ -n $port ]] || { echo "the local HTTP server did not start: $(cat "$tmp/server.log")" >&2; exit 1; }
url="http://127.0.0.1:$port/cifar-10-binary.tar.gz"
dead_port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

empty() { [[ -d $1 && -z $(ls -A "$1") ]]; }

# 1. The right MD5: downloaded, verified, extracted, trained on.
out=$("$dtbench" "${train[@]}" --download --download-url "$url" --download-md5 "$md5" \
      --data-dir "$tmp/good" --out "$tmp/run-good" 2>&1); rc=$?
if [[ $rc -ne 0 ]]; then
  fail "download with the right MD5: exit $rc, output: $out"
else
  for f in data_batch_1.bin data_batch_5.bin test_batch.bin batches.meta.txt; do
    [[ -f $tmp/good/cifar-10-batches-bin/$f ]] || fail "missing $f after the download"
  done
  [[ -f $tmp/good/cifar-10-binary.tar.gz ]] || fail "the verified archive was not kept"
  leftovers=$(ls -A "$tmp/good" | grep -E '\.part-|cifar-10-extract' || true)
  [[ -z $leftovers ]] || fail "temporary files left behind: $leftovers"
  "$py" - "$tmp/run-good" <<'PY' || fail "the run on the downloaded data is not as expected"
import json, sys
config = json.load(open(sys.argv[1] + "/config.json"))
summary = json.load(open(sys.argv[1] + "/summary.json"))
assert config["train_samples"] == 100 and config["test_samples"] == 10, config
assert summary["status"] == "completed", summary
PY
  echo "ok: download with the right MD5"
fi

# 2. A complete folder is used as it is: no network needed.
out=$("$dtbench" "${train[@]}" --download --download-url "http://127.0.0.1:$dead_port/x.tar.gz" \
      --data-dir "$tmp/good" --out "$tmp/run-again" 2>&1); rc=$?
[[ $rc -eq 0 ]] && echo "ok: a complete folder is reused" || fail "reuse of a complete folder: exit $rc, output: $out"

# 3. A wrong MD5: an error naming both sums and the URL; nothing left behind.
wrong=0123456789abcdef0123456789abcdef
out=$("$dtbench" "${train[@]}" --download --download-url "$url" --download-md5 "$wrong" \
      --data-dir "$tmp/bad" --out "$tmp/run-bad" 2>&1); rc=$?
if [[ $rc -eq 1 ]] && grep -q "$md5" <<<"$out" && grep -q "$wrong" <<<"$out" && grep -qF "$url" <<<"$out" \
   && grep -q -- "--download-md5" <<<"$out" && empty "$tmp/bad" && [[ ! -e $tmp/run-bad ]]; then
  echo "ok: a wrong MD5 fails and leaves nothing"
else
  fail "wrong MD5: exit $rc, left: $(ls -A "$tmp/bad" 2>&1), output: $out"
fi

# 4. HTTP 404 from a live server.
out=$("$dtbench" "${train[@]}" --download --download-url "http://127.0.0.1:$port/missing.tar.gz" \
      --data-dir "$tmp/404" --out "$tmp/run-404" 2>&1); rc=$?
if [[ $rc -eq 1 ]] && grep -q "cannot download http://127.0.0.1:$port/missing.tar.gz" <<<"$out" \
   && grep -q "404" <<<"$out" && empty "$tmp/404"; then
  echo "ok: HTTP 404 fails clearly"
else
  fail "HTTP 404: exit $rc, output: $out"
fi

# 5. A dead port: curl's own message.
out=$("$dtbench" "${train[@]}" --download --download-url "http://127.0.0.1:$dead_port/cifar-10-binary.tar.gz" \
      --data-dir "$tmp/dead" --out "$tmp/run-dead" 2>&1); rc=$?
if [[ $rc -eq 1 ]] && grep -q "cannot download http://127.0.0.1:$dead_port/" <<<"$out" \
   && grep -qiE "connect" <<<"$out" && grep -q -- "--download-url" <<<"$out" && empty "$tmp/dead"; then
  echo "ok: a dead port fails clearly"
else
  fail "dead port: exit $rc, output: $out"
fi

echo "download_http_test: $failures failure(s)"
exit $((failures > 0))
