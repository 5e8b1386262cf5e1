#!/usr/bin/env bash
# Host-backend A/A (issue 14): ten pairs of runs of configs/smoke.yaml by the same build, each pair diffed both
# ways. Not a CI test (a loaded machine is noisy); run on an otherwise idle machine from the repository root:
#   bash results/host/diff-smoke/run.sh [SWEEP ARGS...] > results/host/diff-smoke/summary.txt
# e.g. --lab processes=3 pools three processes per run, so the diff's process gate applies.
set -u
labrun=${LABRUN:-build/labrun}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "# $(git rev-parse --short HEAD 2>/dev/null) $(nproc) cores $(date -u +%FT%TZ) sweep args: $*"
fails=0
args=("$@")
for i in $(seq 1 10); do
  set -- "${args[@]}"
  "$labrun" sweep configs/smoke.yaml --device cpu -q -o "$tmp/a$i.jsonl" "$@" > /dev/null 2>&1
  "$labrun" sweep configs/smoke.yaml --device cpu -q -o "$tmp/b$i.jsonl" "$@" > /dev/null 2>&1
  for d in "a b" "b a"; do
    set -- $d
    "$labrun" diff "$tmp/$1$i.jsonl" "$tmp/$2$i.jsonl" > "$tmp/d.txt" 2>&1; rc=$?
    [ $rc -ne 0 ] && fails=$((fails + 1))
    echo "pair $i $1 vs $2: exit $rc  $(grep 'matched:' "$tmp/d.txt" | cut -d. -f1)"
  done
done
echo "# $fails of 20 diffs exited non-zero"
