#!/usr/bin/env bash
# Quick start: installs and builds what labrun needs (scripts/setup.sh), then runs labrun with the given
# arguments from the current directory, e.g. scripts/labrun.sh sweep configs/masking.yaml
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" > /dev/null
exec "$root/build/labrun" "$@"
