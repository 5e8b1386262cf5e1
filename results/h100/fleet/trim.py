#!/usr/bin/env python3
"""Keeps what `labrun diff` reads of a result file (JSON Lines on stdin, out on stdout), so that a full masking run
fits results/: each point's phases, integrity, kernels, launches, memory and sanitizer go, and of its timing the raw
wall samples (the device samples are the ones compared) and the submit and host-probe samples (the probe's summaries
and per-process medians stay); the device samples are rounded to 6 significant digits (a millionth of a time, far
below any noise the diff tests: the fleet's summary.txt is the same byte for byte before and after). Headers,
correctness and interpretation are kept whole; every line still reads back as a record (PointRecord.RoundTripsEveryCommittedResult)."""
import json
import sys

for line in sys.stdin:
    r = json.loads(line)
    if r.get("type") == "point":
        for k in ("phases", "integrity", "kernels", "launches", "memory", "sanitizer"):
            r.pop(k, None)
        t = r.get("timing")
        if isinstance(t, dict):
            if t.get("device_samples_s"):
                t["wall_samples_s"] = []
            t["submit_samples_s"] = None
            # Written by the build that measured the calibrated floor against ncu and set it aside
            # (docs/metrics.md "Kernel time"); labrun writes them no more.
            t.pop("kernel_time_s", None)
            t.pop("floor_time_s", None)
            t["host_probe_samples_s"] = None
            if t.get("device_samples_s"):
                t["device_samples_s"] = [float("%.6g" % v) for v in t["device_samples_s"]]
    sys.stdout.write(json.dumps(r, separators=(",", ":")) + "\n")
