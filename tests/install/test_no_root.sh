#!/usr/bin/env bash
# The README's first command where a cluster user stands: no root, no apt, none of dtbench's
# dependencies. A pristine Debian 12 root file system made by debootstrap holds only what a cluster's
# modules give, a compiler toolchain (g++ with the C and C++ library headers) and Python; an
# unprivileged user there runs scripts/bootstrap.sh on a copy of this checkout. It must install what it
# needs in user space (scripts/install_deps.sh's user way: CMake, ninja and nlohmann-json from PyPI,
# a CUDA toolkit from PyPI for LibTorch's CMake package, cxxopts, Catch2 and Gloo's headers through
# FetchContent), build dtbench and run the main job to its Table 1; then scripts/gpu_check.sh stages the
# gpu label's executables from that build (a GPU node's staging without apt's headers).
#
# Two things come from this machine, as a cluster's shared file system would give them: the torch
# environment (bind-mounted read-only, so that the 2.6 GB wheel is not downloaded again) and what
# FetchContent would fetch from GitHub, which this project's machines cannot reach: Debian's source
# packages of the same libraries (apt-get source cxxopts catch2 gloo), or where the mirror this machine
# reaches serves none (cxxopts and gloo, seen 2026-11-28: 404), the -dev package's installed headers,
# given through FETCHCONTENT_SOURCE_DIR_<NAME>.
#
# Needs root (debootstrap, chroot, mounts), debootstrap, dpkg-source and Debian's mirror; exits 77
# (skipped) without root or debootstrap. Usage: test_no_root.sh [SOURCE_DIR]  (default: this checkout)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "${1:-$here/../..}" && pwd)
mirror=${DTBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
[[ $(id -u) -eq 0 ]] || { echo "skipped: needs root (debootstrap, chroot, mounts)"; exit 77; }
command -v debootstrap >/dev/null || { echo "skipped: needs debootstrap (apt-get install debootstrap)"; exit 77; }
# shellcheck source=../../scripts/deps_paths.sh
source "$repo/scripts/deps_paths.sh"
[[ -f $TORCH_VENV/.dtbench-complete ]] ||
  { echo "FAIL: no torch environment at $TORCH_VENV to lend the chroot: run scripts/install_deps.sh" >&2; exit 1; }

work=$(mktemp -d /var/tmp/dtbench-no-root.XXXXXX)
root=$work/root
mounts=()
cleanup() {
  local m
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null; done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
step() { echo "no-root: $* ($(( $(date +%s) - start )) s)"; }
start=$(date +%s)

# 1. The machine: Debian 12 with a compiler and Python, nothing else of dtbench's.
debootstrap --variant=minbase --include=g++,python3,python3-venv,ca-certificates bookworm "$root" "$mirror" \
  >"$work/debootstrap.log" 2>&1 || { echo "FAIL: debootstrap: $(tail -n 5 "$work/debootstrap.log")" >&2; exit 1; }
step "debootstrap done, $(du -sm "$root" | cut -f1) MB"
for absent in cmake ninja mpicc /usr/include/gloo /usr/include/cxxopts.hpp /usr/include/nlohmann /usr/include/catch2 \
              /usr/include/pcap /usr/include/curl /usr/local/cuda; do
  if [[ -e $root/$absent || -e $root/usr/bin/$absent ]]; then
    echo "FAIL: the pristine root file system has $absent" >&2
    exit 1
  fi
done

# 2. What FetchContent would fetch from GitHub: Debian's source package of the same library, or where
# Debian's mirror as this machine reaches it serves none, the library's -dev package unpacked (its
# installed headers; cmake/FetchedDependencies.cmake takes both). apt's lists are kept apart from this
# machine's.
sources=$root/opt/sources
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$sources"
printf 'deb %s bookworm main\ndeb-src %s bookworm main\n' "$mirror" "$mirror" >"$work/apt/sources.list"
apt_private=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache" -o APT::Sandbox::User=root)
apt-get "${apt_private[@]}" update -qq >"$work/apt.log" 2>&1 ||
  { echo "FAIL: apt-get update: $(tail -n 5 "$work/apt.log")" >&2; exit 1; }
fetched() {  # fetched NAME SOURCE_PACKAGE DEV_PACKAGE: the folder for FETCHCONTENT_SOURCE_DIR_<NAME>
  local name=$1 source=$2 dev=$3 dir
  if (cd "$sources" && apt-get "${apt_private[@]}" source -qq "$source" >>"$work/apt.log" 2>&1); then
    dir=$(find "$sources" -maxdepth 1 -mindepth 1 -type d -name "$source-*" | head -n 1)
    echo "no-root: $name from Debian's source package: ${dir#"$root"}" >&2
  else
    mkdir -p "$sources/$dev"
    (cd "$work" && apt-get "${apt_private[@]}" download -qq "$dev" >>"$work/apt.log" 2>&1) &&
      dpkg -x "$work"/"$dev"_*.deb "$sources/$dev" || return 1
    dir=$sources/$dev/usr
    echo "no-root: $name: Debian's mirror here serves no source package $source; its $dev package's files: ${dir#"$root"}" >&2
  fi
  echo "${dir#"$root"}"
}
cxxopts=$(fetched cxxopts cxxopts libcxxopts-dev) && catch2=$(fetched catch2 catch2 catch2) &&
  gloo=$(fetched gloo gloo libgloo-dev) || { echo "FAIL: the header-only libraries: $(tail -n 5 "$work/apt.log")" >&2; exit 1; }
step "sources: $cxxopts $catch2 $gloo"

# 3. An unprivileged user with a copy of the checkout (tracked and untracked files, what a clone holds),
# and this machine's torch environment where install_deps.sh looks for it, read-only.
chroot "$root" useradd --create-home --shell /bin/bash dtuser
home=$root/home/dtuser
mkdir -p "$home/dtbench"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$home/dtbench"
venv_in=$home/.cache/dtbench/$(basename "$TORCH_VENV")
mkdir -p "$venv_in"
chroot "$root" chown -R dtuser:dtuser /home/dtuser
mount --bind "$TORCH_VENV" "$venv_in" && mounts+=("$venv_in") && mount -o remount,bind,ro "$venv_in"
for fs in proc dev; do mkdir -p "$root/$fs"; mount --rbind "/$fs" "$root/$fs" && mounts+=("$root/$fs"); done
# The network as this machine reaches it (a cluster's nodes have their own): names, the certificate
# authorities (a proxy's among them) and pip's settings.
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
[[ -f /etc/pip.conf ]] && cp /etc/pip.conf "$root/etc/pip.conf"

# 4. The README's first command, as that user.
env_vars=(HOME=/home/dtuser USER=dtuser LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin
          FETCHCONTENT_SOURCE_DIR_CXXOPTS="$cxxopts" FETCHCONTENT_SOURCE_DIR_CATCH2="$catch2"
          FETCHCONTENT_SOURCE_DIR_GLOO="$gloo")
ids=$(chroot "$root" id -u dtuser):$(chroot "$root" id -g dtuser)  # numeric: the host knows no dtuser
timeout --kill-after=10 1020 chroot --userspec="$ids" "$root" env -i "${env_vars[@]}" \
  bash -c 'cd ~/dtbench && scripts/bootstrap.sh' >"$work/bootstrap.log" 2>&1
rc=$?
step "scripts/bootstrap.sh as dtuser: exit $rc"
grep -E '^install_deps:|^bootstrap:|^-- (cxxopts|gloo|catch2|nlohmann-json|CUDA toolkit)' "$work/bootstrap.log"
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
[[ $rc -eq 0 ]] || fail "scripts/bootstrap.sh exited $rc: $(tail -n 30 "$work/bootstrap.log")"
grep -q '^install_deps: the user way' "$work/bootstrap.log" || fail "install_deps.sh did not take the user way"
for dependency in cxxopts catch2 gloo; do
  grep -q "^-- $dependency: from FETCHCONTENT_SOURCE_DIR_" "$work/bootstrap.log" ||
    fail "$dependency was not taken from FETCHCONTENT_SOURCE_DIR_"
done
grep -q '^-- nlohmann-json: PyPI' "$work/bootstrap.log" || fail "nlohmann-json did not come from PyPI"
grep -q '^## Table 1 — time and speedup' "$work/bootstrap.log" || fail "the main job printed no Table 1"
[[ -x $home/dtbench/build/dtbench ]] || fail "no build/dtbench"
tables=$(find "$home/dtbench/runs" -name report.md 2>/dev/null | head -n 1)
[[ -n $tables ]] && grep -q 'Table 3' "$tables" || fail "no report.md with the tables under runs/"

# 5. The GPU check's staging works there too, without apt's headers: the gpu test executables built in
# that build (configured without MPI, download and capture: no such library there) and staged.
if [[ $rc -eq 0 ]]; then
  timeout --kill-after=10 420 chroot --userspec="$ids" "$root" env -i "${env_vars[@]}" \
    bash -c 'cd ~/dtbench && export PATH=$HOME/.cache/dtbench/build-tools/bin:$PATH &&
             scripts/gpu_check.sh stage ~/staged --build-dir build' >"$work/stage.log" 2>&1
  stage_rc=$?
  step "scripts/gpu_check.sh stage --build-dir build as dtuser: exit $stage_rc"
  grep -E '^gpu_check: staged [0-9]+ gpu tests' "$work/stage.log" ||
    fail "the GPU check did not stage: $(tail -n 20 "$work/stage.log")"
  [[ -x $home/staged/bin/dtbench && -x $home/staged/bin/tests_gpu_training ]] || fail "no staged executables"
fi
step "done"
exit $status
