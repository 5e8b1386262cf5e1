#!/usr/bin/env bash
# Installs labrun's build dependencies from Debian's packages (idempotent: skips what is installed) and
# configures and builds labrun in build/. The CUDA toolkit is expected at /usr/local/cuda (nvcc optional:
# without it the host backend alone is built). Usage: scripts/setup.sh [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(cmake ninja-build g++ git libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libgtest-dev python3-matplotlib wamerican libbenchmark-tools libbenchmark-dev python3-scipy libjs-chart.js)
scripts/install_missing.sh setup "${packages[@]}"
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc > /dev/null; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja "$@"
fi
cmake --build build -j"$(nproc)"
