#!/usr/bin/env python3
"""Where the undecided eager points of the fleet come from: each process of a run draws a launch-path state, and its
eager launch-bound points follow it. For every committed run (results/h100/fleet/masking-h100-*.jsonl.xz) and every
one of its processes: the process's level (the median, over the run's eager launch-bound points, of the log of the
process's median time less the mean log over the run's processes) beside its calibrated launch costs less the run's
mean (log). Then, over all the processes (deviations within each run, so pooled within runs), the correlation and the
least-squares slope (elasticity) of the level on each calibrated cost. Reads only the committed files; no GPU.
Usage: python3 results/h100/fleet/process_state.py   (from the repository root)"""
import glob
import json
import lzma
import math
import statistics as st

KEYS = ("eager_queued_time_s", "one_queued_time_s", "event_pair_time_s", "eager_time_s", "graph_time_s")


def process_rows(path):
    """[(process index, level, {calibration key: log deviation})] of one run."""
    with lzma.open(path, "rt") as f:
        lines = [json.loads(line) for line in f]
    runs = lines[0]["processes"]["runs"]
    cal = {k: [math.log(r["calibration"]["launch"][k]) for r in runs] for k in KEYS}
    devs = [[] for _ in runs]
    for p in lines[1:]:
        if p.get("type") != "point" or p["status"] != "ok" or p["axes"].get("mode") != "eager":
            continue
        if (p.get("interpretation") or {}).get("bound") != "launch":
            continue
        times = (p["timing"].get("processes") or {}).get("time_s")
        if not times:
            continue
        logs = [math.log(t) for t in times]
        mean = st.mean(logs)
        for i, x in enumerate(logs):
            devs[i].append(x - mean)
    return [(i, st.median(d), {k: cal[k][i] - st.mean(cal[k]) for k in KEYS}) for i, d in enumerate(devs)]


def main():
    rows = []
    for path in sorted(glob.glob("results/h100/fleet/masking-h100-*.jsonl.xz")):
        name = path.split("masking-h100-")[1].split(".jsonl")[0]
        for i, level, dev in process_rows(path):
            rows.append((name, i, level, dev))
            print(f"{name} process {i + 1}: level {level:+.3f}  " +
                  "  ".join(f"{k} {v:+.3f}" for k, v in dev.items()))
    level = [r[2] for r in rows]
    print(f"\nover {len(rows)} processes, level against each calibrated cost (log deviations within a run):")
    for k in KEYS:
        x = [r[3][k] for r in rows]
        mx, my = st.mean(x), st.mean(level)
        sxy = sum((a - mx) * (b - my) for a, b in zip(x, level))
        sxx = sum((a - mx) ** 2 for a in x)
        syy = sum((b - my) ** 2 for b in level)
        print(f"  {k:20s} correlation {sxy / math.sqrt(sxx * syy):+.3f}  slope {sxy / sxx:+.3f}")


main()
