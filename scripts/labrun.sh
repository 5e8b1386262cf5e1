#!/usr/bin/env bash
# Quick start: installs and builds what labrun needs (scripts/setup.sh), then runs labrun with the given
# arguments from the current directory, e.g. scripts/labrun.sh sweep configs/masking.yaml
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The first time this installs packages and builds (minutes on 2 cores): say so, and keep the log.
log="$root/build-setup.log"
if [ ! -x "$root/build/labrun" ]; then
  echo "labrun.sh: first run: installing dependencies and building (a few minutes; log: $log)" >&2
fi
if ! "$root/scripts/setup.sh" > "$log" 2>&1; then
  echo "labrun.sh: setup or build failed; the end of $log:" >&2
  tail -n 30 "$log" >&2
  exit 1
fi
exec "$root/build/labrun" "$@"
