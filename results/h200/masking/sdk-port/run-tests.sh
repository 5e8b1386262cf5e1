#!/usr/bin/env bash
# The SDK port's GPU tests (the sweeps before and after: run.sh): gelu's and masking's GPU tests on the SDK (all of GeluGpu
# but the 2^31-element and speed tests; masking's lab-pass, C05, C06, C09, C11/C13, C12 and device-generation
# tests), and the example's config with its self-contained runner in one process.
# Usage, on the GPU machine from the repository root: results/h200/masking/sdk-port/run-tests.sh OUT
set -uo pipefail
out=${1:?usage: run-tests.sh OUT}
mkdir -p "$out"
b=.h200
[ -f $b/bins.tar.xz ] && tar -xJf $b/bins.tar.xz -C $b
filter='GeluGpu.*:Gpu.AllVariants*:Gpu.C05*:Gpu.C06*:Gpu.C09*:Gpu.C11*:Gpu.C12*:GpuGenerate.*'
filter+=':-GeluGpu.IndicesBeyond2e31:GeluGpu.SpeedAt64M'
LABRUN_TESTAID=$b/labrun_testaid timeout -s INT 150 $b/labrun_gpu_tests --gtest_filter="$filter" > "$out/gpu_tests.log" 2>&1
echo "gpu tests exit $?" | tee "$out/steps.txt"
grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|tests? from .* ran" "$out/gpu_tests.log" | tail -25
start=$SECONDS
timeout -s INT 90 $b/rownorm_bench sweep examples/rownorm/configs/rownorm.yaml --device cuda -q --lab processes=1 \
  -o "$out/rownorm.jsonl" --force | tail -30
echo "rownorm: exit ${PIPESTATUS[0]} in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
