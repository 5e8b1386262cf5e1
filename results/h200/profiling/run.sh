#!/usr/bin/env bash
# Profiler mode on the H200 (docs/profiling.md): one masking point under Nsight Compute with --profile, selected
# by a regex on its NVTX range and by its exact range name, then without --profile (labrun must switch by
# itself), and a normal timed run of the same point for labrun's device median. Run from the repository root on
# the GPU machine after scripts/gpu_pack.sh; OUT = folder (everything ends in $OUT/profiling.tar.gz).
set -u
L=.h200/labrun
D=$OUT/profiling; mkdir -p "$D"
ONLY="variant=fused,n=1e8,density=0.5,dtype=f32,mode=eager,downstream=0"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{ echo "ncu: $NCU"; "$NCU" --version; nvidia-smi --query-gpu=name,uuid --format=csv,noheader; } > "$D/env.txt" 2>&1
$L sweep configs/masking.yaml --device cuda -q --only "$ONLY" -o "$D/timed.jsonl" > "$D/timed.log" 2>&1
KEY=$(python3 -c "import json,sys; r=[json.loads(l) for l in open('$D/timed.jsonl')][1]; print(r['key'].replace('/',':'))")
echo "range: $KEY" >> "$D/env.txt"
n=0
for filter in "regex:^masking:fused:/" "$KEY/"; do
  n=$((n + 1))
  echo "ncu --clock-control none --metrics gpu__time_duration.sum --nvtx --nvtx-include \"$filter\" $L sweep configs/masking.yaml --device cuda -q --only \"$ONLY\" --profile -o profiled-$n.jsonl" > "$D/ncu-$n.txt"
  "$NCU" --clock-control none --metrics gpu__time_duration.sum --nvtx --nvtx-include "$filter" \
    $L sweep configs/masking.yaml --device cuda -q --only "$ONLY" --profile -o "$D/profiled-$n.jsonl" >> "$D/ncu-$n.txt" 2>&1
  echo "rc=$?" >> "$D/ncu-$n.txt"
done
"$NCU" --clock-control none --metrics gpu__time_duration.sum --nvtx --nvtx-include "regex:^masking:fused:/" \
  $L sweep configs/masking.yaml --device cuda -q --only "$ONLY" -o "$D/auto.jsonl" > "$D/ncu-auto.txt" 2>&1
echo "rc=$?" >> "$D/ncu-auto.txt"
tar -C "$OUT" -czf "$OUT/profiling.tar.gz" profiling && rm -rf "$D"
exit 0
