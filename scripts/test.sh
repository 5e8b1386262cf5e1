#!/usr/bin/env bash
# Quick start: installs and builds what labrun needs (scripts/setup.sh), then runs every test with CTest.
# GPU tests (label gpu) report SKIPPED where no GPU is present. Usage: scripts/test.sh [ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
