#!/usr/bin/env python3
"""A result file of about 100,000 points from a committed one: every point copied N times with a `replica` axis
(replica = 0..N-1) and the key and id it would have (the key's axes sorted by name; the id FNV-1a 64 of the key,
as labrun makes them), the header copied once. Usage: replicate.py IN.jsonl N > OUT.jsonl
"""
import json
import sys


def fnv1a64(text):
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def main(path, n):
    lines = [json.loads(line) for line in open(path)]
    out = sys.stdout
    for r in lines:
        if r.get("type") != "point":
            out.write(json.dumps(r) + "\n")
    points = [r for r in lines if r.get("type") == "point"]
    for k in range(n):
        for p in points:
            q = dict(p)
            q["axes"] = dict(p["axes"], replica=k)
            experiment, variant, axes = p["key"].split("/", 2)
            pairs = sorted(axes.split(",") + [f"replica={k}"], key=lambda a: a.split("=", 1)[0])
            q["key"] = f"{experiment}/{variant}/" + ",".join(pairs)
            q["id"] = fnv1a64(q["key"])
            out.write(json.dumps(q) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
