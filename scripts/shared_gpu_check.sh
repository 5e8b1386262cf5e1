#!/usr/bin/env bash
# Case C23 on a GPU (docs/cases.md): a sweep of configs/gelu.yaml's n = 2^24 points alone, then the same sweep while a
# second process keeps the GPU busy (bf16 matmuls in PyTorch), then `labrun diff` of the two without and with
# --allow-shared. Writes OUT/alone.jsonl, OUT/shared.jsonl, OUT/summary.txt (which points were flagged and with which
# process) and the diffs' outputs. Needs PyTorch with CUDA for the tenant. Usage: scripts/shared_gpu_check.sh OUT [LABRUN]
set -uo pipefail
out=$1
labrun=${2:-build/labrun}
mkdir -p "$out"
sweep() {
  "$labrun" sweep configs/gelu.yaml --only "n=16777216" --lab processes=1 -q -o "$out/$1.jsonl" --force \
    > "$out/$1.console.txt" 2>&1
  echo "sweep $1: exit $?" | tee -a "$out/summary.txt"
}
: > "$out/summary.txt"
echo "before: $(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader | tr '\n' ';')" >> "$out/summary.txt"
sweep alone
python3 - > "$out/tenant.log" 2>&1 <<'PY' &
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 900
while time.time() < end:
    for _ in range(20):
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
PY
tenant=$!
for _ in $(seq 60); do  # until the tenant holds a context on the GPU
  nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -qw "$tenant" && break
  sleep 1
done
echo "tenant: pid $tenant; on the GPU: $(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader | tr '\n' ';')" >> "$out/summary.txt"
sweep shared
kill "$tenant" 2> /dev/null
wait "$tenant" 2> /dev/null
"$labrun" diff "$out/alone.jsonl" "$out/shared.jsonl" > "$out/diff.txt" 2>&1
echo "labrun diff alone shared: exit $?" | tee -a "$out/summary.txt"
"$labrun" diff "$out/alone.jsonl" "$out/shared.jsonl" --allow-shared > "$out/diff-allow-shared.txt" 2>&1
echo "labrun diff alone shared --allow-shared: exit $?" | tee -a "$out/summary.txt"
python3 - "$out" "$tenant" >> "$out/summary.txt" <<'PY'
import json, sys
out, tenant = sys.argv[1], int(sys.argv[2])
for name in ("alone", "shared"):
    points = [json.loads(l) for l in open(f"{out}/{name}.jsonl") if '"type": "point"' in l or '"type":"point"' in l]
    flagged = [p for p in points if any(w["kind"] == "shared_device" for w in p.get("warnings", []))]
    named = [p for p in flagged if any(t.get("pid") == tenant
                                       for when in ("before", "after")
                                       for t in (p["device_state"][when] or {}).get("tenants", []) or [])]
    suspect = [p for p in points if (p.get("interpretation") or {}).get("suspect")]
    print(f"{name}: {len(points)} points, {len(flagged)} with a shared_device warning, {len(named)} naming the "
          f"tenant pid {tenant}, {len(suspect)} suspect")
    for p in flagged[:3]:
        print("  ", p["key"], "|", [w["message"] for w in p["warnings"] if w["kind"] == "shared_device"][0][:160])
PY
cat "$out/summary.txt"
