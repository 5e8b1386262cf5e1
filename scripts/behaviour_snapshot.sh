#!/usr/bin/env bash
# What labrun writes for every committed result, to compare two builds byte for byte (a refactoring must not move
# a byte): for each results/**/*.jsonl[.gz|.xz] file, `labrun report --no-plots` (every file it writes: markdown, CSV,
# the plot data) and `labrun diff F F` as a table and as JSON, with each command's exit code; `labrun history` over
# results/h200/history/'s two commits as a table, markdown and JSON and its report folder's history.md and
# history.json; a host sweep of configs/masking.yaml (24 points) with its console output and its JSONL, what it
# measured masked (scripts/mask_measured.py), and `labrun merge` of two shards of it; and every command's --help.
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
# history across two commits, every rendering.
h="$out/history"
mkdir -p "$h"
xz -dc results/h200/history/masking-01db259.jsonl.xz > "$tmp/a.jsonl"
xz -dc results/h200/history/masking-delay.jsonl.xz > "$tmp/b.jsonl"
(cd "$tmp" && for format in table markdown json; do
   "$labrun" history a.jsonl b.jsonl --format $format > "$h/history.$format" 2>&1; echo "exit $?" >> "$h/history.$format"
 done
 "$labrun" history a.jsonl b.jsonl -o hist --max-plots 1 > "$h/history-o.stdout" 2>&1; echo "exit $?" >> "$h/history-o.stdout"
 cp hist/history.md hist/history.json "$h/" 2> /dev/null)
# A host sweep: what it prints and writes (measured values masked), and merge's rewrite of it.
s="$out/sweep"
mkdir -p "$s"
(cd "$tmp" && "$labrun" sweep "$OLDPWD/configs/masking.yaml" --device cpu -o sweep.jsonl --only "n=1e5,density=0.1" \
   --lab max_time_s=0.02 --lab min_samples=3 2>&1 | sed -E 's/[0-9]+(\.[0-9]+)? ?(ns|µs|ms|s)( |$)/#T\3/g; s/[0-9]+/#/g; s/ +/ /g' > "$s/sweep.console"
 python3 "$OLDPWD/scripts/mask_measured.py" sweep.jsonl > "$s/sweep.masked.jsonl"
 for i in 1 2; do
   "$labrun" sweep "$OLDPWD/configs/masking.yaml" --device cpu -q -o shard$i.jsonl --only "n=1e5,density=0.1" \
     --lab max_time_s=0.02 --lab min_samples=3 --shard $i/2 > /dev/null 2>&1
 done
 "$labrun" merge shard1.jsonl shard2.jsonl -o merged.jsonl > "$s/merge.stdout" 2>&1; echo "exit $?" >> "$s/merge.stdout"
 python3 "$OLDPWD/scripts/mask_measured.py" merged.jsonl > "$s/merged.masked.jsonl" 2> /dev/null)
# Every command's --help (export's is new; the others must not change).
for command in "" sweep validate list merge slurm diff history report export env; do
  "$labrun" $command --help > "$out/help${command:+-$command}.txt" 2>&1
done
echo "$n result files, history, a host sweep and the help texts: $out"
