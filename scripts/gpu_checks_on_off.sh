#!/usr/bin/env bash
# What the integrity checks cost, and that they find nothing in a correct kernel: runs each config with every check
# off (lab.fences, lab.guard_inputs, lab.recheck, lab.audit false), then with every check on (the defaults), back to back with
# one binary on one GPU, and diffs the two runs with `labrun diff --fail-on any` (no check runs inside a timed
# sample, so nothing may move). Writes NAME-off.jsonl.xz, NAME-on.jsonl.xz, NAME-diff.txt and steps.txt (each run's
# wall time, the overhead, and every point of the `on` run that is not ok or skipped) to OUTDIR.
# Binaries: scripts/gpu_pack.sh packs them into .h200/. Usage, on the GPU machine from the repository root:
#   [ORDER="on off"] scripts/gpu_checks_on_off.sh OUTDIR CONFIG [CONFIG...]   (ORDER: which run goes first; default off on)
# Exit status: non-zero if a sweep failed or a diff found a change; every step still runs.
set -uo pipefail
out=${1:?usage: scripts/gpu_checks_on_off.sh OUTDIR CONFIG...}
shift
mkdir -p "$out"
b=.h200
[ -f $b/bins.tar.xz ] && tar -xJf $b/bins.tar.xz -C $b
off=(--lab fences=false --lab guard_inputs=false --lab recheck=false --lab audit=false)
rc=0
{
  echo "build: $(cat $b/GIT_SHA 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1
  echo "compute processes: $(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>&1 | wc -l)"
} > "$out/steps.txt"
for config in "$@"; do
  name=$(basename "$config" .yaml)
  declare -A wall
  for side in ${ORDER:-off on}; do
    args=()
    [ "$side" = off ] && args=("${off[@]}")
    start=$(date +%s.%N)
    $b/labrun sweep "$config" --device cuda -q -o "$out/$name-$side.jsonl" --force "${args[@]}" > /dev/null \
      2> "$out/$name-$side.log"
    status=$?
    wall[$side]=$(python3 -c "print(round($(date +%s.%N) - $start, 2))")
    echo "$name checks $side: exit $status in ${wall[$side]} s" | tee -a "$out/steps.txt"
    [ $status -eq 0 ] || { tail -n 5 "$out/$name-$side.log"; rc=1; }
    rm -f "$out/$name-$side.log"
  done
  echo "$name overhead: $(python3 -c "print(round((${wall[on]} / ${wall[off]} - 1) * 100, 1))") %" | tee -a "$out/steps.txt"
  $b/labrun diff "$out/$name-off.jsonl" "$out/$name-on.jsonl" --fail-on any > "$out/$name-diff.txt" 2>&1
  status=$?
  echo "$name diff off -> on: exit $status ($(grep -m1 -E '^[0-9]+ points' "$out/$name-diff.txt" || tail -n 1 "$out/$name-diff.txt"))" |
    tee -a "$out/steps.txt"
  [ $status -eq 0 ] || rc=1
  python3 - "$out/$name-on.jsonl" >> "$out/steps.txt" <<'PY'
import json, sys
bad = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "point"
       and r["status"] not in ("ok", "skipped", "not_supported")]
print(f"{sys.argv[1].rsplit('/', 1)[-1]}: {len(bad)} points neither ok nor skipped")
for r in bad:
    print(f"  {r['key']}: {r['status']}: {r.get('reason')}")
PY
  xz -9e -f "$out/$name-off.jsonl" "$out/$name-on.jsonl"
done
exit $rc
