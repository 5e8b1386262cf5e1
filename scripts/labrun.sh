#!/usr/bin/env bash
# Quick start: installs and builds what labrun needs (scripts/setup.sh), then runs labrun with the given
# arguments, e.g. scripts/labrun.sh sweep configs/masking.yaml
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh > /dev/null
exec build/labrun "$@"
