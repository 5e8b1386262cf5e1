#!/usr/bin/env bash
# One device call: configs/masking.yaml runs with the named builds, one after another, each trimmed and xz'd to $OUT.
# The builds are .h200/labrun-BUILD (scripts/gpu_pack.sh's folder; packed in .h200/bins.tar.xz).
# Usage, on the GPU machine from the repository root: bash results/h100/fleet/fleet.sh NAME:BUILD[:ONLY] ...
# (NAME 'slower' sets LABRUN_TESTAID_SLOWER=where:0.1; ONLY is passed to --only.)
set -u
[ -f .h200/labrun ] || tar -xJf .h200/bins.tar.xz -C .h200
{ date -u; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,power.draw --format=csv,noheader
  echo "compute apps:"; nvidia-smi --query-compute-apps=pid,name --format=csv,noheader; } > "$OUT/env.txt" 2>&1
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1 | sed 's/GPU-//' | cut -c1-8)
p() { echo "$(date -u +%T) $*" >> "$OUT/progress.txt"; }
for spec in "$@"; do
  IFS=: read -r name build only <<< "$spec"
  envs=(); [ "$name" = slower ] && envs=(LABRUN_TESTAID_SLOWER=where:0.1)
  args=(); [ -n "$only" ] && args=(--only "$only")
  out=/tmp/masking-$name.jsonl
  p "start $name build $build only '$only'"
  env "${envs[@]}" timeout 560 .h200/labrun-$build sweep configs/masking.yaml --device cuda -q "${args[@]}" -o $out > "$OUT/$name.log" 2>&1
  p "$name exit $?"
  f=masking-$name; [ "$name" = slower ] || f=masking-h100-$uuid-$build
  python3 results/h100/fleet/trim.py < $out | xz -9 > "$OUT/$f.jsonl.xz"
  p "$name trimmed $(stat -c %s "$OUT/$f.jsonl.xz") bytes"
done
p done
