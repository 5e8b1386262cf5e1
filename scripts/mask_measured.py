"""Masks what a run measured in a labrun JSONL file, for comparing what two builds write byte for byte
(scripts/behaviour_snapshot.sh): every JSON number becomes "#", every run of digits inside a string becomes "#" (and a
non-finite number written as a string, "Infinity", is a number), and
the words chosen from measured numbers (timing.stop_reason, the warmup's; interpretation.bound, confidence, suspect;
warnings' messages) become "#"; a number in a string is masked with its fraction and the SI prefix of its unit. Keys, their order, statuses, reasons' words and the record's shape stay.
Usage: python3 scripts/mask_measured.py RUN.jsonl > MASKED.jsonl
"""
import json
import re
import sys

# A number inside a string, with its fraction (a measured 1.5 ms and 15 ms read alike) and the unit prefix it chose
# (ms, µs; MB/s, GB/s).
DIGITS = re.compile(r"[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?( ?[kMGTµmn](?=[A-Za-z/]))?")
MEASURED = {("timing", "stop_reason"), ("interpretation", "bound"), ("interpretation", "confidence"),
            ("interpretation", "suspect"), ("interpretation", "reason"), ("warmup", "stop_reason")}


def mask(value, path=()):
    """`value` with what was measured replaced by "#"; `path`: the keys leading to it."""
    if path[-2:] in MEASURED or (len(path) >= 1 and path[0] == "warnings") or path[-1:] in (("git_sha",), ("git_dirty",)):
        return "#"
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return "#"
    if isinstance(value, str):
        if value in ("Infinity", "-Infinity", "NaN"):  # a number labrun writes as a string (json_real)
            return "#"
        return DIGITS.sub("#", value)
    if isinstance(value, list):
        if value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return ["#"]
        return [mask(v, path) for v in value]
    return {k: mask(v, path + (k,)) for k, v in value.items()}


for line in open(sys.argv[1]):
    record = json.loads(line)
    print(json.dumps(mask(record), ensure_ascii=False))
