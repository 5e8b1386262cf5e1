#!/usr/bin/env bash
# The SDK port on one H200 loan: configs/masking.yaml and configs/gelu.yaml with the binary from before the port
# (ca31009, .h200/labrun-before) and after it (.h200/labrun), each diffed before -> after under --fail-on any. The
# GPU tests and the example's config: run-tests.sh.
# Each step is bounded by its own time (SIGINT keeps finished points). Usage, on the GPU machine from the repository
# root after scripts/gpu_pack.sh and the before/example binaries are in .h200/:
#   results/h200/masking/sdk-port/run.sh OUT [EXPERIMENT...]     (default: masking gelu; the tests: run-tests.sh)
# ONLY=FILTER (e.g. ONLY=dtype=f32) runs that part of each config (--only), its files named EXP-FILTER-SIDE: gelu
# as configured needs about 330 s a side even with the shorter samples below, so one device call (600 s at most)
# takes one dtype, before and after.
set -uo pipefail
out=${1:?usage: run.sh OUT [EXPERIMENT...]}
shift
experiments=("$@")
[ ${#experiments[@]} -gt 0 ] || experiments=(masking gelu)
mkdir -p "$out"
b=.h200
[ -f $b/bins.tar.xz ] && tar -xJf $b/bins.tar.xz -C $b
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.csv" 2>&1
only=${ONLY:-}
after=${AFTER:-$b/labrun}  # AFTER=.h200/labrun-port: the port's own commit (e841a9b), before later kernel changes
cap_gelu=${CAP:-280}
for exp in "${experiments[@]}"; do
  name=$exp; filter=()
  [ -n "$only" ] && name=$exp-${only//[=,]/-} && filter=(--only "$only")
  for side in before after; do
    bin=$after; [ "$side" = before ] && bin=$b/labrun-before
    # masking as configured (five processes, ~115 s); gelu (three processes, ~500 s as configured) with shorter
    # samples (at most 20 a point and 0.05 s), its three processes kept, so a side fits 280 s (one dtype: ONLY=dtype=f32).
    lab=(); cap=135
    [ "$exp" = gelu ] && lab=(--lab max_time_s=0.05 --lab max_samples=20) && cap=$cap_gelu
    start=$SECONDS
    timeout -s INT $cap "$bin" sweep configs/$exp.yaml --device cuda -q -o "$out/$name-$side.jsonl" --force \
      "${lab[@]}" "${filter[@]}"
    echo "$name $side: exit $? in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
  done
  $b/labrun diff "$out/$name-before.jsonl" "$out/$name-after.jsonl" --fail-on any > "$out/$name-diff.txt" 2>&1
  echo "$name diff before -> after: exit $?" | tee -a "$out/steps.txt"
  head -12 "$out/$name-diff.txt"
done
echo "done" >> "$out/steps.txt"
cd "$out" && tar -czf ../out.tgz . && mv ../out.tgz .
