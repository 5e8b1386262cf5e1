#!/usr/bin/env python3
"""What labrun said of each variant of a test aid (tests/aids/integrity, tests/aids/audit), as a markdown table.

Usage: scripts/integrity_table.py RESULTS.jsonl  (a sweep of tests/aids/integrity.yaml or tests/aids/audit.yaml by
labrun_testaid)
One row per variant, one column per (n, mode): the status, and the reason for a point that is not ok; an ok point
whose audit warned (docs/integrity.md "The audit") shows the audit's reason and the timing method.
"""
import json
import sys


def main(path):
    points = [r for r in map(json.loads, open(path)) if r.get("type") == "point"]
    columns, rows, cells = [], [], {}
    for p in points:
        col = f"n={p['axes']['n']} {p['axes'].get('mode', 'eager')}"
        if col not in columns:
            columns.append(col)
        if p["variant"] not in rows:
            rows.append(p["variant"])
        text = p["status"] if p["status"] == "ok" else f"`{p['status']}`: {p.get('reason') or ''}"
        audit = (p.get("integrity") or {}).get("audit") or {}
        if p["status"] == "ok" and audit.get("state") == "warned":
            method = (p.get("timing") or {}).get("method", "")
            text = f"ok, audit `warned`: {audit.get('reason')} ({method})"
        cells[(p["variant"], col)] = text.replace("|", "\\|")
    print("| variant | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for v in rows:
        print(f"| {v} | " + " | ".join(cells.get((v, c), "") for c in columns) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
