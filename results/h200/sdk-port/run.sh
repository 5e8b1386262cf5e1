#!/usr/bin/env bash
# The experiments ported onto the SDK (host_read, kv_cache, layout, gemv, softmax) and the GELU f32 kernel, on one
# H200 loan: their GPU suites (and gelu's, whose vectorised kernel now launches a full grid); GELU at n = 2^26
# beside PyTorch (results/h200/gelu/torch/torch_gelu.py, same GPU, same call); the example runner's config; and for
# each ported experiment a subset (configs/ here: every variant and mode at two sizes, three processes) run with
# the binary from before the SDK (ca31009, .h200/labrun-before) and after the port (.h200/labrun), diffed.
# Usage, on the GPU machine from the repository root with the binaries in .h200/: results/h200/sdk-port/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
mkdir -p "$out"
b=.h200 here=results/h200/sdk-port
[ -f $b/bins.tar.xz ] && tar -xJf $b/bins.tar.xz -C $b
export LABRUN_TESTAID=$b/labrun_testaid
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.csv" 2>&1
suites='GeluGpu.*:HostReadGpu.*:KvCacheGpu.*:LayoutGpu.*:GemvGpu.*:SoftmaxGpu.*'
timeout -s INT 120 $b/labrun_gpu_tests --gtest_filter="$suites:-*Beyond2e31:*SpeedAt*" > "$out/gpu_tests.log" 2>&1
echo "gpu tests exit $?" | tee "$out/steps.txt"
timeout -s INT 60 $b/labrun_gpu_tests --gtest_filter='GeluGpu.IndicesBeyond2e31:LayoutGpu.OffsetsBeyond2e31' > "$out/gpu_tests_2e31.log" 2>&1
echo "gpu tests beyond 2^31 exit $?" | tee -a "$out/steps.txt"
grep -hE "^\[ +(FAILED|PASSED|SKIPPED) +\]|tests? from .* ran" "$out"/gpu_tests*.log
start=$SECONDS
timeout -s INT 60 $b/labrun sweep configs/gelu.yaml --device cuda -q --only n=67108864 -o "$out/gelu-64M.jsonl" --force > "$out/gelu-64M.txt" 2>&1
echo "gelu n=2^26: exit $? in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
grep -E "^(unfused|fused|fused_vec) " "$out/gelu-64M.txt"
python3 results/h200/gelu/torch/torch_gelu.py 2>&1 | tee "$out/torch_gelu.txt"
start=$SECONDS
timeout -s INT 45 $b/rownorm_bench sweep examples/rownorm/configs/rownorm.yaml --device cuda -q --lab processes=1 \
  -o "$out/rownorm.jsonl" --force > "$out/rownorm.txt" 2>&1
echo "rownorm: exit $? in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
for exp in host_read kv_cache layout gemv softmax; do
  for side in before after; do
    bin=$b/labrun; [ "$side" = before ] && bin=$b/labrun-before
    start=$SECONDS
    timeout -s INT 22 "$bin" sweep $here/configs/$exp.yaml --device cuda -q -o "$out/$exp-$side.jsonl" --force > /dev/null 2>&1
    echo "$exp $side: exit $? in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
  done
  $b/labrun diff "$out/$exp-before.jsonl" "$out/$exp-after.jsonl" --fail-on any > "$out/$exp-diff.txt" 2>&1
  echo "$exp diff before -> after: exit $?" | tee -a "$out/steps.txt"
  grep -E "matched:" "$out/$exp-diff.txt"
done
echo done >> "$out/steps.txt"
