#!/usr/bin/env bash
# labrun history over committed H200 runs of configs/masking.yaml from three commits (no GPU needed): the runs of
# cluster/ (cf3826f), masking-01db259 here, and, newest, masking-delay here (7814096, the delay aid on).
# Once with the delay run (history must find its step and gate it) and once without (no code step). From the
# repository root, labrun built in build/:
#   REPORT=results/h200/history/report bash results/h200/history/history.sh > results/h200/history/history.txt
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd); labrun=${LABRUN:-$root/build/labrun}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/runs"
for f in cluster/serial5 cluster/merged5-2 history/masking-01db259; do
  xzcat "$root/results/h200/$f.jsonl.xz" > "$tmp/runs/$(echo "$f" | tr / _).jsonl"
done
set +e
echo "== without the delay run"
"$labrun" history "$tmp"/runs/*.jsonl --repo "$root" 2>&1
echo "exit $?"
# The newest commit's run, with the delay aid on (run-delay.sh): the one step history must find, and gate.
xzcat "$root/results/h200/history/masking-delay.jsonl.xz" > "$tmp/runs/history_masking-delay.jsonl"
echo "== with the delay run"
"$labrun" history "$tmp"/runs/*.jsonl --repo "$root" -o "$tmp/report" 2>&1
echo "exit $?"
"$labrun" history "$tmp"/runs/*.jsonl --repo "$root" --bisect "${BISECT:-masking/fused/density=0.01,downstream=0,dtype=bf16,l2=hot,mode=graph,n=10000000,nonfinite=none}" 2>&1 | tail -4
[ -n "${REPORT:-}" ] && rm -rf "$REPORT" && cp -r "$tmp/report" "$REPORT"
exit 0
