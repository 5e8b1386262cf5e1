#!/usr/bin/env bash
# Issue 14 on the H200: the GPU tests, configs/masking.yaml (five processes, its wall time and where it went) and
# the delay run, with the build of .h200/GIT_SHA. Run from the repository root on the GPU machine after
# scripts/gpu_pack.sh; OUT=folder. TAG names this loan's files (e.g. loan1).
set -u
L=.h200/labrun
TAG=${TAG:-loan1}
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > $OUT/gpu-$TAG.txt
t() { local s e; s=$(date +%s.%N); "$@" >> $OUT/log-$TAG.txt 2>&1; local rc=$?; e=$(date +%s.%N); echo "$* rc=$rc wall_s=$(awk "BEGIN{print $e - $s}")" >> $OUT/times-$TAG.txt; }
if [ "${GPU_TESTS:-1}" = 1 ]; then
  LABRUN_TESTAID=.h200/labrun_testaid timeout 300 .h200/labrun_gpu_tests > $OUT/gpu_tests-$TAG.log 2>&1
  echo "gpu tests rc=$?" >> $OUT/times-$TAG.txt
fi
t $L sweep configs/masking.yaml --device cuda -o $OUT/masking-$TAG.jsonl
t $L sweep configs/masking_delay.yaml --device cuda -o $OUT/delay-$TAG.jsonl
grep -h "time in phases" $OUT/log-$TAG.txt >> $OUT/times-$TAG.txt
gzip -9 $OUT/masking-$TAG.jsonl $OUT/delay-$TAG.jsonl $OUT/log-$TAG.txt
