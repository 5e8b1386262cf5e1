#!/usr/bin/env bash
# The issue-13 loan, first call: configs/masking.yaml (three processes) serial, as 2 shards and as 4 shards on
# the one H200, each shard's wall time measured; the 2 shards merged and diffed against the serial run.
# Run from the repository root on the GPU machine after scripts/gpu_pack.sh (binaries in .h200/); OUT=folder.
set -u
L=.h200/labrun
C=configs/masking.yaml
A="--device cuda -q --lab processes=3"
t() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>> $OUT/log.txt; local rc=$?; e=$(date +%s.%N); echo "$* rc=$rc wall_s=$(awk "BEGIN{print $e - $s}")" >> $OUT/times.txt; }
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/times.txt
t $L sweep $C $A -o $OUT/serial.jsonl
for n in 2 4; do for i in $(seq 1 $n); do t $L sweep $C $A --shard $i/$n -o $OUT/shard-$i-of-$n.jsonl; done; done
$L merge -o $OUT/merged-2.jsonl $OUT/shard-1-of-2.jsonl $OUT/shard-2-of-2.jsonl >> $OUT/log.txt 2>&1
$L merge -o $OUT/merged-4.jsonl $OUT/shard-{1,2,3,4}-of-4.jsonl >> $OUT/log.txt 2>&1
$L diff $OUT/serial.jsonl $OUT/merged-2.jsonl > $OUT/diff-serial-vs-merged2.txt 2>&1; echo "diff 2 rc=$?" >> $OUT/times.txt
$L diff $OUT/serial.jsonl $OUT/merged-4.jsonl > $OUT/diff-serial-vs-merged4.txt 2>&1; echo "diff 4 rc=$?" >> $OUT/times.txt
cd $OUT && rm -f shard-*.jsonl && gzip -9 serial.jsonl merged-2.jsonl merged-4.jsonl
