#!/bin/bash
# DTBENCH_CONTAINER on a private one-node Slurm: `dtbench sweep --launcher slurm` with an image named
# in the environment runs every rank through `apptainer exec --nv [DTBENCH_CONTAINER_ARGS] IMAGE`.
# No container runtime works on this project's machines, so `apptainer` is a stub first on PATH that
# records its arguments and runs the command after the image (DTBENCH_IN_CONTAINER names this build's
# dtbench as the image's). Checked: both points complete, one stub call per rank (1 + 2), each with
# --nv, the --bind of DTBENCH_CONTAINER_ARGS and the image; an image that does not exist fails the
# job with a message naming it, before any rank starts.
#   tests/slurm/test_container.sh path/to/dtbench
set -uo pipefail
DTBENCH=$(realpath "${1:?usage: $0 DTBENCH}")
source "$(dirname "$0")/common.sh"
start_slurm
cd "$work" || fail "cd $work"

image=$work/dtbench.sif
record=$work/apptainer-calls.txt
: >"$image"
mkdir -p "$work/bin"
cat >"$work/bin/apptainer" <<STUB
#!/bin/bash
echo "\$*" >>"$record"
[[ \$1 == exec ]] || { echo "apptainer stub: only exec" >&2; exit 2; }
shift
while (( \$# )) && [[ \$1 != "$image" ]]; do shift; done
shift
exec "\$@"
STUB
chmod +x "$work/bin/apptainer"

train=(--model lenet --dataset synthetic --synthetic-train-size 256 --synthetic-test-size 64 --epochs 1
       --max-steps 2 --threads 1 --quiet)
info "a sweep whose ranks run in the image"
PATH=$work/bin:$PATH DTBENCH_CONTAINER=$image DTBENCH_CONTAINER_ARGS="--bind /scratch" DTBENCH_IN_CONTAINER=$DTBENCH \
  timeout 150 "$DTBENCH" sweep --launcher slurm --out "$work/runs" --grid world=1,2 -- "${train[@]}" >"$work/sweep.txt" 2>&1
rc=$?
cat "$work/sweep.txt"
[[ $rc == 0 ]] || { tail -n 30 "$work/runs/world2.log" >&2; fail "the sweep exited $rc, want 0"; }
for name in world1 world2; do
  [[ $(run_status "$work/runs/$name") == completed ]] || fail "$name did not complete"
done
cat "$record"
[[ $(wc -l <"$record") == 3 ]] || fail "want 3 apptainer calls (1 rank + 2 ranks), got $(wc -l <"$record")"
while read -r line; do
  [[ $line == "exec --nv --bind /scratch $image $DTBENCH train "* ]] ||
    fail "an apptainer call is not 'exec --nv --bind /scratch IMAGE DTBENCH train ...': $line"
done <"$record"

info "an image that does not exist"
PATH=$work/bin:$PATH DTBENCH_CONTAINER=$work/missing.sif \
  timeout 150 "$DTBENCH" sweep --launcher slurm --retries 0 --out "$work/missing" --grid world=1 -- "${train[@]}" \
  >"$work/missing.txt" 2>&1
[[ $? != 0 ]] || fail "a sweep with a missing image exited 0"
grep -q "DTBENCH_CONTAINER=$work/missing.sif does not exist" "$work/missing/world1.log" ||
  fail "the job's log does not name the missing image: $(tail -n 10 "$work/missing/world1.log")"
info "passed"
