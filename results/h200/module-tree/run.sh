#!/usr/bin/env bash
# After src/ moved into module folders and the long functions were split (a refactoring: nothing may change on the
# GPU either): every GPU suite but the 2^31-element and speed tests, and the SDK port's subsets of the five
# experiments whose code changed last (rank, softmax, gemv, host_read, kv_cache; results/h200/sdk-port/configs/),
# to be diffed on the host against that port's `after` runs (results/h200/sdk-port/out/EXP-after.jsonl.gz).
# Usage, on the GPU machine from the repository root with the binaries in .h200/ (scripts' packing):
#   results/h200/module-tree/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
mkdir -p "$out"
b=.h200
[ -f $b/bins.tar.xz ] && tar -xJf $b/bins.tar.xz -C $b
export LABRUN_TESTAID=$b/labrun_testaid
echo "build $(cat $b/GIT_SHA 2>/dev/null)" > "$out/steps.txt"
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem,temperature.gpu --format=csv >> "$out/steps.txt" 2>&1
start=$SECONDS
timeout -s INT 240 $b/labrun_gpu_tests --gtest_filter="-*Beyond2e31:*SpeedAt*" > "$out/gpu_tests.log" 2>&1
echo "gpu tests: exit $? in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
grep -hE "^\[ +(FAILED|PASSED|SKIPPED) +\]|tests? from .* ran" "$out/gpu_tests.log"
for exp in rank softmax gemv host_read kv_cache; do
  start=$SECONDS
  timeout -s INT 40 $b/labrun sweep results/h200/sdk-port/configs/$exp.yaml --device cuda -q -o "$out/$exp-now.jsonl" \
    --force > /dev/null 2>&1
  echo "$exp: exit $? in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
  gzip -f "$out/$exp-now.jsonl"
done
