#!/usr/bin/env python3
"""labrun's kernel time beside Nsight Compute's gpu__time_duration (scripts/ncu_kernel_time.sh writes the inputs).

For each point NAME in OUT: NAME.jsonl (labrun's timed run: timing.time_s, the device median; beside it, the device
median less the floor its header's calibration gives, (one_queued - eager_queued) / batch + launches x eager_queued,
the model docs/metrics.md "Kernel time" measured and set aside) and NAME.ncu.csv (ncu --csv of the
point in profiler mode). ncu's readings of one iteration are the sums of the kernels of each of the 5 plain
iterations at the end of the point's range (the host probe's empty kernels left out). Prints one row per point: both
of labrun's numbers against the median of ncu's five readings, in microseconds and percent.
Usage: scripts/ncu_kernel_time.py OUT
"""
import csv
import glob
import json
import os
import statistics
import sys

UNIT_S = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
PLAIN = 5  # profiler mode's plain iterations (kProfileIterations)


def ncu_kernels(path):
    """(kernel name, gpu__time_duration in seconds) in launch order."""
    rows = [line for line in open(path, errors="replace") if line.startswith('"')]
    out = []
    for r in csv.DictReader(rows):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(r["Metric Value"].replace(",", ""))
        out.append((r["Kernel Name"], value * UNIT_S[r["Metric Unit"]]))
    return out


def iterations(kernels):
    """The per-iteration sums of the last PLAIN identical blocks of kernels: the lab's own kernels (the host probe's
    empty kernel, the cold-L2 flush before each cold iteration) left out, as labrun's timing leaves them out."""
    ks = [k for k in kernels if "empty_kernel" not in k[0] and "l2_flush" not in k[0]]
    for k in range(1, 17):
        tail = ks[-PLAIN * k:]
        if len(tail) < PLAIN * k:
            break
        names = [n for n, _ in tail]
        if all(names[i * k:(i + 1) * k] == names[:k] for i in range(PLAIN)):
            return [sum(t for _, t in tail[i * k:(i + 1) * k]) for i in range(PLAIN)], names[:k]
    return None, None


def main(out):
    empty = os.path.join(out, "empty.ncu.csv")
    if os.path.exists(empty):
        e = [t for _, t in ncu_kernels(empty)]
        if e:
            print(f"ncu, empty <<<1,1>>> kernel: median {statistics.median(e) * 1e6:.3f} us of {len(e)}")
    print(f"{'point':40} {'batch':>6} {'device us':>10} {'floor us':>9} {'less floor':>10} {'ncu us':>9} "
          f"{'device':>8} {'less fl.':>8}  ncu readings (us); kernels")
    worst = 0.0
    for path in sorted(glob.glob(os.path.join(out, "*.ncu.csv"))):
        name = os.path.basename(path)[:-len(".ncu.csv")]
        if name == "empty":
            continue
        lines = [json.loads(x) for x in open(os.path.join(out, name + ".jsonl"))]
        point = next(x for x in lines if x.get("type") == "point")
        t = point.get("timing") or {}
        reads, names = iterations(ncu_kernels(path))
        if not reads or point.get("status") != "ok":
            print(f"{name:40} status {point.get('status')}, ncu readings {reads}")
            continue
        ncu = statistics.median(reads)
        launch = ((lines[0].get("calibration") or {}).get("launch") or {})
        one, queued = launch.get("one_queued_time_s"), launch.get("eager_queued_time_s")
        launches = (point.get("cost") or {}).get("launches") or 1
        floor = (one - queued) / t.get("batch", 1) + launches * queued if one and queued else None
        dev = t.get("time_s")
        kern = dev - floor if floor else None
        d_dev = 100 * (dev / ncu - 1)
        d_kern = 100 * (kern / ncu - 1) if kern else float("nan")
        worst = max(worst, abs(d_dev))
        print(f"{name:40} {t.get('batch'):>6} {dev * 1e6:>10.2f} {(floor or 0) * 1e6:>9.3f} "
              f"{(kern or 0) * 1e6:>10.2f} {ncu * 1e6:>9.2f} {d_dev:>+7.1f}% {d_kern:>+7.1f}%  "
              f"{' '.join(f'{r * 1e6:.2f}' for r in reads)}; {' + '.join(n[:40] for n in names)}")
    print(f"largest |labrun device time - ncu| / ncu: {worst:.1f}%")


if __name__ == "__main__":
    main(sys.argv[1])
