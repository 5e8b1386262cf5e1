#!/usr/bin/env bash
# Runs GPU test groups one after another within BUDGET seconds, each group's log in OUT/gpu-tests/GROUP.log.
# The GPU suite needs more than one device call (600 s): this runs it in groups across calls. Binaries: scripts/gpu_pack.sh.
# Usage, on the GPU machine from the repository root: scripts/gpu_tests.sh OUT BUDGET FILTER...
out=$1/gpu-tests; budget=$2; shift 2
mkdir -p "$out"
start=$(date +%s)
b=.h200
[ -f $b/labrun_gpu_tests ] || tar -xJf $b/bins.tar.xz -C $b
for f in "$@"; do
  left=$(( budget - ($(date +%s) - start) ))
  name=${f//[^A-Za-z]/_}
  [ $left -gt 20 ] || { echo "$f: not run (budget spent)" | tee -a "$out/summary.txt"; continue; }
  t0=$(date +%s)
  LABRUN_TESTAID=$b/labrun_testaid timeout $left $b/labrun_gpu_tests --gtest_filter="$f" > "$out/$name.log" 2>&1
  rc=$?
  echo "$f: exit $rc in $(( $(date +%s) - t0 )) s; $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/$name.log" | tr '\n' ' ')" | tee -a "$out/summary.txt"
done
