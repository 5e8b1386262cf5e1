#!/usr/bin/env bash
# Quick start: installs and builds what labrun needs (scripts/setup.sh), then runs every test with CTest.
# GPU tests (label gpu) report SKIPPED where no GPU is present. Usage: scripts/test.sh [ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# What only the tests use: headless Chromium to open the HTML views (tests/html/check_views.sh).
scripts/install_missing.sh test chromium chromium-driver python3-selenium
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
