#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root, with the binaries packed by scripts/gpu_pack.sh in .h200/:
# records the GPU state, runs the GPU tests, then each given sweep on the GPU, writing JSONL and logs to OUTDIR.
# Usage: scripts/gpu_run.sh OUTDIR [--tests] CONFIG [CONFIG...]
#   --tests  also run the GPU test suite first (gpu_tests.log)
# Exit status: non-zero if the tests or a sweep failed; every step still runs.
set -uo pipefail
out=${1:?usage: scripts/gpu_run.sh OUTDIR [--tests] CONFIG...}
shift
mkdir -p "$out"
bin=.h200
rc=0
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
if [ "${1:-}" = "--tests" ]; then
  shift
  "$bin/labrun_gpu_tests" --gtest_brief=1 2>&1 | tee "$out/gpu_tests.log" || rc=1
fi
i=0
for config in "$@"; do
  i=$((i + 1))
  name=$i-$(basename "$config" .yaml)
  echo "== labrun sweep $config --device cuda"
  "$bin/labrun" sweep "$config" --device cuda -q -o "$out/$name.jsonl" --force > "$out/$name.summary.txt" 2> "$out/$name.log"
  status=$?
  tail -n 3 "$out/$name.summary.txt"
  [ $status -eq 0 ] || { echo "sweep $config exited $status"; tail -n 5 "$out/$name.log"; rc=1; }
done
exit $rc
