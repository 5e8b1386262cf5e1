#!/usr/bin/env bash
# Every ordered pair of the masking runs named below diffed with `--fail-on any`, one summary line each: exit code,
# verdict counts, the share of `same` among the points that are not host-sensitive. Then the slower-aid run against
# every other run. No GPU needed. Usage (from the repository root, labrun built in build/):
#   bash results/h100/fleet/run.sh > results/h100/fleet/summary.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
labrun=${LABRUN:-$root/build/labrun}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
runs=()
for f in "$here"/masking-*.jsonl.xz; do
  k=$(basename "$f" .jsonl.xz); k=${k#masking-}
  xzcat "$f" > "$tmp/$k.jsonl"
  [ "$k" = slower ] || runs+=("$k")
done
summarize() {  # base new
  set +e; "$labrun" diff "$tmp/$1.jsonl" "$tmp/$2.jsonl" --fail-on any --format json > "$tmp/d.json" 2> /dev/null; rc=$?; set -e
  python3 - "$1" "$2" "$rc" "$tmp/d.json" << 'PY'
import json, sys
a, b, rc, path = sys.argv[1:]
d = json.load(open(path))
pts = [p for p in d["points"] if p["verdict"] in ("same", "slower", "faster", "inconclusive")]
rest = [p for p in pts if not p["host_sensitive"]]
share = lambda ps: 100 * sum(p["verdict"] == "same" for p in ps) / max(len(ps), 1)
s = d["summary"]
aid = [p for p in pts if p["variant"] == "where" and p["axes"].get("mode") == "eager"]
slower_aid = sum(p["verdict"] == "slower" for p in aid)
moved = [f"{p['variant']} {p['axes'].get('mode')} n={p['axes'].get('n')} d={p['axes'].get('density')} "
         f"ds={p['axes'].get('downstream')} {p['verdict']} {100 * (p['ratio'] - 1):+.1f}%"
         for p in pts if p["verdict"] in ("slower", "faster") and not (b == "slower" and p in aid)]
print(f"{a:>12} vs {b:<12} exit {rc}  compared {len(pts)}: same {s['same']}, slower {s['slower']}, "
      f"faster {s['faster']}, inconclusive {s['inconclusive']}; same {share(rest):.1f}% of {len(rest)} not "
      f"host-sensitive; eager where slower {slower_aid} of {len(aid)}" + (f"; others moved: {moved[:6]}" if moved else ""))
PY
}
for a in "${runs[@]}"; do for b in "${runs[@]}"; do [ "$a" != "$b" ] && summarize "$a" "$b"; done; done
if [ -f "$tmp/slower.jsonl" ]; then for a in "${runs[@]}"; do summarize "$a" slower; done; fi
