"""One line of counts from a `labrun diff --format json` on stdin: verdicts of the compared points split by
host_sensitive, the share `same`, and the diff's hosts.probe_ratio (diffs.sh here)."""
import collections
import json
import sys

d = json.load(sys.stdin)
rows = [r for r in d["points"] if r["verdict"] != "not_compared"]
hs = [r for r in rows if r["host_sensitive"]]
nh = [r for r in rows if not r["host_sensitive"]]


def counts(rs):
    return dict(sorted(collections.Counter(r["verdict"] for r in rs).items()))


def same(rs):
    return 100.0 * sum(r["verdict"] == "same" for r in rs) / max(1, len(rs))


print(f"  compared {len(rows)}; not host-sensitive {len(nh)}: {counts(nh)} ({same(nh):.1f}% same); "
      f"host-sensitive {len(hs)}: {counts(hs)}; overall {same(rows):.1f}% same; "
      f"hosts.probe_ratio {d['hosts']['probe_ratio']:.3f}")
