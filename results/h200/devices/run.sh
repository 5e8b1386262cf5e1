#!/usr/bin/env bash
# Issue 17 on the one-GPU machine (no kind with two or more GPUs was lent): configs/masking.yaml serially, then as
# TWO WORKERS SHARING ONE GPU -- `--shard 1/2` and `--shard 2/2` started at the same time on GPU 0 -- merged and
# diffed against the serial run. This shows the merge (every point once, every point's GPU named) and what two
# workers on one GPU do to the times; it does not show a speed-up across GPUs. From the repository root on the GPU
# machine after scripts/gpu_pack.sh; everything ends in $OUT/devices.tar.gz.
set -u
L=.h200/labrun
export NCCL_NVLS_ENABLE=0
D=$OUT/devices; mkdir -p "$D"
nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv,noheader > "$D/nvidia-smi.txt" 2>&1
t() { local s e; s=$(date +%s.%N); "$@"; local rc=$?; e=$(date +%s.%N); echo "$* rc=$rc wall_s=$(awk "BEGIN{print $e - $s}")" >> "$D/times.txt"; }
t $L sweep configs/masking.yaml --device cuda -q -o "$D/serial.jsonl" > "$D/serial.log" 2>&1
s=$(date +%s.%N)
CUDA_VISIBLE_DEVICES=0 $L sweep configs/masking.yaml --device cuda -q --shard 1/2 -o "$D/shared-1of2.jsonl" > "$D/shared-1.log" 2>&1 &
p1=$!
CUDA_VISIBLE_DEVICES=0 $L sweep configs/masking.yaml --device cuda -q --shard 2/2 -o "$D/shared-2of2.jsonl" > "$D/shared-2.log" 2>&1 &
p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
e=$(date +%s.%N)
echo "two shard workers on one GPU at once rc=$r1,$r2 wall_s=$(awk "BEGIN{print $e - $s}")" >> "$D/times.txt"
t $L merge "$D/shared-1of2.jsonl,$D/shared-2of2.jsonl" -o "$D/shared-merged.jsonl" > "$D/merge.log" 2>&1
t $L diff "$D/serial.jsonl" "$D/shared-merged.jsonl" > "$D/diff-serial-vs-shared.txt" 2>&1
gzip -9 "$D"/*.jsonl
tar -C "$OUT" -czf "$OUT/devices.tar.gz" devices && rm -rf "$D"
exit 0
