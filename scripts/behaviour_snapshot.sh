#!/usr/bin/env bash
# What labrun writes for every committed result, to compare two builds byte for byte (a refactoring must not move
# a byte): for each results/**/*.jsonl[.gz|.xz] file, `labrun report --no-plots` (every file it writes: markdown, CSV,
# the plot data) and `labrun diff F F` as a table and as JSON, with each command's exit code.
# Usage: scripts/behaviour_snapshot.sh LABRUN OUTDIR     (from the repository root)
#   e.g. scripts/behaviour_snapshot.sh /tmp/before/labrun /tmp/snap-before
#        scripts/behaviour_snapshot.sh build/labrun /tmp/snap-after && diff -r /tmp/snap-before /tmp/snap-after
set -uo pipefail
labrun=${1:?usage: behaviour_snapshot.sh LABRUN OUTDIR}
out=${2:?usage: behaviour_snapshot.sh LABRUN OUTDIR}
if [ -e "$out" ]; then echo "behaviour_snapshot.sh: $out exists; give a new folder" >&2; exit 2; fi
mkdir -p "$out"
labrun=$(realpath "$labrun")
out=$(realpath "$out")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
while IFS= read -r f; do
  name=${f%.[gx]z}
  dest="$out/${name//\//__}"
  mkdir -p "$dest"
  input="$tmp/$(basename "$name")"
  case $f in *.gz) gzip -dc "$f" > "$input" ;; *.xz) xz -dc "$f" > "$input" ;; *) cp "$f" "$input" ;; esac
  # The input's own folder name is in what report writes: run from the temporary folder with a fixed name.
  (cd "$tmp" && "$labrun" report "$(basename "$name")" -o report --no-plots --force > stdout.txt 2> stderr.txt
   echo "exit $?" >> stdout.txt)
  mv "$tmp/report" "$dest/report" 2> /dev/null
  mv "$tmp/stdout.txt" "$dest/report.stdout"; mv "$tmp/stderr.txt" "$dest/report.stderr"
  (cd "$tmp" && "$labrun" diff "$(basename "$name")" "$(basename "$name")" > diff.txt 2>&1; echo "exit $?" >> diff.txt
   "$labrun" diff "$(basename "$name")" "$(basename "$name")" --format json > diff.json 2> /dev/null; echo "exit $?" >> diff.json)
  mv "$tmp/diff.txt" "$tmp/diff.json" "$dest/"
  rm -f "$input"
  n=$((n + 1))
done < <(git ls-files 'results/*.jsonl' 'results/*.jsonl.gz' 'results/*.jsonl.xz' | sort)
echo "$n result files: $out"
