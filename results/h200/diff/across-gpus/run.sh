#!/usr/bin/env bash
# Re-diffs the committed H200 runs of configs/masking.yaml from three physical GPUs with the process-level diff:
# every ordered A/A pair, and each base against the two delay runs. No GPU needed.
# Usage (from the repository root, labrun built in build/):
#   bash results/h200/diff/across-gpus/run.sh > results/h200/diff/across-gpus/summary.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../../.." && pwd)
labrun=${LABRUN:-$root/build/labrun}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
declare -A file=(
  [A1]=results/h200/diff/across-hosts/normal-1 [A2]=results/h200/diff/across-hosts/normal-2
  [B1]=results/h200/cluster/serial5 [B2]=results/h200/cluster/merged5-2
  [C1]=results/h200/fault/masking-interrupted-resumed
  [delay]=results/h200/diff/across-hosts/delay [delayD]=results/h200/history/masking-delay)
for k in "${!file[@]}"; do xzcat "$root/${file[$k]}.jsonl.xz" > "$tmp/$k.jsonl"; done
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
print(f"{a:>5} vs {b:<5} exit {rc}  compared {len(pts)}: same {s['same']}, slower {s['slower']}, faster {s['faster']}, "
      f"inconclusive {s['inconclusive']}; same {share(pts):.1f}% overall, {share(rest):.1f}% of {len(rest)} not host-sensitive, "
      f"{share(host):.1f}% of {len(host)} host-sensitive; process noise median {100*n['median_rel']:.2f}%, p90 {100*n['p90_rel']:.2f}%")
PY
}
echo "# GPUs: A = GPU-d7def6ed (d917738, 5 processes), B = GPU-588bdc7c (cf3826f, 5; B2 a merge of 2 shards),"
echo "#       C = GPU-cfa60c87 (3a27b0d, 2 processes, interrupted and resumed); delay: configs/masking_delay.yaml on A,"
echo "#       delayD: configs/masking.yaml with lab.delay_s 20e-6, GPU-0d413589 (7814096, 5)"
all="A1 A2 B1 B2 C1"
for a in $all; do for b in $all; do [ "$a" != "$b" ] && summarize "$a" "$b"; done; done
for a in $all; do summarize "$a" delay; done
for a in $all; do summarize "$a" delayD; done
