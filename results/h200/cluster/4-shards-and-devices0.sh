#!/usr/bin/env bash
# The issue-13 loan, third call: configs/masking.yaml as 4 shards (three processes each) with each shard's wall
# time, and `--devices 0` (one process: a point-set check against the serial run of serial-and-2-shards.sh). Run from the
# repository root on the GPU machine after scripts/gpu_pack.sh; OUT=folder.
set -u
L=.h200/labrun
C=configs/masking.yaml
t() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>> $OUT/log.txt; local rc=$?; e=$(date +%s.%N); echo "$* rc=$rc wall_s=$(awk "BEGIN{print $e - $s}")" >> $OUT/times.txt; }
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/times.txt
for i in 1 2 3 4; do t $L sweep $C --device cuda -q --lab processes=3 --shard $i/4 -o $OUT/shard3-$i-of-4.jsonl; done
t $L sweep $C --device cuda -q --lab processes=1 --devices 0 -o $OUT/devices0.jsonl
cd $OUT && rm -f shard3-*.jsonl && gzip -9 devices0.jsonl
