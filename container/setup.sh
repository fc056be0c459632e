#!/usr/bin/env bash
# What an image of dtbench runs to install and build it (container/dtbench.def's %post, the
# Containerfile's RUN): the project's own install as root on Debian 12 (scripts/install_deps.sh
# --minimal: Debian's packages the build and the ranks need, and the torch environment), then the
# dtbench binary alone, installed at /opt/dtbench/bin/dtbench with the torch environment at
# /opt/dtbench/torch-<version>-<cuda>; then what an image does not need is removed (the build's
# objects, apt's and pip's caches). The sources stay at /opt/dtbench/src (the slurm/ job scripts, the
# docs). Usage (as root, in the image being built): /opt/dtbench/src/container/setup.sh
set -euo pipefail
src=/opt/dtbench/src
cd "$src"
export DTBENCH_CACHE_DIR=/opt/dtbench
start=$(date +%s)
scripts/install_deps.sh --minimal
source scripts/deps_paths.sh
cmake -S . -B /opt/dtbench/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDTBENCH_BUILD_TESTS=OFF
cmake --build /opt/dtbench/build --target dtbench
install -D -m 0755 /opt/dtbench/build/dtbench /opt/dtbench/bin/dtbench
rm -rf /opt/dtbench/build /root/.cache/pip /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
echo "container setup: dtbench $(/opt/dtbench/bin/dtbench --version 2>/dev/null | head -n 1) with torch in" \
     "$TORCH_VENV, $(( $(date +%s) - start )) s"
