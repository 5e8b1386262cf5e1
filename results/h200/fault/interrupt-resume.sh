#!/usr/bin/env bash
# The issue-12 loan, second call: the worker-model GPU tests after the fix of the test's reading of a null
# reason, and a pooled GPU sweep (configs/masking.yaml, two processes) interrupted with SIGINT in its second
# process, then resumed. Run from the repository root on the GPU machine after scripts/gpu_pack.sh.
set -u
export LABRUN_TESTAID=.h200/labrun_testaid
.h200/labrun_gpu_tests --gtest_filter='WorkersGpu.*' > $OUT/gpu_tests_workers.log 2>&1
{
echo "== masking.yaml, 2 processes, SIGINT after 70 s"
.h200/labrun sweep configs/masking.yaml --device cuda -q --lab processes=2 -o $OUT/masking.jsonl & P=$!
sleep 70; pgrep -af "labrun sweep"; kill -INT $P; wait $P; echo "rc=$?"
pgrep -af "labrun sweep" || echo "no labrun process left"
wc -l $OUT/masking.jsonl.processes/*
echo "== resume"; time .h200/labrun sweep configs/masking.yaml --device cuda -q --lab processes=2 -o $OUT/masking.jsonl --resume; echo "rc=$?"
ls $OUT
} > $OUT/masking-interrupt.log 2>&1
gzip -9 $OUT/masking.jsonl
