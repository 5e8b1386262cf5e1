#!/usr/bin/env bash
# Profiler mode on the H200 (docs/profiling.md): one masking point under Nsight Compute with --profile, then
# without it (labrun must switch by itself), and the point's kernel time by ncu beside labrun's device median
# from a normal run of the same point on the same GPU. Run from the repository root on the GPU machine after
# scripts/gpu_pack.sh; OUT = folder.
set -u
L=.h200/labrun
ONLY="variant=fused,n=1e8,density=0.5,dtype=f32,mode=eager,downstream=0"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{ echo "ncu: $NCU"; "$NCU" --version; nvidia-smi --query-gpu=name,uuid --format=csv,noheader; } > "$OUT/profile-env.txt" 2>&1
$L sweep configs/masking.yaml --device cuda -q --only "$ONLY" -o "$OUT/timed.jsonl" > "$OUT/timed.log" 2>&1
"$NCU" --clock-control none --metrics gpu__time_duration.sum --nvtx --nvtx-include "regex:masking/fused/" \
  $L sweep configs/masking.yaml --device cuda -q --only "$ONLY" --profile -o "$OUT/profiled.jsonl" > "$OUT/ncu-profile.txt" 2>&1
echo "rc=$?" >> "$OUT/ncu-profile.txt"
"$NCU" --clock-control none --metrics gpu__time_duration.sum --nvtx --nvtx-include "regex:masking/fused/" \
  $L sweep configs/masking.yaml --device cuda -q --only "$ONLY" -o "$OUT/auto.jsonl" > "$OUT/ncu-auto.txt" 2>&1
echo "rc=$?" >> "$OUT/ncu-auto.txt"
exit 0
