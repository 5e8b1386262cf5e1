"""Checks labrun's exports of one run against the records (tests/export/check_exports.sh).

Arguments: RUN1.jsonl RUN2.jsonl COMPARE.txt GBENCH.json BMF.json GAB.json. Exits 1 naming the first failure.
Shapes: Google Benchmark JSON (json_reporter.cc), Bencher Metric Format (bencher.dev/docs/reference/
bencher-metric-format: {benchmark: {measure: {value, lower_value?, upper_value?}}}), github-action-benchmark's custom
input ([{name, unit, value, range?, extra?}]).
"""
import json
import math
import sys


def points(path):
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "point":
                yield r


def exportable(r):
    """labrun's rule (src/export/exporter.cpp not_exportable): ok, no integrity finding, a finite time."""
    if r["status"] != "ok":
        return False
    for check in (r.get("integrity") or {}).values():
        if isinstance(check, dict) and check.get("state") in ("failed", "warned"):
            return False
    t = (r.get("timing") or {}).get("time_s")
    return isinstance(t, (int, float)) and math.isfinite(t)


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-12)


def main():
    run1, run2, compare, gbench, bmf, gab = sys.argv[1:7]
    one = {r["key"]: r for r in points(run1)}
    two = {r["key"]: r for r in points(run2)}
    ok1 = {k for k, r in one.items() if exportable(r)}
    ok2 = {k for k, r in two.items() if exportable(r)}

    # compare.py lists every point ok on both sides (a name per line, padded; the name is the key).
    listed = set()
    with open(compare) as f:
        for line in f:
            word = line.split(" ", 1)[0]
            if word in one:
                listed.add(word)
    missing = (ok1 & ok2) - listed
    if missing:
        fail(f"compare.py did not list {len(missing)} ok points, e.g. {sorted(missing)[0]}")
    print(f"compare.py listed all {len(ok1 & ok2)} points ok on both sides")

    g = json.load(open(gbench))
    for key in ("context", "benchmarks"):
        if key not in g:
            fail(f"gbench: no {key}")
    timed = {}
    for b in g["benchmarks"]:
        for key in ("name", "run_name", "run_type", "repetitions", "threads"):
            if key not in b:
                fail(f"gbench: {b.get('name')}: no {key}")
        if b.get("error_occurred"):
            if "real_time" in b or b["name"] in ok1:
                fail(f"gbench: error entry {b['name']} carries a time or is an ok point")
            continue
        if b["time_unit"] != "ns":
            fail(f"gbench: {b['name']}: time_unit {b['time_unit']}")
        if b["run_type"] == "aggregate" and b["aggregate_name"] == "median":
            timed[b["run_name"]] = b["real_time"]
        elif b["run_type"] == "iteration" and b["repetitions"] == 1:
            timed[b["name"]] = b["real_time"]
    if set(timed) != ok1:
        fail(f"gbench: {len(timed)} timed benchmarks for {len(ok1)} ok points")
    for k, v in timed.items():
        if not close(v, one[k]["timing"]["time_s"] * 1e9):
            fail(f"gbench: {k}: {v} ns is not the record's time_s")

    m = json.load(open(bmf))
    if not isinstance(m, dict) or set(m) != ok1:
        fail("bmf: not an object of exactly the ok points")
    for k, measures in m.items():
        r = one[k]
        for name, v in measures.items():
            if not isinstance(v.get("value"), (int, float)) or set(v) - {"value", "lower_value", "upper_value"}:
                fail(f"bmf: {k}: {name}: not {{value, lower_value?, upper_value?}}")
            if "lower_value" in v and not v["lower_value"] <= v["value"] <= v["upper_value"]:
                fail(f"bmf: {k}: {name}: value outside its bounds")
        if not close(measures["latency"]["value"], r["timing"]["time_s"] * 1e9):
            fail(f"bmf: {k}: latency is not the record's time_s")
        bw = (r.get("interpretation") or {}).get("achieved_bandwidth_Bps")
        if bw and not close(measures["bandwidth"]["value"], bw):
            fail(f"bmf: {k}: bandwidth is not the record's achieved_bandwidth_Bps")

    a = json.load(open(gab))
    if not isinstance(a, list) or {e["name"] for e in a} != ok1:
        fail("github-action-benchmark: not an array of exactly the ok points")
    for e in a:
        if not (isinstance(e["name"], str) and isinstance(e["unit"], str) and isinstance(e["value"], (int, float))):
            fail(f"github-action-benchmark: {e}: name, unit, value of the wrong types")
        if not isinstance(e.get("range", ""), str) or not isinstance(e.get("extra", ""), str):
            fail(f"github-action-benchmark: {e['name']}: range or extra not a string")
        if not close(e["value"], one[e["name"]]["timing"]["time_s"] * 1e9):
            fail(f"github-action-benchmark: {e['name']}: value is not the record's time_s")
    print(f"bmf and github-action-benchmark: {len(ok1)} points, values equal to the records'")


main()
