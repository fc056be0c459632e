#!/usr/bin/env bash
# A document's examples, run as written: every command of its ```bash blocks, in order, in a fresh
# directory where `build/` is the build under test and experiments/, slurm/ and scripts/ are the
# checkout's ($SCRATCH a folder of its own there). Left out, and listed: every command whose last line
# ends in `# needs ...` (a dataset, the internet, root's cluster, Slurm) or `# not run here ...` (a GPU
# cluster's, an image build), and for README.md the two opening commands (what CI itself runs: they
# install, build and test) and the "Building by hand" section (a build of its own). Every other
# command must exit 0. Usage: test_readme_examples.sh REPO BUILD_DIR [DOC]  (DOC: default README.md,
# relative to REPO)
set -uo pipefail
repo=$(realpath "$1") build=$(realpath "$2") doc=${3:-README.md}
readme=0
[[ $doc == README.md ]] && readme=1
work=$(mktemp -d "${TMPDIR:-/tmp}/readme-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
ln -s "$build" "$work/build"
for d in experiments slurm scripts; do ln -s "$repo/$d" "$work/$d"; done
export SCRATCH=$work/scratch
mkdir -p "$SCRATCH"
# The quick start fetches CIFAR-10 into $SCRATCH/data first (a step that needs the internet, left out here);
# its sweeps check, even dry, that the dataset's files are there before anything queues: their names stand in
# for it (no command that is run here reads their content).
mkdir -p "$SCRATCH/data/cifar-10-batches-bin"
for f in data_batch_1 data_batch_2 data_batch_3 data_batch_4 data_batch_5 test_batch; do
  touch "$SCRATCH/data/cifar-10-batches-bin/$f.bin"
done

# The commands, one per record (continuation lines joined), separated by \036 (RS), each prefixed
# "run" or "skip needs ..." and a tab.
commands=$(awk -v readme="$readme" '
  readme && /^## Building by hand/ { done = 1 }
  /^```bash$/ { if (!done) { block++; inside = 1 }; next }
  /^```$/ { inside = 0; next }
  !inside || (readme && block == 1) || done { next }
  {
    line = $0
    if (command == "" && line ~ /^[[:space:]]*$/) next
    command = command line "\n"
    if (line ~ /\\$/) next
    if (match(line, /# (needs|not run here)[^#]*$/)) printf "skip %s\t%s\036", substr(line, RSTART + 2), command
    else printf "run \t%s\036", command
    command = ""
  }' "$repo/$doc")

failures=0 ran=0 skipped=0 n=0
start=$SECONDS
while IFS= read -r -d $'\036' record; do
  n=$((n + 1))
  kind=${record%%$'\t'*} command=${record#*$'\t'}
  one_line=$(tr '\n' ' ' <<<"$command" | sed 's/\\ / /g; s/  */ /g')
  if [[ $kind == skip* ]]; then
    skipped=$((skipped + 1))
    echo "skipped (${kind#skip }): ${one_line:0:110}"
    continue
  fi
  t0=$SECONDS
  (cd "$work" && timeout 250 bash -c "$command") </dev/null >"$work/example-$n.log" 2>&1
  rc=$?
  ran=$((ran + 1))
  if [[ $rc -ne 0 ]]; then
    failures=$((failures + 1))
    echo "FAIL (exit $rc, $((SECONDS - t0)) s): $one_line" >&2
    tail -n 25 "$work/example-$n.log" >&2
  else
    echo "ok ($((SECONDS - t0)) s): ${one_line:0:110}"
  fi
done < <(printf '%s' "$commands")

least=${DTBENCH_DOC_LEAST_COMMANDS:-10}
(( ran >= least )) || { echo "FAIL: only $ran commands of $doc were found to run" >&2; failures=$((failures + 1)); }
echo "$doc examples: $ran ran, $failures failed, $skipped need something this machine lacks, in $((SECONDS - start)) s"
exit $((failures > 0))
