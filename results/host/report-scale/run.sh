#!/usr/bin/env bash
# labrun report on 100,800 points (results/h200/cluster/serial5.jsonl.xz, 840 points, replicated 120 times with a
# `replica` axis), with and without the HTML view, plots on and off: wall time and peak RSS (GNU time). No GPU.
# Run alone on the machine (nothing else loading it). From the repository root, labrun built in build/:
#   bash results/host/report-scale/run.sh > results/host/report-scale/times.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
labrun=${LABRUN:-$root/build/labrun}
tmp=${TMPDIR:-/tmp}/labrun-report-scale; rm -rf "$tmp"; mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
xz -dc "$root/results/h200/cluster/serial5.jsonl.xz" > "$tmp/serial5.jsonl"
python3 "$here/replicate.py" "$tmp/serial5.jsonl" 120 > "$tmp/big.jsonl"
echo "input: $(($(wc -l < "$tmp/big.jsonl") - 1)) points, $(du -m "$tmp/big.jsonl" | cut -f1) MB; $(nproc) cores; labrun $(git -C "$root" rev-parse --short HEAD)"
for args in "--no-plots --no-html" "--no-plots" "--no-html" ""; do
  rm -rf "$tmp/rep"
  /usr/bin/time -f "%e s %M KB" -o "$tmp/time.txt" "$labrun" report "$tmp/big.jsonl" -o "$tmp/rep" $args > /dev/null 2>&1
  html=$( [ -f "$tmp/rep/index.html" ] && du -m "$tmp/rep/index.html" | cut -f1 || echo -)
  echo "report ${args:-(plots and html)}: $(cat "$tmp/time.txt"), index.html ${html} MB"
done
