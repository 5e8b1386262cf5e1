#!/usr/bin/env bash
# All nine experiments on the SDK and kernels/, on one GPU loan: every GPU suite (KernelsGpu, the nine experiments',
# the workers'; not the 2^31-element and speed tests); GELU at n = 2^26 beside PyTorch (results/h200/gelu/torch/
# torch_gelu.py, same GPU, same call); the example runner's config (built against the installed prefix, using
# kernels/reduce.cuh); and for each of the seven experiments ported in this step a subset (configs/ here: every
# variant and mode at two sizes, three processes) run with the binary from before the SDK (ca31009,
# .h200/labrun-before) and after (.h200/labrun), diffed under --fail-on any.
# Usage, on the GPU machine from the repository root with the binaries in .h200/:
#   results/h200/sdk-port/run.sh OUT [tests|subsets]     (default: both; each part fits one device call)
set -uo pipefail
out=${1:?usage: run.sh OUT [tests|subsets]}
part=${2:-all}
mkdir -p "$out"
b=.h200 here=results/h200/sdk-port
[ -f $b/bins.tar.xz ] && tar -xJf $b/bins.tar.xz -C $b
export LABRUN_TESTAID=$b/labrun_testaid
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.csv" 2>&1
if [ "$part" != subsets ]; then
timeout -s INT 150 $b/labrun_gpu_tests --gtest_filter="-*Beyond2e31:*SpeedAt*" > "$out/gpu_tests.log" 2>&1
echo "gpu tests exit $?" | tee -a "$out/steps.txt"
grep -hE "^\[ +(FAILED|PASSED|SKIPPED) +\]|tests? from .* ran" "$out"/gpu_tests.log
start=$SECONDS
timeout -s INT 60 $b/labrun sweep configs/gelu.yaml --device cuda -q --only n=67108864 -o "$out/gelu-64M.jsonl" --force > "$out/gelu-64M.txt" 2>&1
echo "gelu n=2^26: exit $? in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
grep -E "^(unfused|fused|fused_vec) " "$out/gelu-64M.txt"
python3 results/h200/gelu/torch/torch_gelu.py 2>&1 | tee "$out/torch_gelu.txt"
start=$SECONDS
timeout -s INT 45 $b/rownorm_bench sweep examples/rownorm/configs/rownorm.yaml --device cuda -q --lab processes=1 \
  -o "$out/rownorm.jsonl" --force > "$out/rownorm.txt" 2>&1
echo "rownorm: exit $? in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
tail -8 "$out/rownorm.txt"
fi
[ "$part" = tests ] && exit 0
for exp in rank attention host_read kv_cache layout gemv softmax; do
  cap=25; [ "$exp" = attention ] && cap=45
  for side in before after; do
    bin=$b/labrun; [ "$side" = before ] && bin=$b/labrun-before
    start=$SECONDS
    timeout -s INT $cap "$bin" sweep $here/configs/$exp.yaml --device cuda -q -o "$out/$exp-$side.jsonl" --force > /dev/null 2>&1
    echo "$exp $side: exit $? in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
  done
  $b/labrun diff "$out/$exp-before.jsonl" "$out/$exp-after.jsonl" --fail-on any > "$out/$exp-diff.txt" 2>&1
  echo "$exp diff before -> after: exit $?" | tee -a "$out/steps.txt"
  grep -E "matched:" "$out/$exp-diff.txt"
done
echo done >> "$out/steps.txt"

