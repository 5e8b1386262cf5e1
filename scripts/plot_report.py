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

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.lines import Line2D  # noqa: E402

LINE_STYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P", "X"]


def number(text):
    """A float from a CSV cell, or None when empty or not a number."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


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


def loop_time(row):
    """Seconds per loop iteration: the CSV's iteration_time_s (the host's submission time where an eager loop
    is host-paced, else the GPU time), or time_s in CSVs written before that column existed."""
    t = number(row.get("iteration_time_s", ""))
    return t if t is not None and t > 0 else number(row["time_s"])


def column(row, name):
    """The value of `name` in a CSV row: the variant for "variant", else the axis column."""
    return row["variant"] if name == "variant" else row.get("axis." + name, "")


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
        fig, grid = plt.subplots(nrows, ncols, figsize=(width, 3.0 * nrows + 1.1), squeeze=False,
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
                pts.sort(key=lambda r: number(column(r, x_axis)))
                if not pts:
                    continue
                ax.plot([number(column(r, x_axis)) for r in pts], [loop_time(r) for r in pts],
                        LINE_STYLES[s % len(LINE_STYLES)], marker=".", color=line_colour[line], linewidth=1.4,
                        markersize=5)
            if log_x:
                ax.set_xscale("log")
            ax.set_yscale("log")
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
        handles = [Line2D([], [], color=line_colour[v], linewidth=2, label=label(v)) for v in lines]
        if style_axis:
            handles += [Line2D([], [], color="0.3", linestyle=LINE_STYLES[s % len(LINE_STYLES)],
                               label=f"{style_axis} = {axis_text(v)}") for s, v in enumerate(styles)]
        per_row = min(len(handles), max(3, int(width / 1.9)))
        fig.legend(handles=handles, loc="lower center", ncol=per_row, fontsize=9, frameon=False)
        slice_text = ", ".join(f"{a} = {axis_text(v)}" for a, v in zip(split_axes, combo))
        title = spec.get("title") or f"time vs {x_axis}"
        title = title + (f", {slice_text}" if slice_text else "") + f" (run {run})"
        fig.suptitle(title, fontsize=12)
        legend_rows = math.ceil(len(handles) / per_row) if handles else 0
        fig.tight_layout(rect=(0, (0.05 if nrows > 1 else 0.09) * legend_rows + 0.02, 1, 0.97))
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
        fig, ax = plt.subplots(figsize=(10, 7))
        marks = sorted({column(r, marker_axis) if marker_axis else "" for r in pts}, key=sort_key)
        for variant in [v for v in colours if any(r["variant"] == v for r in pts)]:
            for m, mark in enumerate(marks):
                sel = [r for r in pts if r["variant"] == variant
                       and (column(r, marker_axis) if marker_axis else "") == mark]
                if sel:
                    ax.scatter([number(r["arithmetic_intensity_flop_per_byte"]) for r in sel],
                               [number(r["flop_per_s"]) for r in sel], s=18, alpha=0.75, color=colours[variant],
                               marker=MARKERS[m % len(MARKERS)], edgecolors="none")
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
        ax.legend(handles=handles, loc="lower right", ncol=2, fontsize=9)
        device = c.get("device") or ""
        title = f"Roofline: {c.get('experiment') or 'run ' + run} on {device} (run {run})"
        ax.set_title(title, fontsize=12)
        fig.tight_layout()
        name = f"roofline_run{run}.png"
        fig.savefig(os.path.join(out_dir, name), dpi=110)
        plt.close(fig)
        plots.append({"file": name, "title": title})


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
