#!/usr/bin/env bash
# container/dtbench.def checked without a container runtime (none runs on this project's machines, and
# Debian 12 packages no apptainer): its steps done by hand the way `apptainer build` does them. A
# pristine Debian 12 root file system from debootstrap (the definition's Bootstrap, OSVersion,
# MirrorURL and Include), the definition's %files copied in, its %post run by chroot as root, its
# %test, then the main job with the image's dtbench. Prints and writes into OUTDIR/container.txt:
# %post's time, the root file system's size after it, its mksquashfs size (the .sif's payload, gzip as
# apptainer's default), and the main job's Table 1. The definition's build arguments ({{ NAME }}) take
# their %arguments values, or those given here as `apptainer build` takes them (e.g. --build-arg
# TORCH_VERSION=2.8.0 --build-arg TORCH_CUDA=cu128: the image for CUDA 12, container/setup.sh).
# Needs root, debootstrap, squashfs-tools and Debian's mirror and PyPI (%post installs from both).
# Usage: scripts/container_check.sh OUTDIR [--build-arg NAME=VALUE]...
set -euo pipefail
usage="usage: scripts/container_check.sh OUTDIR [--build-arg NAME=VALUE]..."
if (($# == 0)) || [[ $1 == -* ]]; then
  echo "$usage (give OUTDIR: the folder for container.txt and the logs)" >&2
  exit 2
fi
out=$(realpath -m -- "$1")  # the caller's: resolved before the cd below
shift
given=()
while (($#)); do
  [[ $1 == --build-arg && ${2:-} == [A-Za-z_]*=* ]] || { echo "$usage (got '$1')" >&2; exit 2; }
  given+=("$2")
  shift 2
done
cd "$(dirname "$0")/.."
repo=$PWD
def=container/dtbench.def
header() { sed -nE "s/^$1:[[:space:]]*(.*)$/\\1/p" "$def" | head -n 1; }
raw_section() { awk -v name="%$1" '$1 ~ /^%/ {on = ($1 == name); next} on && NF' "$def"; }
# The build arguments: %arguments' NAME=VALUE lines, then --build-arg's (names among them only).
declare -A build_args=()
while IFS= read -r line; do
  line=${line#"${line%%[![:space:]]*}"}
  build_args[${line%%=*}]=${line#*=}
done < <(raw_section arguments)
for assignment in "${given[@]+"${given[@]}"}"; do
  [[ -v build_args[${assignment%%=*}] ]] ||
    { echo "container_check: --build-arg ${assignment%%=*}: not among $def's %arguments (${!build_args[*]})" >&2; exit 2; }
  build_args[${assignment%%=*}]=${assignment#*=}
done
# Its input with every {{ NAME }} replaced by the argument's value, as apptainer build does.
templated() {
  local text value pattern='\{\{[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*\}\}'
  text=$(cat)
  while [[ $text =~ $pattern ]]; do
    [[ -v build_args[${BASH_REMATCH[1]}] ]] ||
      { echo "container_check: $def uses {{ ${BASH_REMATCH[1]} }}, which its %arguments do not define" >&2; exit 1; }
    value=${build_args[${BASH_REMATCH[1]}]}
    text=${text//"${BASH_REMATCH[0]}"/"$value"}
  done
  printf '%s\n' "$text"
}
templated <"$def" >/dev/null  # every {{ NAME }} has a value, before anything is made
section() { raw_section "$1" | templated; }
[[ $(id -u) -eq 0 ]] || { echo "container_check: needs root (debootstrap, chroot)" >&2; exit 2; }
for tool in debootstrap mksquashfs; do
  command -v "$tool" >/dev/null || { echo "container_check: needs $tool (scripts/install_deps.sh)" >&2; exit 2; }
done
mkdir -p "$out"

release=$(header OSVersion) mirror=$(header MirrorURL) include=$(header Include | tr -d ' ')

work=$(mktemp -d /var/tmp/dtbench-container.XXXXXX)
root=$work/root
mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
report() { echo "$*" | tee -a "$out/container.txt"; }
: >"$out/container.txt"

start=$(date +%s)
debootstrap --variant=minbase ${include:+--include="$include"} "$release" "$root" "$mirror" >"$out/debootstrap.log" 2>&1
report "Bootstrap: debootstrap $release from $mirror (minbase, include $include): $(( $(date +%s) - start )) s," \
       "$(du -sm "$root" | cut -f1) MB"

# %files: "source destination", sources relative to the checkout's top folder.
while read -r source destination; do
  mkdir -p "$root$(dirname "$destination")"
  cp -a "$repo/$source" "$root$destination"
done < <(section files)

for fs in proc dev; do mount --rbind "/$fs" "$root/$fs" && mounts+=("$root/$fs"); done
# The network as this machine reaches it while %post runs (apptainer build gives %post the host's
# network too): names, the certificate authorities (a proxy's among them) and pip's settings; the
# image's own are put back after it.
cp /etc/resolv.conf "$root/etc/resolv.conf"
bundle=$root/etc/ssl/certs/ca-certificates.crt
[[ -f $bundle ]] && cp "$bundle" "$work/image-ca-certificates.crt"
cp /etc/ssl/certs/ca-certificates.crt "$bundle"
[[ -f /etc/pip.conf ]] && cp /etc/pip.conf "$root/etc/pip.conf"
section post >"$root/tmp/post.sh"
start=$(date +%s)
chroot "$root" /bin/bash -euo pipefail /tmp/post.sh >"$out/post.log" 2>&1 ||
  { echo "container_check: %post failed: $(tail -n 20 "$out/post.log")" >&2; exit 1; }
post_s=$(( $(date +%s) - start ))
rm -f "$root/tmp/post.sh" "$root/etc/resolv.conf" "$root/etc/pip.conf"
[[ -f $work/image-ca-certificates.crt ]] && cp "$work/image-ca-certificates.crt" "$bundle"
for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}"; done
mounts=()
report "%post (container/setup.sh): $post_s s"
report "root file system after %post: $(du -sm --one-file-system "$root" | cut -f1) MB"
start=$(date +%s)
mksquashfs "$root" "$work/image.squashfs" -comp gzip -noappend -no-progress >"$out/mksquashfs.log" 2>&1
report "mksquashfs (gzip): $(du -m "$work/image.squashfs" | cut -f1) MB in $(( $(date +%s) - start )) s"
rm -f "$work/image.squashfs"

# %environment, then %test and the main job with the image's own dtbench.
for fs in proc dev; do mount --rbind "/$fs" "$root/$fs" && mounts+=("$root/$fs"); done
environment=$(section environment)
in_image() { chroot "$root" /bin/bash -c "$environment"$'\n'"$1"; }
in_image "$(section test)" && report "%test: passed"
in_image 'cd /opt/dtbench/src && scripts/main_job.sh /opt/dtbench/bin/dtbench' >"$out/main_job.log" 2>&1 ||
  { echo "container_check: the main job failed in the image: $(tail -n 20 "$out/main_job.log")" >&2; exit 1; }
report "main job in the image: $(grep -c '^| resnet18' "$out/main_job.log") table rows"
sed -n '/^## Table 1/,/^- /p' "$out/main_job.log" | tee -a "$out/container.txt"
