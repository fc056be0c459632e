#!/usr/bin/env bash
# Header-only build dependencies for a machine that reaches no package registry (GPU nodes with a
# CUDA LibTorch from PyPI's wheel): downloads Debian's nlohmann-json3-dev, libcxxopts-dev, catch2 and
# libgloo-dev packages here (needs apt and the network) and unpacks them into PREFIX with dpkg -x
# (libgloo-dev for its headers only: c10d's ProcessGroupGloo.hpp includes them, the wheel has none).
# Copy PREFIX along with the sources and configure with
#   -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)');PREFIX/usr"
# (docs/gpu.md; scripts/gpu_check.sh --build does). Usage: scripts/gpu_deps.sh [PREFIX]
# (default build-deps/gpu-prefix)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(realpath -m "${1:-build-deps/gpu-prefix}")
packages=(nlohmann-json3-dev libcxxopts-dev catch2 libgloo-dev)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 777 "$work"  # apt-get download runs as _apt where it can
(cd "$work" && apt-get download "${packages[@]}" >/dev/null) || {
  echo "gpu_deps.sh: apt-get download ${packages[*]} failed (run 'apt-get update' first, on a machine with Debian's package mirror)" >&2
  exit 1
}
mkdir -p "$prefix"
for deb in "$work"/*.deb; do dpkg -x "$deb" "$prefix"; done
for config in usr/share/cmake/nlohmann_json/nlohmann_jsonConfig.cmake usr/lib/cmake/cxxopts/cxxopts-config.cmake \
              usr/lib/cmake/Catch2/Catch2Config.cmake usr/include/gloo/algorithm.h; do
  [[ -f $prefix/$config ]] || { echo "gpu_deps.sh: $config is missing from the unpacked packages" >&2; exit 1; }
done
echo "header-only dependencies in $prefix/usr ($(du -sh "$prefix" | cut -f1)); configure with"
echo "  -DCMAKE_PREFIX_PATH=\"\$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)');$prefix/usr\""
