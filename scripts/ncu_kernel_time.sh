#!/usr/bin/env bash
# labrun's kernel time beside Nsight Compute's (docs/metrics.md "Kernel time"): for each single-kernel point below,
# a timed labrun run of that point alone, then, back to back on the same GPU, the point under ncu in profiler mode
# (--profile: 5 plain iterations in the point's NVTX range) with `--metrics gpu__time_duration.sum --clock-control
# none`, `--cache-control all` for a cold point and `none` for a hot one. Then ncu on an empty kernel (the launch
# floor's own duration, from scripts/ncu_empty.cu built with nvcc). Writes OUT/<name>.jsonl, OUT/<name>.ncu.csv,
# OUT/empty.ncu.csv, OUT/env.txt and OUT/summary.txt (scripts/ncu_kernel_time.py).
# The first five points are of five experiments; NCU_FROM=K skips the first K, NCU_POINTS=N runs N (default: all).
# Usage: [NCU_FROM=K] [NCU_POINTS=N] scripts/ncu_kernel_time.sh OUT [LABRUN] [EMPTY_BINARY]
set -uo pipefail
out=$1
labrun=${2:-build/labrun}
empty=${3:-}
mkdir -p "$out"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
{
  echo "ncu: $ncu"
  "$ncu" --version | tail -1
  nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
  echo "other processes on the GPU: $(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)"
} > "$out/env.txt" 2>&1
# name | config | --only | cache control
points=(
  "softmax-two_pass-4096x4096-cold|softmax|variant=two_pass,cols=4096,elements=16777216,dtype=f32,l2=cold,mode=eager|all"
  "gemv-warp_row-8192x8192-cold|gemv|variant=warp_row,m=8192,n=8192,dtype=f16,l2=cold,mode=eager|all"
  "layout-transpose_tiled-8192x8192-cold|layout|variant=transpose_tiled,rows=8192,cols=8192,dtype=f32,l2=cold,mode=eager|all"
  "rank-fused-1e8-hot|rank|variant=fused,n=100000000,density=0.5,mode=eager,l2=hot|none"
  "gelu-fused-2e26-hot|gelu|variant=fused,n=67108864,dtype=f32,mode=eager,l2=hot|none"
  "softmax-two_pass-4096x4096-hot|softmax|variant=two_pass,cols=4096,elements=16777216,dtype=f32,l2=hot,mode=eager|none"
  "gemv-warp_row-4096x4096-cold|gemv|variant=warp_row,m=4096,n=4096,dtype=f16,l2=cold,mode=eager|all"
  "attention-tiled-4x32x1024x128-causal-hot|attention|variant=tiled,batch=4,heads=32,seq=1024,head_dim=128,causal=1|none"
)
for p in "${points[@]:${NCU_FROM:-0}:${NCU_POINTS:-${#points[@]}}}"; do
  IFS='|' read -r name config only cache <<< "$p"
  "$labrun" sweep "configs/$config.yaml" --only "$only" --lab processes=1 -q -o "$out/$name.jsonl" --force \
    > "$out/$name.log" 2>&1
  echo "labrun sweep configs/$config.yaml --only \"$only\" --lab processes=1: exit $?" >> "$out/commands.txt"
  range=$(python3 -c "import json,sys; r=[json.loads(l) for l in open(sys.argv[1])][1]; print(r['key'].replace('/',':'))" \
    "$out/$name.jsonl")
  "$ncu" --clock-control none --cache-control "$cache" --metrics gpu__time_duration.sum --csv --nvtx \
    --nvtx-include "$range/" "$labrun" sweep "configs/$config.yaml" --only "$only" --profile -q \
    -o "$out/$name.profiled.jsonl" --force > "$out/$name.ncu.csv" 2> "$out/$name.ncu.err"
  echo "ncu --clock-control none --cache-control $cache --metrics gpu__time_duration.sum --csv --nvtx --nvtx-include \"$range/\" labrun sweep configs/$config.yaml --only \"$only\" --profile: exit $?" >> "$out/commands.txt"
done
if [ -n "$empty" ]; then
  "$ncu" --clock-control none --metrics gpu__time_duration.sum --csv "$empty" > "$out/empty.ncu.csv" 2> "$out/empty.ncu.err"
  echo "ncu --clock-control none --metrics gpu__time_duration.sum --csv ncu_empty: exit $?" >> "$out/commands.txt"
fi
python3 "$(dirname "$0")/ncu_kernel_time.py" "$out" > "$out/summary.txt" 2>&1
cat "$out/summary.txt"
