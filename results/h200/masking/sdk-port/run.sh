#!/usr/bin/env bash
# The SDK port on one H200 loan: gelu's and masking's GPU tests; configs/masking.yaml and configs/gelu.yaml with the
# binary from before the port (ca31009, .h200/labrun-before) and after it (.h200/labrun), each diffed before ->
# after under --fail-on any; and the example's config (examples/rownorm) with its self-contained runner.
# Each step is bounded by its own time (SIGINT keeps finished points). Usage, on the GPU machine from the repository
# root after scripts/gpu_pack.sh and the before/example binaries are in .h200/: results/h200/masking/sdk-port/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
mkdir -p "$out"
b=.h200
[ -f $b/bins.tar.xz ] && tar -xJf $b/bins.tar.xz -C $b
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.csv" 2>&1
timeout -s INT 90 $b/labrun_gpu_tests --gtest_filter='GeluGpu.*:Gpu.*:GpuGenerate.*' > "$out/gpu_tests.log" 2>&1
echo "gpu tests exit $?" | tee -a "$out/steps.txt"
tail -3 "$out/gpu_tests.log"
for exp in masking gelu; do
  for side in before after; do
    bin=$b/labrun; [ "$side" = before ] && bin=$b/labrun-before
    # masking as configured (five processes, ~115 s); gelu (three processes, ~500 s as configured) in one process
    # with shorter samples, so both fit one device call.
    lab=(); cap=135
    [ "$exp" = gelu ] && lab=(--lab processes=1 --lab max_time_s=0.1 --lab max_samples=30) && cap=95
    start=$SECONDS
    timeout -s INT $cap "$bin" sweep configs/$exp.yaml --device cuda -q -o "$out/$exp-$side.jsonl" --force "${lab[@]}"
    echo "$exp $side: exit $? in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
  done
  $b/labrun diff "$out/$exp-before.jsonl" "$out/$exp-after.jsonl" --fail-on any > "$out/$exp-diff.txt" 2>&1
  echo "$exp diff before -> after: exit $?" | tee -a "$out/steps.txt"
  head -12 "$out/$exp-diff.txt"
done
start=$SECONDS
timeout -s INT 45 $b/rownorm_bench sweep examples/rownorm/configs/rownorm.yaml --device cuda -q -o "$out/rownorm.jsonl" --force
echo "rownorm: exit $? in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
$b/rownorm_bench report "$out/rownorm.jsonl" -o "$out/rownorm-report" --no-plots > /dev/null 2>&1
echo "done" >> "$out/steps.txt"
