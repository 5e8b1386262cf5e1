#!/usr/bin/env bash
# Re-derives every figure of README.md here from the committed runs: each ordered pair of the four masking runs
# and the delay run against each, under --fail-on any; writes diffs.txt (summary lines, exit codes and a tally
# split by host-sensitive) and the full tables of three pairs. Usage: diffs.sh [LABRUN] (default build/labrun),
# from the repository root.
set -uo pipefail
labrun=${1:-build/labrun}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in normal-1 normal-2 slow-1 slow-2 delay; do xz -dc "$here/$r.jsonl.xz" > "$tmp/$r.jsonl"; done
tally() { python3 "$here/tally.py"; }  # JSON diff on stdin -> one line of counts
{
  pairs=()
  for a in normal-1 normal-2 slow-1 slow-2; do for b in normal-1 normal-2 slow-1 slow-2; do
    [ "$a" = "$b" ] || pairs+=("$a $b"); done; done
  for a in normal-1 normal-2 slow-1 slow-2; do pairs+=("$a delay"); done
  for p in "${pairs[@]}"; do
    set -- $p
    "$labrun" diff "$tmp/$1.jsonl" "$tmp/$2.jsonl" --fail-on any > "$tmp/d.txt" 2>&1
    rc=$?
    echo "$1 -> $2: exit $rc"
    grep -E '^[0-9]+ matched' "$tmp/d.txt" | sed 's/^/  /'
    "$labrun" diff "$tmp/$1.jsonl" "$tmp/$2.jsonl" --fail-on any --format json 2>/dev/null | tally
  done
} > "$here/diffs.txt"
for p in "normal-1 normal-2" "normal-1 slow-1" "normal-1 delay"; do
  set -- $p
  "$labrun" diff "$tmp/$1.jsonl" "$tmp/$2.jsonl" --fail-on any > "$here/diff-$1-$2.txt" 2>&1
done
cat "$here/diffs.txt"
