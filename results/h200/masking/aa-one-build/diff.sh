#!/usr/bin/env bash
# Every ordered A/A pair of this folder's configs/masking.yaml runs, and each run against both delay runs
# (configs/masking_delay.yaml), with labrun diff. No GPU needed. From the repository root, labrun built in build/:
#   bash results/h200/masking/aa-one-build/diff.sh > results/h200/masking/aa-one-build/summary.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../../.." && pwd)
labrun=${LABRUN:-$root/build/labrun}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
runs="loan1-1 loan1-2 loan2-1 loan2-2 loan3-1 loan4-1"
for r in $runs; do zcat "$here/masking-$r.jsonl.gz" > "$tmp/$r.jsonl"; done
for d in loan1 loan2; do zcat "$here/delay-$d.jsonl.gz" > "$tmp/delay-$d.jsonl"; done
summarize() {  # base new: one line of counts from the JSON diff
  set +e; "$labrun" diff "$tmp/$1.jsonl" "$tmp/$2.jsonl" --format json > "$tmp/d.json" 2>/dev/null; rc=$?; set -e
  python3 - "$1" "$2" "$rc" "$tmp/d.json" <<'PY'
import json, sys
a, b, rc, path = sys.argv[1:]
d = json.load(open(path))
pts = [p for p in d["points"] if p["verdict"] in ("same", "slower", "faster", "inconclusive")]
host = [p for p in pts if p["host_sensitive"]]; rest = [p for p in pts if not p["host_sensitive"]]
share = lambda ps: 100 * sum(p["verdict"] == "same" for p in ps) / max(len(ps), 1)
s = d["summary"]; n = d["noise"]
print(f"{a:>12} vs {b:<12} exit {rc}  compared {len(pts)}: same {s['same']}, slower {s['slower']}, faster {s['faster']}, "
      f"inconclusive {s['inconclusive']}; same {share(pts):.1f}% overall, {share(rest):.1f}% of {len(rest)} not host-sensitive, "
      f"{share(host):.1f}% of {len(host)} host-sensitive; process noise median {100*n['median_rel']:.2f}%, p90 {100*n['p90_rel']:.2f}%")
PY
}
echo "# $("$labrun" --version); runs: $(for r in $runs; do printf '%s=%s ' $r "$(cut -d, -f2 "$here/gpu-${r%-*}.txt" | cut -c2-13)"; done)"
for a in $runs; do for b in $runs; do [ "$a" != "$b" ] && summarize "$a" "$b"; done; done
for a in $runs; do for d in delay-loan1 delay-loan2; do summarize "$a" "$d"; done; done
