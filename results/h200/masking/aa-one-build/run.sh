#!/usr/bin/env bash
# Issue 14's A/A evidence from one build: RUNS runs of configs/masking.yaml on this loan's GPU (and, with DELAY=1,
# configs/masking_delay.yaml), with the build of .h200/GIT_SHA. Run from the repository root on the GPU machine
# after scripts/gpu_pack.sh; OUT = folder, TAG names this loan's files. GPU_TESTS=1 runs the GPU tests first.
set -u
L=.h200/labrun
TAG=${TAG:?TAG names the loan}
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > "$OUT/gpu-$TAG.txt"
t() { local s e; s=$(date +%s.%N); "$@" >> "$OUT/log-$TAG.txt" 2>&1; local rc=$?; e=$(date +%s.%N); echo "$* rc=$rc wall_s=$(awk "BEGIN{print $e - $s}")" >> "$OUT/times-$TAG.txt"; }
if [ "${GPU_TESTS:-0}" = 1 ]; then
  LABRUN_TESTAID=.h200/labrun_testaid timeout 300 .h200/labrun_gpu_tests > "$OUT/gpu_tests-$TAG.log" 2>&1
  echo "gpu tests rc=$? $(grep -E '^\[  PASSED|FAILED TEST|tests ran' "$OUT/gpu_tests-$TAG.log" | tr '\n' ' ')" >> "$OUT/times-$TAG.txt"
fi
for r in $(seq 1 "${RUNS:-1}"); do
  t $L sweep configs/masking.yaml --device cuda -q -o "$OUT/masking-$TAG-$r.jsonl"
done
[ "${DELAY:-0}" = 1 ] && t $L sweep configs/masking_delay.yaml --device cuda -q -o "$OUT/delay-$TAG.jsonl"
grep -h "time in phases" "$OUT/log-$TAG.txt" >> "$OUT/times-$TAG.txt"
gzip -9 "$OUT"/masking-$TAG-*.jsonl "$OUT"/delay-$TAG.jsonl "$OUT/log-$TAG.txt" 2>/dev/null
exit 0
