#!/usr/bin/env bash
# One run of the across-hosts evidence (README.md here): configs/masking.yaml (or CONFIG=...) on the GPU with the
# binaries packed in .h200/, optionally under scripts/slow_host.sh, writing OUTDIR/NAME.jsonl, its log, and its
# wall time. Run from the repository root on the GPU machine.
# Usage: results/h200/diff/across-hosts/run.sh OUTDIR NAME [SLOW_HOST_OPTION...]
#   e.g. run.sh /tmp/r normal-1            run.sh /tmp/r slow-1 --cpu 15 --hogs 1
set -uo pipefail
out=${1:?usage: run.sh OUTDIR NAME [SLOW_HOST_OPTION...]} name=${2:?usage: run.sh OUTDIR NAME [SLOW_HOST_OPTION...]}
shift 2
config=${CONFIG:-configs/masking.yaml}
mkdir -p "$out"
wrap=()
[ $# -eq 0 ] || wrap=(scripts/slow_host.sh "$@" --)
start=$(date +%s.%N)
"${wrap[@]}" .h200/labrun sweep "$config" --device cuda -q -o "$out/$name.jsonl" --force > "$out/$name.summary.txt" 2> "$out/$name.log"
status=$?
end=$(date +%s.%N)
printf '%s: %s%s, exit %d, %.1f s wall\n' "$name" "$config" "${wrap[*]:+ under ${wrap[*]}}" $status "$(awk "BEGIN{print $end - $start}")" \
  | tee -a "$out/runs.txt"
tail -n 2 "$out/$name.summary.txt"
exit $status
