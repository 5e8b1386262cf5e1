#!/usr/bin/env bash
# Opens each HTML view of committed H200 results in headless Chromium (scripts/check_html.py): the report of a
# configs/masking.yaml run, the history over results/h200/history's commits, and the diff of two runs on two hosts.
# Each must show no console error, ask for nothing outside its folder, and draw a screenshot that is not blank; the
# screenshots stay in OUT for a reader. Exit 77 (ctest: skipped) when Chromium, chromedriver or selenium is missing.
# Usage: tests/html/check_views.sh LABRUN SOURCE_DIR OUT
set -uo pipefail
labrun=$1 root=$2 out=$3
rm -rf "$out" && mkdir -p "$out/runs"
xz -dc "$root/results/h200/history/masking-01db259.jsonl.xz" > "$out/runs/masking.jsonl" || exit 1
xz -dc "$root/results/h200/diff/across-hosts/normal-1.jsonl.xz" > "$out/runs/normal-1.jsonl" || exit 1
xz -dc "$root/results/h200/diff/across-hosts/normal-2.jsonl.xz" > "$out/runs/normal-2.jsonl" || exit 1
"$labrun" report "$out/runs/masking.jsonl" -o "$out/report" --no-plots > /dev/null || exit 1
LABRUN="$labrun" REPORT="$out/history" bash "$root/results/h200/history/history.sh" > /dev/null || exit 1
mkdir -p "$out/diff"
"$labrun" diff "$out/runs/normal-1.jsonl" "$out/runs/normal-2.jsonl" --format html -o "$out/diff/diff.html" \
  2> /dev/null
[ $? -le 1 ] || exit 1
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" "$root/scripts/check_html.py" --shots "$out" "$out/report/index.html" "$out/history/index.html" \
  "$out/diff/diff.html"
rc=$?
[ $rc -eq 2 ] && exit 77
exit $rc
