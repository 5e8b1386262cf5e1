#!/usr/bin/env bash
# The issue-12 loan: GPU tests, the fault test aid mid-sweep, an interrupted-then-resumed sweep on the device.
# Run from the repository root on the GPU machine after scripts/gpu_pack.sh (binaries in .h200/); OUT=folder.
set -u
export LABRUN_TESTAID=.h200/labrun_testaid
nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,memory.used --format=csv > $OUT/nvidia-smi.txt 2>&1
( time .h200/labrun_gpu_tests ) > $OUT/gpu_tests.log 2>&1
{
echo "== fault aid, full"; time .h200/labrun_testaid sweep tests/aids/fault.yaml --device cuda -o $OUT/fault.jsonl; echo "rc=$?"
echo "== fault aid, sum only"; time .h200/labrun_testaid sweep tests/aids/fault.yaml --device cuda --only variant=sum -o $OUT/fault-plain.jsonl; echo "rc=$?"
} > $OUT/fault.log 2>&1
{
echo "== smoke on cuda, SIGINT after 12 s"
.h200/labrun sweep configs/smoke.yaml --device cuda -q -o $OUT/smoke.jsonl & P=$!
sleep 12; kill -INT $P; wait $P; echo "rc=$?"
pgrep -af "labrun sweep" || echo "no labrun process left"
echo "== resume"; time .h200/labrun sweep configs/smoke.yaml --device cuda -q -o $OUT/smoke.jsonl --resume; echo "rc=$?"
} > $OUT/smoke-interrupt.log 2>&1
ls -la $OUT
