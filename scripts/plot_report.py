#!/usr/bin/env python3
"""Plots for `labrun report`: reads the report's points.csv (and ceilings.json beside it) and writes PNGs into an
output folder, listed with their titles in plots.json there.

    python3 scripts/plot_report.py OUT/points.csv OUT

Figures (per run and experiment; points that are not ok or are suspect are left out):
- time_vs_<axis>_*.png: median time per iteration against `n` and against `density` (log-log), one panel per
  value of the other of the two axes, one colour per variant, one line style per `downstream` value (or, without
  it, per value of another varying axis with at most four values, e.g. `l2`); one figure per combination of the
  remaining varying axes (mode, dtype, ...).
- roofline_run<R>.png: achieved FLOP/s against arithmetic intensity (flop per compulsory byte), with the memory
  roof (calibrated memory ceiling × intensity) and the FP32 compute roof (Williams, Waterman and Patterson,
  "Roofline", CACM 2009).

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


def varying_axes(rows, axes):
    return [a for a in axes if len({r["axis." + a] for r in rows}) > 1]


def time_figures(rows, axes, out_dir, colours, plots):
    """Time against `n` (panels by density) and against `density` (panels by n)."""
    runs = sorted({(r["run"], r["experiment"]) for r in rows}, key=lambda k: (int(k[0]), k[1]))
    for run, experiment in runs:
        run_rows = [r for r in rows if r["run"] == run and r["experiment"] == experiment]
        vary = varying_axes(run_rows, axes)
        for x_axis, facet_axis in (("n", "density"), ("density", "n")):
            if x_axis not in vary:
                continue
            # Line style: `downstream` if it varies, else the first other varying axis with a few values.
            others = [a for a in vary if a not in (x_axis, facet_axis)]
            few = [a for a in others if len({r["axis." + a] for r in run_rows}) <= len(LINE_STYLES)]
            style_axis = "downstream" if "downstream" in others else (few[0] if few else None)
            used = {x_axis, facet_axis, style_axis}
            split_axes = [a for a in vary if a not in used]
            combos = sorted({tuple(r["axis." + a] for a in split_axes) for r in run_rows}, key=lambda t: [sort_key(v) for v in t])
            for combo in combos:
                subset = [r for r in run_rows if tuple(r["axis." + a] for a in split_axes) == combo]
                if len({r["axis." + x_axis] for r in subset}) < 2:
                    continue
                facets = sorted({r["axis." + facet_axis] for r in subset}, key=sort_key) if facet_axis in vary else [None]
                styles = sorted({r["axis." + style_axis] for r in subset}, key=sort_key) if style_axis else [None]
                variants = [v for v in colours if any(r["variant"] == v for r in subset)]
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
                    for variant, (s, style) in itertools.product(variants, enumerate(styles)):
                        pts = [r for r in subset if r["variant"] == variant
                               and (facet is None or r["axis." + facet_axis] == facet)
                               and (style is None or r["axis." + style_axis] == style)]
                        pts.sort(key=lambda r: number(r["axis." + x_axis]))
                        if not pts:
                            continue
                        ax.plot([number(r["axis." + x_axis]) for r in pts], [loop_time(r) for r in pts],
                                LINE_STYLES[s % len(LINE_STYLES)], marker=".", color=colours[variant], linewidth=1.4,
                                markersize=5)
                    ax.set_xscale("log")
                    ax.set_yscale("log")
                    ax.grid(True, which="major", alpha=0.35)
                    ax.grid(True, which="minor", alpha=0.12)
                    if facet is not None:
                        ax.set_title(f"{facet_axis} = {axis_text(facet)}", fontsize=10)
                for k in range(len(facets), nrows * ncols):
                    grid[k // ncols][k % ncols].set_visible(False)
                for row in grid:
                    row[0].set_ylabel("median time per iteration (s)")
                for ax in grid[-1]:
                    ax.set_xlabel(x_axis)
                handles = [Line2D([], [], color=colours[v], linewidth=2, label=v) for v in variants]
                if style_axis:
                    handles += [Line2D([], [], color="0.3", linestyle=LINE_STYLES[s % len(LINE_STYLES)],
                                       label=f"{style_axis} = {axis_text(v)}") for s, v in enumerate(styles)]
                fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), max(3, int(width / 1.9))),
                           fontsize=9, frameon=False)
                where = ", ".join(f"{a} = {axis_text(v)}" for a, v in zip(split_axes, combo))
                title = f"{experiment}: time vs {x_axis}" + (f", {where}" if where else "") + f" (run {run})"
                fig.suptitle(title, fontsize=12)
                legend_rows = math.ceil(len(handles) / min(len(handles), max(3, int(width / 1.9))))
                fig.tight_layout(rect=(0, (0.05 if nrows > 1 else 0.09) * legend_rows + 0.02, 1, 0.97))
                name = safe(f"time_vs_{x_axis}_run{run}_" + "_".join(axis_text(v) for v in combo)).rstrip("_") + ".png"
                fig.savefig(os.path.join(out_dir, name), dpi=110)
                plt.close(fig)
                plots.append({"file": name, "title": title})


def roofline_figures(rows, out_dir, colours, ceilings, plots):
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
        modes = sorted({r.get("axis.mode", "") for r in pts})
        for variant in [v for v in colours if any(r["variant"] == v for r in pts)]:
            for m, mode in enumerate(modes):
                sel = [r for r in pts if r["variant"] == variant and r.get("axis.mode", "") == mode]
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
        if len(modes) > 1:
            handles += [Line2D([], [], color="0.3", marker=MARKERS[m % len(MARKERS)], linestyle="",
                               label=f"mode = {mode}") for m, mode in enumerate(modes)]
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
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    csv_path, out_dir = argv[1], argv[2]
    rows, usable, axes = load(csv_path)
    ceilings_path = os.path.join(os.path.dirname(os.path.abspath(csv_path)), "ceilings.json")
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
    time_figures(usable, axes, out_dir, colours, plots)
    roofline_figures(usable, out_dir, colours, ceilings, plots)
    with open(os.path.join(out_dir, "plots.json"), "w") as f:
        json.dump(plots, f, indent=2)
    for p in plots:
        print(p["file"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
