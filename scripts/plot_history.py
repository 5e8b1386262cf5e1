#!/usr/bin/env python3
"""Plots for `labrun history -o DIR`: one PNG per group of steps, drawn from DIR/history.json.

    python3 scripts/plot_history.py DIR

history.json is `labrun history --format json` with "series" (the runs of every point that has a step) and
"max_plots" added (src/history/history.hpp to_json). For group N (1-based, in the file's order, at most max_plots) the
script writes DIR/plots/group_N.png: each member point's time over the commits, relative to its median before the
step (1 = the old level), with its run's interval as an error bar (up to 12 points drawn, the rest counted in the
title), the members' median in black, and the step marked: a dashed line between the last commit before and the
first after, a shaded span over a drift. A group of one point is drawn in seconds. Needs only python3 and
matplotlib (Debian: python3-matplotlib); uses the non-interactive Agg backend.
"""

import json
import math
import os
import statistics
import sys

from plot_common import number, plt

MAX_LINES = 12


def short_key(key, members):
    """A member's legend label: its variant and the axes whose values differ among the group's members."""
    parts = key.split("/")
    if len(parts) < 3:
        return key
    axes = [dict(a.split("=", 1) for a in m["key"].split("/")[2].split(",") if "=" in a) for m in members]
    mine = dict(a.split("=", 1) for a in parts[2].split(",") if "=" in a)
    differ = [k for k in mine if len({ax.get(k) for ax in axes}) > 1]
    return parts[1] + (" " + ",".join(f"{k}={mine[k]}" for k in differ) if differ else "")


def main(out_dir):
    with open(os.path.join(out_dir, "history.json")) as f:
        h = json.load(f)
    commits = h["commits"]
    index_of = {c["sha"]: c["index"] for c in commits}
    labels = [c["sha"][:7] for c in commits]
    # Tick labels: the short sha and, with --repo, the subject, shortened; every k-th where there are many commits.
    ticks = [c["sha"][:7] + (" " + (c["subject"][:28] + "…" if len(c["subject"]) > 29 else c["subject"])
                             if c.get("subject") else "") for c in commits]
    series = {s["id"]: s for s in h.get("series", [])}
    steps = h["steps"]
    cap = h.get("max_plots", 16) or len(h["groups"])
    os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    for gi, g in enumerate(h["groups"][:cap]):
        before, after, start = index_of[g["before"]], index_of[g["after"]], index_of[g["start"]]
        members = [steps[k] for k in g["steps"]]
        single = len(members) == 1
        fig, ax = plt.subplots(figsize=(13, 5))
        per_commit = {}
        for m in members[:MAX_LINES] if not single else members:
            s = series.get(m["id"])
            if s is None:
                continue
            runs = [r for r in s["runs"] if number(r["time_s"]) is not None]
            base = [r["time_s"] for r in runs if r["commit"] <= before]
            scale = 1.0 if single or not base else statistics.median(base)
            xs = [r["commit"] for r in runs]
            ys = [r["time_s"] / scale for r in runs]
            lo = [max(0.0, (r["time_s"] - (number(r["ci_low_s"]) or r["time_s"])) / scale) for r in runs]
            hi = [max(0.0, ((number(r["ci_high_s"]) or r["time_s"]) - r["time_s"]) / scale) for r in runs]
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o-", ms=3, lw=0.8, alpha=0.6 if not single else 1.0,
                        capsize=2, label=short_key(s["key"], members))
        if not single:
            for m in members:
                s = series.get(m["id"])
                if s is None:
                    continue
                runs = [r for r in s["runs"] if number(r["time_s"]) is not None]
                base = [r["time_s"] for r in runs if r["commit"] <= before]
                if not base:
                    continue
                scale = statistics.median(base)
                for r in runs:
                    per_commit.setdefault(r["commit"], []).append(r["time_s"] / scale)
            xs = sorted(per_commit)
            ax.plot(xs, [statistics.median(per_commit[x]) for x in xs], "k-", lw=2.2, label="median of the points")
        if start != after:
            ax.axvspan(start - 0.5, after + 0.5, color="tab:orange", alpha=0.15, label="drift")
        ax.axvline(before + 0.5 if start == after else start - 0.5, color="tab:red", ls="--", lw=1.2,
                   label=f"step: {labels[before]}..{labels[after]}")
        every = max(1, math.ceil(len(ticks) / 16))
        shown = [k for k in range(len(ticks)) if k % every == 0 or k in (before, after)]
        ax.set_xticks(shown)
        ax.set_xticklabels([ticks[k] for k in shown], rotation=30, ha="right", fontsize=8)
        ax.set_xlabel("commit (oldest first)")
        ax.set_ylabel("time (s)" if single else "time / median before the step")
        change = f"{100 * (g['median_ratio'] - 1):+.1f}%"
        what = "environment" if g["environment"] else ("slower" if g["slower"] else "faster")
        variants = sorted({m["key"].split("/")[1] for m in members if m["key"].count("/") >= 2})
        named = ", ".join(variants[:4]) + (f" and {len(variants) - 4} more" if len(variants) > 4 else "")
        subject = commits[after].get("subject") or ""
        title = (f"Did {named} step at {labels[after]}" + (f" (\"{subject[:40]}\")" if subject else "")
                 + f"? {change} ({what}), "
                 + (f"{members[0]['key']}" if single else f"{len(members)} {g['bound']}-bound points"))
        if not single and len(members) > MAX_LINES:
            title += f"; {MAX_LINES} of {len(members)} drawn"
        ax.set_title(title, fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "plots", f"group_{gi + 1}.png"), dpi=110)
        plt.close(fig)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
