#!/usr/bin/env python3
"""Keeps what `labrun diff` reads of a result file (JSON Lines on stdin, out on stdout), so that a full masking run
fits results/: each point's phases, correctness detail, integrity, kernels, launches, memory and sanitizer go, and of
its timing the raw wall samples (the device samples are the ones compared), the submit and host-probe samples (the
probe's summaries and per-process medians stay); of its interpretation the bound and memory source alone. Headers are
kept whole. run.sh checks that the diffs of the trimmed files equal the untrimmed ones' where both were at hand."""
import json
import sys

for line in sys.stdin:
    r = json.loads(line)
    if r.get("type") == "point":
        for k in ("phases", "integrity", "kernels", "launches", "memory", "sanitizer"):
            r.pop(k, None)
        if isinstance(r.get("correctness"), dict):
            r["correctness"] = {"passed": r["correctness"].get("passed")}
        t = r.get("timing")
        if isinstance(t, dict):
            if t.get("device_samples_s"):
                t["wall_samples_s"] = []
            t["submit_samples_s"] = None
            t["host_probe_samples_s"] = None
        i = r.get("interpretation")
        if isinstance(i, dict):
            ceilings = i.get("ceilings") or {}
            r["interpretation"] = {"bound": i.get("bound"),
                                   "ceilings": {"memory_source": ceilings.get("memory_source")}}
    sys.stdout.write(json.dumps(r, separators=(",", ":")) + "\n")
