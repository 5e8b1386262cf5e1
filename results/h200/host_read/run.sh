#!/usr/bin/env bash
# configs/host_read.yaml on the H200 (issue 15), from the repository root on the GPU machine after
# scripts/gpu_pack.sh; the result and the log end in $OUT.
set -u
L=.h200/labrun
s=$(date +%s)
timeout -s INT -k 60 "${BUDGET_S:-300}" $L sweep configs/host_read.yaml --device cuda -q -o "$OUT/host_read.jsonl" \
  >> "$OUT/host_read.log" 2>&1
echo "host_read sweep rc=$? wall_s=$(( $(date +%s) - s ))" >> "$OUT/host_read.log"
exit 0
