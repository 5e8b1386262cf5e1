#!/usr/bin/env bash
# labrun history over the committed H200 runs of configs/masking.yaml from six commits of this repository (issue
# 16's real-data check; no GPU needed). From the repository root, labrun built in build/:
#   REPORT=results/h200/history/report bash results/h200/history/run.sh > results/h200/history/history.txt
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd); labrun=${LABRUN:-$root/build/labrun}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
m=$root/results/h200/masking
for f in aa-delay/masking-run1 aa-delay/masking-run2 issue14/masking-loan1 issue14/masking-loan2 \
         aa-one-build/masking-loan1-1 aa-one-build/masking-loan1-2 aa-one-build/masking-loan2-1 \
         aa-one-build/masking-loan2-2 aa-one-build/masking-loan3-1 aa-one-build/masking-loan4-1; do
  zcat "$m/$f.jsonl.gz" > "$tmp/$(echo "$f" | tr / _).jsonl"
done
zcat "$root/results/h200/cluster/serial5.jsonl.gz" > "$tmp/cluster_serial5.jsonl"
# The newest commit's run, with the delay aid on (run-delay.sh): the one step history must find, and gate.
zcat "$root/results/h200/history/masking-delay.jsonl.gz" > "$tmp/history_masking-delay.jsonl"
set +e
"$labrun" history "$tmp"/*.jsonl --repo "$root" -o "$tmp/report" 2>&1
echo "exit $?"
"$labrun" history "$tmp"/*.jsonl --repo "$root" --bisect "${BISECT:-masking/fused/density=0.01,downstream=0,dtype=bf16,l2=hot,mode=graph,n=10000000,nonfinite=none}" 2>&1 | tail -4
[ -n "${REPORT:-}" ] && rm -rf "$REPORT" && cp -r "$tmp/report" "$REPORT"
exit 0
