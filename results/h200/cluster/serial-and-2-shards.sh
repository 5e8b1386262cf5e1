#!/usr/bin/env bash
# The issue-13 loan, second call (after the estimate was recalibrated from the first call's per-point phases):
# configs/masking.yaml as the config has it (five processes), serial and as 2 shards, each shard's wall time
# measured; the shards merged and diffed against the serial run. Run from the repository root on the GPU
# machine after scripts/gpu_pack.sh; OUT=folder.
set -u
L=.h200/labrun
C=configs/masking.yaml
A="--device cuda -q"
t() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>> $OUT/log.txt; local rc=$?; e=$(date +%s.%N); echo "$* rc=$rc wall_s=$(awk "BEGIN{print $e - $s}")" >> $OUT/times.txt; }
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/times.txt
t $L sweep $C $A -o $OUT/serial5.jsonl
for i in 1 2; do t $L sweep $C $A --shard $i/2 -o $OUT/shard5-$i-of-2.jsonl; done
$L merge -o $OUT/merged5-2.jsonl $OUT/shard5-1-of-2.jsonl $OUT/shard5-2-of-2.jsonl >> $OUT/log.txt 2>&1
$L diff $OUT/serial5.jsonl $OUT/merged5-2.jsonl > $OUT/diff-serial5-vs-merged5-2.txt 2>&1; echo "diff rc=$?" >> $OUT/times.txt
cd $OUT && rm -f shard5-*.jsonl && gzip -9 serial5.jsonl merged5-2.jsonl
