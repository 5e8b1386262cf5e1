#!/usr/bin/env python3
"""Plots for `labrun report`: draws the figures the report's plots.json specifies, from its points.csv and
ceilings.json, as PNGs in the report folder, and lists what it drew in plots.json under "drawn".

    python3 scripts/plot_report.py OUT            (OUT holds plots.json, points.csv, ceilings.json)
    python3 scripts/plot_report.py OUT/points.csv OUT

plots.json (written by `labrun report`, src/report/report_plots.hpp): {"points": CSV, "ceilings": JSON, "figures":
[{run, experiment, x, x_scale, series, facets, style, split, title, name}], "roofline": {"marker": AXIS},
"max_time_plots": N (0: no cap)}; it adds "not_drawn", the time figures left out over the cap.
The script names no axis itself. Figures (points that are not ok or are suspect are left out):
- <name>_<split values>.png: median time per loop iteration (log) against the axis `x` (x_scale "log" or
  "linear"), one colour per value of `series` ("variant" or an axis), one line style per value of `style`, one
  panel per combination of the `facets` axes' values, one figure per combination of the `split` axes' values.
- roofline_run<R>.png: achieved FLOP/s against arithmetic intensity (flop per compulsory byte), with the memory
  roof (calibrated memory ceiling x intensity) and the FP32 compute roof (Williams, Waterman and Patterson,
  "Roofline", CACM 2009); one marker per value of the roofline's `marker` axis.

Needs only python3 and matplotlib (Debian: python3-matplotlib); uses the non-interactive Agg backend.
"""

import csv
import itertools
import json
import math
import os
import sys

import matplotlib
from matplotlib.lines import Line2D

from plot_common import number, plt

LINE_STYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P", "X"]


def axis_text(value):
    """An axis value as the report writes it: 1e8, 0.5, f32."""
    x = number(value)
    if x is None:
        return value
    if x == int(x) and abs(x) >= 1e4:
        exponent = int(math.floor(math.log10(abs(x))))
        mantissa = x / 10**exponent
        if abs(mantissa - round(mantissa, 2)) < 1e-9:
            return f"{round(mantissa, 2):g}e{exponent}"
        power = int(round(math.log2(abs(x))))
        if 2**power == abs(x):  # 16777216 as 2^24, not 1.67772e+07
            return ("-" if x < 0 else "") + f"2^{power}"
        return str(int(x))
    return f"{x:g}"


def sort_key(value):
    x = number(value)
    return (0, x, "") if x is not None else (1, 0.0, value)


def safe(text):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def load(csv_path):
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    axes = [c[len("axis."):] for c in (rows[0].keys() if rows else []) if c.startswith("axis.")]
    usable = [
        r
        for r in rows
        if r["status"] == "ok" and r["suspect"] != "true" and (number(r["time_s"]) or 0) > 0
    ]
    return rows, usable, axes


def power_of_two(values):
    """Whether every value is a positive integer power of two (then the axis is drawn in base 2, ticked at them)."""
    return all(v > 0 and float(v).is_integer() and (int(v) & (int(v) - 1)) == 0 for v in values)


def label_log_axis(axis, values, unit):
    """Labelled ticks on a log axis however few decades it spans: at the values themselves for powers of two and
    for up to 8 values, else at 1, 2 and 5 of each decade, written with SI prefixes (`unit`: "s", "" for counts)."""
    from matplotlib.ticker import EngFormatter, FixedLocator, LogLocator, NullFormatter
    values = sorted({v for v in values if v and v > 0})
    fmt = EngFormatter(unit=unit, places=None, sep=" " if unit else "")
    if values and (power_of_two(values) or len(values) <= 8) and unit == "":
        axis.set_major_locator(FixedLocator(values))
        if power_of_two(values):
            axis.set_major_formatter(matplotlib.ticker.FuncFormatter(
                lambda v, _: f"2^{int(round(math.log2(v)))}" if v > 0 else ""))
        else:
            axis.set_major_formatter(fmt)
    else:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(fmt)
    axis.set_minor_formatter(NullFormatter())


def loop_time(row):
    """Seconds per loop iteration: the CSV's iteration_time_s (the host's submission time where an eager loop
    is host-paced, else the GPU time), or time_s in CSVs written before that column existed."""
    t = number(row.get("iteration_time_s", ""))
    return t if t is not None and t > 0 else number(row["time_s"])


def column(row, name):
    """The value of `name` in a CSV row: the variant for "variant", else the axis column."""
    return row["variant"] if name == "variant" else row.get("axis." + name, "")


def interval(row):
    """The 95% interval of the loop time where the CSV has it for that number (the GPU time), else None."""
    lo, hi, t = number(row.get("ci95_low_time_s", "")), number(row.get("ci95_high_time_s", "")), loop_time(row)
    if lo is None or hi is None or t is None or number(row["time_s"]) != t:
        return None
    return lo, hi


def combo_key(combo):
    return [sort_key(v) for v in combo]


def time_figure(spec, rows, out_dir, colours, plots, budget):
    """One figure spec of plots.json: one PNG per combination of the spec's split axes, while budget["left"]
    (None: no cap) lasts; each PNG over it counts in budget["not_drawn"]."""
    run, experiment = str(spec["run"]), spec.get("experiment") or ""
    run_rows = [r for r in rows if r["run"] == run and (not experiment or r["experiment"] == experiment)]
    x_axis, series = spec["x"], spec.get("series") or "variant"
    facet_axes, style_axis, split_axes = spec.get("facets") or [], spec.get("style") or None, spec.get("split") or []
    log_x = spec.get("x_scale") == "log"
    groups = {}  # one pass over the rows: a result with hundreds of combinations reads them once, not per combo
    for r in run_rows:
        groups.setdefault(tuple(column(r, a) for a in split_axes), []).append(r)
    for combo in sorted(groups, key=combo_key):
        subset = [r for r in groups[combo]
                  if number(column(r, x_axis)) is not None and (not log_x or number(column(r, x_axis)) > 0)]
        if len({column(r, x_axis) for r in subset}) < 2:
            continue
        if budget["left"] is not None:
            if budget["left"] <= 0:
                budget["not_drawn"] += 1
                continue
            budget["left"] -= 1
        facets = sorted({tuple(column(r, a) for a in facet_axes) for r in subset}, key=combo_key)
        x_values = [number(column(r, x_axis)) for r in subset]
        used = {x_axis, series, style_axis, *facet_axes, *split_axes}
        loose = [k[5:] for k in subset[0] if k.startswith("axis.") and k[5:] not in used
                 and len({r.get(k, "") for r in subset}) > 1]
        styles = sorted({column(r, style_axis) for r in subset}, key=sort_key) if style_axis else [None]
        if series == "variant":
            lines = [v for v in colours if any(r["variant"] == v for r in subset)]
            line_colour = colours
        else:
            lines = sorted({column(r, series) for r in subset}, key=sort_key)
            cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
            line_colour = {v: cycle[i % len(cycle)] for i, v in enumerate(lines)}
        ncols = min(4, len(facets))
        nrows = math.ceil(len(facets) / ncols)
        width = max(3.6 * ncols, 9.0)  # room for the title and the legend even with one panel
        panel_width = width / ncols if ncols > 1 else 5.0
        fig, grid = plt.subplots(nrows, ncols, figsize=(width + 2.6, 3.0 * nrows + 1.1), squeeze=False,
                                 sharex=True, sharey=True,
                                 gridspec_kw={"width_ratios": [1] * ncols} if ncols > 1 else None)
        if ncols == 1:
            grid[0][0].set_box_aspect(3.0 / panel_width)
        for k, facet in enumerate(facets):
            ax = grid[k // ncols][k % ncols]
            for line, (s, style) in itertools.product(lines, enumerate(styles)):
                pts = [r for r in subset if column(r, series) == line
                       and tuple(column(r, a) for a in facet_axes) == facet
                       and (style is None or column(r, style_axis) == style)]
                # One line per value of every other axis that still varies here: never one line across them.
                strands = {}
                for r in pts:
                    strands.setdefault(tuple(column(r, a) for a in loose), []).append(r)
                for strand in strands.values():
                    strand.sort(key=lambda r: number(column(r, x_axis)))
                    xs = [number(column(r, x_axis)) for r in strand]
                    # A marker per line as well as a colour: a line under another still shows.
                    ax.plot(xs, [loop_time(r) for r in strand], LINE_STYLES[s % len(LINE_STYLES)],
                            marker=MARKERS[lines.index(line) % len(MARKERS)], color=line_colour[line],
                            linewidth=1.4, markersize=4, markerfacecolor="none")
                    band = [(x, interval(r)) for x, r in zip(xs, strand) if interval(r)]
                    if len(band) > 1:
                        ax.fill_between([x for x, _ in band], [b[0] for _, b in band], [b[1] for _, b in band],
                                        color=line_colour[line], alpha=0.15, linewidth=0)
            if log_x:
                ax.set_xscale("log", base=2 if power_of_two(x_values) else 10)
                label_log_axis(ax.xaxis, x_values, "")
            ax.set_yscale("log")
            label_log_axis(ax.yaxis, [loop_time(r) for r in subset], "s")
            ax.grid(True, which="major", alpha=0.35)
            ax.grid(True, which="minor", alpha=0.12)
            if facet_axes:
                ax.set_title(", ".join(f"{a} = {axis_text(v)}" for a, v in zip(facet_axes, facet)), fontsize=10)
        for k in range(len(facets), nrows * ncols):
            grid[k // ncols][k % ncols].set_visible(False)
        for row in grid:
            row[0].set_ylabel("median time per iteration (s)")
        for ax in grid[-1]:
            ax.set_xlabel(x_axis)
        label = (lambda v: v) if series == "variant" else (lambda v: f"{series} = {axis_text(v)}")
        handles = [Line2D([], [], color=line_colour[v], linewidth=2, marker=MARKERS[i % len(MARKERS)],
                          markerfacecolor="none", label=label(v)) for i, v in enumerate(lines)]
        if style_axis:
            handles += [Line2D([], [], color="0.3", linestyle=LINE_STYLES[s % len(LINE_STYLES)],
                               label=f"{style_axis} = {axis_text(v)}") for s, v in enumerate(styles)]
        if loose:
            handles.append(Line2D([], [], color="0.5", label="one line per " + ", ".join(loose)))
        handles.append(Line2D([], [], color="0.5", alpha=0.3, linewidth=6, label="95% interval"))
        fig.legend(handles=handles, loc="center left", bbox_to_anchor=(width / (width + 2.6), 0.5), fontsize=9,
                   frameon=False)
        slice_text = ", ".join(f"{a} = {axis_text(v)}" for a, v in zip(split_axes, combo))
        what = "variant" if series == "variant" else series
        title = f"{experiment + ': ' if experiment else ''}how does each {what}'s time grow with {x_axis}?"
        title = title + (f" ({slice_text})" if slice_text else "") + f" — run {run}"
        fig.suptitle(title, fontsize=12)
        fig.tight_layout(rect=(0, 0, width / (width + 2.6), 0.95))
        stem = spec.get("name") or f"time_vs_{x_axis}_run{run}"
        name = safe(f"{stem}_" + "_".join(axis_text(v) for v in combo)).rstrip("_") + ".png"
        fig.savefig(os.path.join(out_dir, name), dpi=110)
        plt.close(fig)
        plots.append({"file": name, "title": title})


def roofline_figures(rows, out_dir, colours, ceilings, marker_axis, plots):
    """Per run with calibrated ceilings: the points on the roofline, one marker per value of `marker_axis`."""
    by_run = {str(c["run"]): c for c in ceilings.get("runs", [])}
    for run in sorted({r["run"] for r in rows}, key=int):
        c = by_run.get(run, {})
        memory = c.get("memory_bandwidth_Bps")
        compute = c.get("compute_flop_per_s")
        pts = [r for r in rows if r["run"] == run and (number(r["arithmetic_intensity_flop_per_byte"]) or 0) > 0
               and (number(r["flop_per_s"]) or 0) > 0]
        if not memory or not compute or not pts:
            continue
        fig, ax = plt.subplots(figsize=(14, 7.5))
        marks = sorted({column(r, marker_axis) if marker_axis else "" for r in pts}, key=sort_key)
        for variant in [v for v in colours if any(r["variant"] == v for r in pts)]:
            for m, mark in enumerate(marks):
                sel = [r for r in pts if r["variant"] == variant
                       and (column(r, marker_axis) if marker_axis else "") == mark]
                if sel:
                    ax.scatter([number(r["arithmetic_intensity_flop_per_byte"]) for r in sel],
                               [number(r["flop_per_s"]) for r in sel], s=18, alpha=0.75, color=colours[variant],
                               marker=MARKERS[m % len(MARKERS)], edgecolors="none")
        # Labels: each variant's point nearest its roof, numbered on the plot and named in the legend (the axes that
        # vary), and every point above its roof (a ceiling too low, or traffic the cost model does not count), starred.
        varying = [k for k in pts[0] if k.startswith("axis.") and k[5:] != marker_axis
                   and len({r.get(k, "") for r in pts}) > 1]

        def where(r):
            return ", ".join(f"{k[5:]}={r[k]}" for k in varying)

        best_labels = []
        for i, variant in enumerate([v for v in colours if any(r["variant"] == v for r in pts)]):
            sel = [r for r in pts if r["variant"] == variant]
            best = max(sel, key=lambda r: number(r["fraction_of_roofline"]) or 0)
            frac = number(best["fraction_of_roofline"]) or 0
            xy = (number(best["arithmetic_intensity_flop_per_byte"]), number(best["flop_per_s"]))
            ax.scatter([xy[0]], [xy[1]], s=90, facecolors="none", edgecolors=colours[variant], linewidths=1.4)
            ax.annotate(str(i + 1), xy, xytext=(5, 4), textcoords="offset points", fontsize=9, weight="bold",
                        color=colours[variant])
            best_labels.append(Line2D([], [], color=colours[variant], marker="o", markerfacecolor="none",
                                      linestyle="", label=f"{i + 1}: {variant} nearest its roof, {100 * frac:.0f}%"
                                      f"\n    ({where(best)})"))
        above = [r for r in pts if (number(r["fraction_of_roofline"]) or 0) > 1]
        if above:
            ax.scatter([number(r["arithmetic_intensity_flop_per_byte"]) for r in above],
                       [number(r["flop_per_s"]) for r in above], s=120, marker="*", facecolors="none",
                       edgecolors="black", linewidths=1.0)
            for r in above[:8]:
                ax.annotate(f"above its roof ({100 * number(r['fraction_of_roofline']):.0f}%): {r['variant']}",
                            (number(r["arithmetic_intensity_flop_per_byte"]), number(r["flop_per_s"])),
                            xytext=(6, 6), textcoords="offset points", fontsize=7)
        ai = [number(r["arithmetic_intensity_flop_per_byte"]) for r in pts]
        lo, hi = min(ai) / 3, max(max(ai) * 3, compute / memory * 3)
        xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        ridge = compute / memory
        source = c.get("memory_source", "memory")
        ax.plot(xs, [min(memory * x, compute) for x in xs], color="black", linewidth=1.6)
        # The top left lies above the memory roof: no point can be there, so the roofs' legend goes there.
        ax.text(0.02, 0.97, f"memory roof: {memory / 1e12:.2f} TB/s ({source} ceiling) × intensity\n"
                f"compute roof: {compute / 1e12:.1f} TFLOP/s (FP32 FMA)\nridge point: {ridge:.3g} flop/B (dotted)",
                transform=ax.transAxes, va="top", fontsize=9,
                bbox={"facecolor": "white", "edgecolor": "0.8", "boxstyle": "round"})
        ax.axvline(ridge, color="0.6", linewidth=0.8, linestyle=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.grid(True, which="major", alpha=0.35)
        ax.set_xlabel("arithmetic intensity (flop per compulsory byte)")
        ax.set_ylabel("achieved FLOP/s")
        handles = [Line2D([], [], color=colours[v], marker="o", linestyle="", label=v)
                   for v in colours if any(r["variant"] == v for r in pts)]
        if len(marks) > 1:
            handles += [Line2D([], [], color="0.3", marker=MARKERS[m % len(MARKERS)], linestyle="",
                               label=f"{marker_axis} = {axis_text(mark)}") for m, mark in enumerate(marks)]
        if above:
            handles.append(Line2D([], [], color="black", marker="*", markerfacecolor="none", linestyle="",
                                  markersize=11, label=f"above its roof ({len(above)})"))
        handles += best_labels
        ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=9, frameon=False)
        device = c.get("device") or ""
        title = (f"Roofline: how close is each point to what {device or 'the GPU'} can do at its intensity? "
                 f"({c.get('experiment') or 'run ' + run}, run {run})")
        ax.set_title(title, fontsize=12)
        fig.tight_layout()
        name = f"roofline_run{run}.png"
        fig.savefig(os.path.join(out_dir, name), dpi=110)
        plt.close(fig)
        plots.append({"file": name, "title": title})


def hypotheses_figure(hypotheses, out_dir, plots):
    """Per run with hypotheses: one panel per hypothesis, each matched point's ratio time(than) / time(faster)
    against the run's size axis (or in order), the threshold as a dashed line, points that reach it filled."""
    by_run = {}
    for h in hypotheses:
        by_run.setdefault(h["run"], []).append(h)
    for run, hs in sorted(by_run.items()):
        n = len(hs)
        ncols = min(3, n)
        nrows = math.ceil(n / ncols)
        fig, grid = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.6 * nrows + 0.8), squeeze=False)
        for k, h in enumerate(hs):
            ax = grid[k // ncols][k % ncols]
            pts = [p for p in h["points"] if isinstance(p.get("ratio"), (int, float)) and p["ratio"] > 0]
            x_axis = h.get("x") or ""
            xs = [number(axis_text(p["axes"].get(x_axis))) if x_axis else None for p in pts]
            if not pts or any(x is None for x in xs):
                xs = list(range(len(pts)))
                x_axis = "matched point"
            for passed, colour in ((True, "#2ca02c"), (False, "#d62728")):
                sel = [(x, p["ratio"]) for x, p in zip(xs, pts) if bool(p.get("passed")) == passed]
                if sel:
                    ax.scatter([x for x, _ in sel], [r for _, r in sel], s=22, color=colour, alpha=0.8,
                               label="reaches it" if passed else "falls short")
            if isinstance(h.get("by_at_least"), (int, float)):
                ax.axhline(h["by_at_least"], color="black", linestyle="--", linewidth=1.2,
                           label=f"threshold {h['by_at_least']:g}×")
            ax.axhline(1.0, color="0.6", linewidth=0.8)
            if xs and x_axis != "matched point" and min(xs) > 0 and max(xs) / min(xs) >= 16:
                ax.set_xscale("log", base=2 if power_of_two(xs) else 10)
                label_log_axis(ax.xaxis, xs, "")
            ax.set_yscale("log")
            ratios = [p["ratio"] for p in pts] + [h.get("by_at_least") or 1, 1]
            label_log_axis(ax.yaxis, ratios, "")
            ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}×"))
            ax.set_xlabel(x_axis)
            ax.set_ylabel(f"time({h['than']}) / time({h['faster']})")
            ax.set_title(f"H{h['number']}: is {h['faster']} ≥ {h.get('by_at_least', 1):g}× faster than {h['than']}?\n"
                         f"{h.get('verdict')}: {sum(bool(p.get('passed')) for p in pts)} of {len(pts)} points reach it",
                         fontsize=10)
            ax.grid(True, which="major", alpha=0.35)
            ax.legend(fontsize=8, loc="best")
        for k in range(n, nrows * ncols):
            grid[k // ncols][k % ncols].set_visible(False)
        title = f"Do the config's hypotheses hold? (run {run})"
        fig.suptitle(title, fontsize=12)
        fig.tight_layout(rect=(0, 0, 1, 0.95))
        name = f"hypotheses_run{run}.png"
        fig.savefig(os.path.join(out_dir, name), dpi=110)
        plt.close(fig)
        plots.append({"file": name, "title": title})


def winners_figure(spec, out_dir, colours, plots):
    """A heatmap of which variant is fastest where: `cols` across, `rows` down; each cell the most frequent winner of
    its groups (the other axes pooled), coloured by variant, pale where its margin is within the noise, with the
    winner's name and its margin over the runner-up."""
    cols_axis, rows_axis = spec.get("cols") or "", spec.get("rows") or ""
    groups = spec["groups"]
    key = lambda g, a: axis_text(g["axes"].get(a)) if a else ""  # noqa: E731
    cols = sorted({key(g, cols_axis) for g in groups}, key=sort_key)
    rows = sorted({key(g, rows_axis) for g in groups}, key=sort_key)
    fig, ax = plt.subplots(figsize=(min(2.0 + 1.5 * len(cols), 18), min(1.6 + 0.55 * len(rows), 14)))
    from matplotlib.colors import to_rgba
    image = [[(1, 1, 1, 1)] * len(cols) for _ in rows]
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            cell = [g for g in groups if key(g, rows_axis) == r and key(g, cols_axis) == c]
            if not cell:
                continue
            counts = {}
            for g in cell:
                counts[g["winner"]] = counts.get(g["winner"], 0) + 1
            winner = max(counts, key=lambda w: (counts[w], w))
            margins = sorted(g["margin_ratio"] for g in cell if g["winner"] == winner
                             and isinstance(g.get("margin_ratio"), (int, float)))
            significant = sum(bool(g.get("significant")) for g in cell if g["winner"] == winner) * 2 >= counts[winner]
            image[i][j] = to_rgba(colours.get(winner, "0.5"), 0.75 if significant else 0.25)
            text = winner + (f"\n{margins[len(margins) // 2]:.2f}×" if margins else "")
            if len(cell) > 1:
                text += f"\n{counts[winner]}/{len(cell)}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7)
    ax.imshow(image, aspect="auto")
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel(cols_axis)
    ax.set_ylabel(rows_axis)
    experiment = spec.get("experiment") or ""
    title = (f"{experiment + ': ' if experiment else ''}which variant is fastest where? (run {spec['run']})\n"
             "margin over the runner-up; pale: within the noise; k/n: wins of the cell's groups (other axes pooled)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    name = f"winners_run{spec['run']}.png"
    fig.savefig(os.path.join(out_dir, name), dpi=110)
    plt.close(fig)
    plots.append({"file": name, "title": title.split("\n")[0]})


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: plot_report.py OUT  |  plot_report.py OUT/points.csv OUT", file=sys.stderr)
        return 2
    out_dir = argv[-1]
    spec_path = os.path.join(out_dir, "plots.json")
    spec = {}
    if os.path.exists(spec_path):
        with open(spec_path) as f:
            spec = json.load(f)
    if not isinstance(spec, dict):  # a list of drawn plots from an older labrun: no specs
        spec = {}
    csv_path = argv[1] if len(argv) == 3 else os.path.join(out_dir, spec.get("points") or "points.csv")
    rows, usable, _ = load(csv_path)
    ceilings_path = os.path.join(os.path.dirname(os.path.abspath(csv_path)), spec.get("ceilings") or "ceilings.json")
    ceilings = {}
    if os.path.exists(ceilings_path):
        with open(ceilings_path) as f:
            ceilings = json.load(f)
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    variants = []
    for r in rows:
        if r["variant"] not in variants:
            variants.append(r["variant"])
    colours = {v: cycle[i % len(cycle)] for i, v in enumerate(variants)}
    plots = []
    cap = spec.get("max_time_plots") or 0
    budget = {"left": cap if cap > 0 else None, "not_drawn": 0}
    for figure in spec.get("figures") or []:
        time_figure(figure, usable, out_dir, colours, plots, budget)
    spec["not_drawn"] = budget["not_drawn"]
    roofline_figures(usable, out_dir, colours, ceilings, (spec.get("roofline") or {}).get("marker"), plots)
    hypotheses_figure(spec.get("hypotheses") or [], out_dir, plots)
    for w in spec.get("winners") or []:
        winners_figure(w, out_dir, colours, plots)
    spec["drawn"] = plots
    tmp = spec_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")
    os.replace(tmp, spec_path)
    for p in plots:
        print(p["file"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
