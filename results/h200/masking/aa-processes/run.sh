#!/usr/bin/env bash
# Re-diffs committed H200 runs of configs/masking.yaml (three physical GPUs) with the process-level diff
# (issue 14, item 1): every ordered A/A pair, and each base against the delay run. No GPU needed.
# Usage (from the repository root, after scripts/test.sh or a build in build/):
#   bash results/h200/masking/aa-processes/run.sh > results/h200/masking/aa-processes/summary.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../../.." && pwd)
labrun=${LABRUN:-$root/build/labrun}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
declare -A file=(
  [A1]=results/h200/masking/aa-delay/masking-run1 [A2]=results/h200/masking/aa-delay/masking-run2
  [B1]=results/h200/cluster/serial5 [B2]=results/h200/cluster/merged5-2
  [C1]=results/h200/masking/redesign-check/masking-before-6be2379 [C2]=results/h200/masking/redesign-check/masking-after-d41875b
  [D1]=results/h200/masking/issue14/masking-loan1 [E1]=results/h200/masking/issue14/masking-loan2
  [delay]=results/h200/masking/aa-delay/masking_delay [delayE]=results/h200/masking/issue14/delay-loan2)
for k in "${!file[@]}"; do zcat "$root/${file[$k]}.jsonl.gz" > "$tmp/$k.jsonl"; done
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
echo "# GPUs: A = GPU-6ecd4567 (fbceaea, 5 processes), B = GPU-588bdc7c (cf3826f, 5), C = GPU-450809cd (6be2379/d41875b, 3),"
echo "#       D = GPU-57566ca8 (01db259, 5), E = GPU-4b2dadc3 (7fc76e5, 5; inputs generated on the device)"
all="A1 A2 B1 B2 C1 C2 D1 E1"
for a in $all; do for b in $all; do [ "$a" != "$b" ] && summarize "$a" "$b"; done; done
for a in $all; do summarize "$a" delay; done
for a in $all; do summarize "$a" delayE; done
