#!/usr/bin/env bash
# configs/layout.yaml on the H200 (issue 15), from the repository root on the GPU machine after
# scripts/gpu_pack.sh. The sweep can outlast one device call: BUDGET_S (default 480) bounds this call, after which
# labrun is sent SIGINT (it keeps every finished point and process); a later call with PARTIAL=path/to/layout.jsonl (or
# layout.jsonl.processes) continues it with --resume. The result and the log end in $OUT.
set -u
L=.h200/labrun
BUDGET_S=${BUDGET_S:-480}
# PARTIAL: a finished output file, or the FILE.processes folder an interrupted pooled run leaves.
if [ -n "${PARTIAL:-}" ]; then cp -r "$PARTIAL" "$OUT/"; RESUME=--resume; else RESUME=; fi
s=$(date +%s)
timeout -s INT -k 60 "$BUDGET_S" $L sweep configs/layout.yaml --device cuda -q $RESUME -o "$OUT/layout.jsonl" \
  >> "$OUT/layout.log" 2>&1
echo "layout sweep rc=$? wall_s=$(( $(date +%s) - s )) lines=$(wc -l < "$OUT/layout.jsonl" 2>/dev/null)" >> "$OUT/layout.log"
exit 0
