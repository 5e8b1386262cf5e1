#!/usr/bin/env bash
# The export formats read by the tools they are for (docs/formats.md), on a committed H200 run of configs/masking.yaml
# (results/h200/diff/across-hosts/normal-1 and normal-2, 840 points, 5 processes each):
#   - gbench: Google Benchmark's own tools/compare.py (Debian's libbenchmark-tools, run with /usr/bin/python3 and
#     python3-scipy) compares the two exports and lists every point that is ok in both;
#   - bmf and github-action-benchmark: the documented shapes (tests/export/check_shapes.py), every value equal to
#     the record's.
# Usage: tests/export/check_exports.sh LABRUN SOURCE_DIR. Exit 0 when all hold; a missing tool is a failure, never a
# pass (scripts/setup.sh installs them).
set -euo pipefail
labrun=${1:?usage: check_exports.sh LABRUN SOURCE_DIR}
src=${2:?usage: check_exports.sh LABRUN SOURCE_DIR}
compare=/usr/share/benchmark/compare.py
[ -f $compare ] || { echo "FAIL: $compare missing (apt-get install libbenchmark-tools)"; exit 1; }
/usr/bin/python3 -c "import scipy" || { echo "FAIL: python3-scipy missing"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for side in 1 2; do
  xz -dc "$src/results/h200/diff/across-hosts/normal-$side.jsonl.xz" > "$work/run$side.jsonl"
  "$labrun" export gbench "$work/run$side.jsonl" -o "$work/run$side.json" 2> "$work/export$side.log"
  tail -n 1 "$work/export$side.log"
done
"$labrun" export bmf "$work/run1.jsonl" -o "$work/bmf.json" 2> /dev/null
"$labrun" export github-action-benchmark "$work/run1.jsonl" -o "$work/gab.json" 2> /dev/null
/usr/bin/python3 "$compare" --no-color benchmarks "$work/run1.json" "$work/run2.json" > "$work/compare.txt"
echo "compare.py: $(wc -l < "$work/compare.txt") lines"
/usr/bin/python3 "$src/tests/export/check_shapes.py" "$work/run1.jsonl" "$work/run2.jsonl" "$work/compare.txt" \
  "$work/run1.json" "$work/bmf.json" "$work/gab.json"
