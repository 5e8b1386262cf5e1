#!/usr/bin/env bash
# A refactoring must not move a number on the GPU either: runs each given config with the binary from before the
# change (.h200/before/labrun) and from after it (.h200/labrun), back to back on the same GPU, and diffs the two
# runs with `labrun diff --fail-on any` (the after binary's diff). Optionally runs the GPU tests of the after build
# first. Writes NAME-before.jsonl.gz, NAME-after.jsonl.gz, NAME-diff.txt and steps.txt to OUTDIR.
# Binaries: scripts/gpu_pack.sh packs the after build into .h200/; put the before build's labrun in .h200/before/.
# Usage, on the GPU machine from the repository root:
#   scripts/gpu_before_after.sh OUTDIR [--tests] CONFIG [CONFIG...]
#   e.g. scripts/gpu_before_after.sh $OUT --tests configs/masking.yaml
#        scripts/gpu_before_after.sh $OUT configs/subsets/*.yaml
# Exit status: non-zero if the tests failed, a sweep failed or a diff found a change; every step still runs.
set -uo pipefail
out=${1:?usage: scripts/gpu_before_after.sh OUTDIR [--tests] CONFIG...}
shift
mkdir -p "$out"
b=.h200
for archive in $b/bins.tar.xz $b/before/bins.tar.xz; do
  [ -f "$archive" ] && tar -xJf "$archive" -C "$(dirname "$archive")"
done
export LABRUN_TESTAID=$b/labrun_testaid
rc=0
{
  echo "after: $(cat $b/GIT_SHA 2>/dev/null || echo unknown), before: $(cat $b/before/GIT_SHA 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1
  echo "compute processes: $(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>&1 | wc -l)"
} > "$out/steps.txt"
if [ "${1:-}" = "--tests" ]; then
  shift
  start=$SECONDS
  timeout -s INT 240 $b/labrun_gpu_tests --gtest_filter="-*Beyond2e31:*SpeedAt*" > "$out/gpu_tests.log" 2>&1
  status=$?
  echo "gpu tests: exit $status in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
  grep -hE "^\[ +(FAILED|PASSED|SKIPPED) +\]|tests? from .* ran" "$out/gpu_tests.log"
  [ $status -eq 0 ] || rc=1
  gzip -f "$out/gpu_tests.log"
fi
for config in "$@"; do
  name=$(basename "$config" .yaml)
  for side in before after; do
    bin=$b/labrun
    [ "$side" = before ] && bin=$b/before/labrun
    start=$SECONDS
    "$bin" sweep "$config" --device cuda -q -o "$out/$name-$side.jsonl" --force > /dev/null 2> "$out/$name-$side.log"
    status=$?
    echo "$name $side: exit $status in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
    [ $status -eq 0 ] || { tail -n 5 "$out/$name-$side.log"; rc=1; }
    rm -f "$out/$name-$side.log"
  done
  $b/labrun diff "$out/$name-before.jsonl" "$out/$name-after.jsonl" --fail-on any > "$out/$name-diff.txt" 2>&1
  status=$?
  echo "$name diff --fail-on any: exit $status" | tee -a "$out/steps.txt"
  tail -n 4 "$out/$name-diff.txt"
  [ $status -eq 0 ] || rc=1
  gzip -f "$out/$name-before.jsonl" "$out/$name-after.jsonl"
done
exit $rc
