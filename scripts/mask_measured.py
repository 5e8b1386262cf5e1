"""Masks what a run measured in a labrun JSONL file, for comparing what two builds write byte for byte
(scripts/behaviour_snapshot.sh): every JSON number becomes "#", every run of digits inside a string becomes "#", and
the words chosen from measured numbers (timing.stop_reason; interpretation.bound, confidence, suspect; warnings'
messages) become "#". Keys, their order, statuses, reasons' words and the record's shape stay.
Usage: python3 scripts/mask_measured.py RUN.jsonl > MASKED.jsonl
"""
import json
import re
import sys

DIGITS = re.compile(r"[0-9]+")
MEASURED = {("timing", "stop_reason"), ("interpretation", "bound"), ("interpretation", "confidence"),
            ("interpretation", "suspect"), ("interpretation", "reason")}


def mask(value, path=()):
    """`value` with what was measured replaced by "#"; `path`: the keys leading to it."""
    if path[-2:] in MEASURED or (len(path) >= 1 and path[0] == "warnings") or path[-1:] in (("git_sha",), ("git_dirty",)):
        return "#"
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return "#"
    if isinstance(value, str):
        return DIGITS.sub("#", value)
    if isinstance(value, list):
        if value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return ["#"]
        return [mask(v, path) for v in value]
    return {k: mask(v, path + (k,)) for k, v in value.items()}


for line in open(sys.argv[1]):
    record = json.loads(line)
    print(json.dumps(mask(record), ensure_ascii=False))
