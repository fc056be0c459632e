#!/usr/bin/env bash
# Installs the Debian 12 packages dtbench builds, tests and benchmarks with.
# Idempotent: packages already present are not fetched again; safe to run repeatedly.
# Usage: scripts/install_deps.sh [--minimal]
#   --minimal  only what the build and the test suite need (no figures, Slurm or namespaces)
set -euo pipefail

core=(build-essential cmake ninja-build pkg-config git
      libtorch-dev libgloo-dev libopenmpi-dev openmpi-bin
      libcxxopts-dev catch2 nlohmann-json3-dev zlib1g-dev
      libcurl4-openssl-dev libarchive-dev libpcap-dev dataset-fashion-mnist)
extra=(python3-torch python3-torchvision python3-pandas python3-matplotlib
       slurm-wlm munge nftables iproute2 tcpdump slurmdbd mariadb-server)

want=("${core[@]}")
[[ "${1:-}" == "--minimal" ]] || want+=("${extra[@]}")

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#want[@]} packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install_deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install_deps: done"
