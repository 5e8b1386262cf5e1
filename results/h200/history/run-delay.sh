#!/usr/bin/env bash
# Issue 16's step: configs/masking.yaml with the documented delay aid (lab.delay_s = 20 us: a spin kernel added to
# every iteration, docs/history.md), on the H200 by the build of .h200/GIT_SHA, a commit newer than every other
# run in history.sh. From the repository root on the GPU machine after scripts/gpu_pack.sh; the result ends in $OUT.
set -u
L=.h200/labrun
s=$(date +%s)
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > "$OUT/delay-gpu.txt" 2>&1
timeout -s INT -k 60 "${BUDGET_S:-240}" $L sweep configs/masking.yaml --device cuda -q --lab delay_s=20e-6 \
  -o "$OUT/masking-delay.jsonl" >> "$OUT/masking-delay.log" 2>&1
echo "masking delay sweep rc=$? wall_s=$(( $(date +%s) - s ))" >> "$OUT/masking-delay.log"
gzip -9 "$OUT/masking-delay.jsonl"
exit 0
