#!/usr/bin/env bash
# Builds labrun and its GPU tests here (no GPU needed) as self-contained binaries (static libstdc++, yaml-cpp
# and cudart; only libc/libm needed at run time) and puts them in .h200/, the folder that travels to the GPU
# machine (nothing can be installed there: it has no package registry). There, run the GPU tests with
# LABRUN_TESTAID=.h200/labrun_testaid (the fault test aid). Usage: scripts/gpu_pack.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --build build --target labrun labrun_gpu_tests labrun_testaid -j"$(nproc)"
rm -rf .h200 && mkdir -p .h200
cp build/labrun build/tests/labrun_gpu_tests build/tests/labrun_testaid .h200/
git rev-parse HEAD > .h200/GIT_SHA 2>/dev/null || echo unknown > .h200/GIT_SHA
echo "packed: $(ls .h200 | tr '\n' ' ')(built from $(cat .h200/GIT_SHA))"
