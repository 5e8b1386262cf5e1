// labrun's HTML views (docs/html.md): the report (`labrun report -o DIR` -> DIR/index.html), the history (`labrun
// history -o DIR` -> DIR/index.html) and the diff (`labrun diff --format html -o FILE`). labrun writes each page as one
// file: this script and the charting library (Chart.js, Debian's libjs-chart.js) inline, and the data as JSON in
// <script id="labrun-data" type="application/json">. Nothing is fetched at view time: the page's
// Content-Security-Policy allows no request at all. Times are seconds in the data and shown with SI prefixes.
/* global Chart */
"use strict";

(function () {
  const data = JSON.parse(document.getElementById("labrun-data").textContent);
  const root = document.getElementById("labrun");
  const haveCharts = typeof Chart !== "undefined";
  // matplotlib's default colour cycle (tab10), in the same first-seen order as the PNGs, so a variant has one colour.
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                   "#bcbd22", "#17becf"];
  if (haveCharts) {
    Chart.defaults.animation = false;
    Chart.defaults.font.size = 12;
    Chart.defaults.plugins.legend.position = "right";
  }

  // ---- helpers -------------------------------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
    return e;
  }
  function finite(x) { return typeof x === "number" && isFinite(x); }
  function si(x, unit, digits) {
    if (!finite(x)) return "n/a";
    const a = Math.abs(x);
    const steps = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""], [1e-3, "m"], [1e-6, "µ"], [1e-9, "n"]];
    for (const [f, p] of steps) if (a >= f * 0.9995 || f === 1e-9) return (x / f).toPrecision(digits || 3) + " " + p + unit;
    return x.toPrecision(3) + " " + unit;
  }
  const time = (s) => si(s, "s");
  const pct = (f) => (finite(f) ? (100 * f).toFixed(1) + "%" : "n/a");
  const ratio = (r) => (finite(r) ? r.toFixed(3) + "×" : "n/a");
  function axesText(axes, keys) {
    return (keys || Object.keys(axes || {})).filter((k) => axes && k in axes).map((k) => k + "=" + axes[k]).join(", ");
  }
  function section(title, id) {
    const s = el("section", { id: id || "" }, el("h2", {}, title));
    root.append(s);
    return s;
  }
  function table(head, rows) {
    const t = el("table", {}, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))));
    const b = el("tbody");
    for (const r of rows) b.append(el("tr", {}, ...r.map((c) => (c instanceof Node && c.tagName === "TD" ? c : el("td", {}, c)))));
    t.append(b);
    return t;
  }
  function chartBox(height) {
    const c = el("canvas");
    const box = el("div", { class: "chart", style: "height:" + (height || 360) + "px" }, c);
    return [box, c];
  }
  function noCharts(parent) {
    parent.append(el("p", { class: "warn" }, "The charting library was not found when this page was written " +
      "(Debian: libjs-chart.js); the tables below hold the same numbers."));
  }
  const colorOf = (() => {
    const m = new Map();
    return (name) => { if (!m.has(name)) m.set(name, PALETTE[m.size % PALETTE.length]); return m.get(name); };
  })();
  function alpha(hex, a) {
    const n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
  }
  // A numeric axis is drawn on a log scale when its values are positive and span at least 16× (powers of two,
  // decades); the same rule as report.md's plots.
  function logScale(values) {
    const v = values.filter(finite);
    return v.length > 1 && Math.min(...v) > 0 && Math.max(...v) / Math.min(...v) >= 16;
  }
  function logTicks(value) {
    const e = Math.log10(value);
    if (Math.abs(e - Math.round(e)) < 1e-9) return si(value, "").trim();
    const l2 = Math.log2(value);
    if (Math.abs(l2 - Math.round(l2)) < 1e-9 && value >= 1) return "2^" + Math.round(l2);
    const lead = value / Math.pow(10, Math.floor(e));
    return Math.abs(lead - 2) < 1e-9 || Math.abs(lead - 5) < 1e-9 ? si(value, "").trim() : null;
  }
  function envList(pairs) {
    const dl = el("dl");
    for (const [k, v] of pairs) if (v !== undefined && v !== null && v !== "") dl.append(el("dt", {}, k), el("dd", {}, v));
    return dl;
  }

  // ---- the report ----------------------------------------------------------------------------------------------
  function report() {
    document.title = data.title;
    root.append(el("h1", {}, data.title));
    root.append(el("p", {}, "From " + data.sources.join(", ") + ": " + data.runs.length + (data.runs.length === 1 ? " run, " : " runs, ") +
      data.points.length + " points. Every number here is in the records; report.md holds the same for a pull request."));
    const points = data.points;
    points.forEach((p, i) => { p.index = i; });

    // Summary and environment.
    const sum = section("Summary and environment", "summary");
    for (const r of data.runs) {
      sum.append(el("h3", {}, "Run " + r.run + ": " + r.file + (r.experiment ? " (" + r.experiment + ")" : "")));
      sum.append(envList([["device", r.device], ["driver", r.driver], ["backend", r.backend], ["code under test", r.code],
        ["tool", r.tool], ["created", r.created_utc], ["lab settings", r.lab], ["statuses", r.statuses],
        ["ceilings", r.ceilings_text]]));
      if (r.warnings.length) sum.append(el("ul", { class: "warn" }, ...r.warnings.map((w) => el("li", {}, w))));
    }

    // Filters: a variant set and a value per varying axis; every view below reads them.
    const allAxes = [...new Set(data.runs.flatMap((r) => r.varying))];
    const variants = [...new Set(points.map((p) => p.variant))];
    variants.forEach(colorOf);
    // Several runs are never pooled by default: the first is shown, the selector picks another or all of them.
    const filter = { variants: new Set(variants), axes: {}, run: data.runs.length > 1 ? String(data.runs[0].run) : "" };
    const fsec = section("Filters", "filters");
    if (data.runs.length > 1) {
      const rsel = el("select", {}, el("option", { value: "" }, "all runs (pooled)"),
        ...data.runs.map((r) => el("option", { value: String(r.run) }, "run " + r.run + ": " + r.file)));
      rsel.value = filter.run;
      rsel.addEventListener("change", () => { filter.run = rsel.value; redraw(); });
      fsec.append(el("div", { class: "filters" }, el("label", {}, "run ", rsel)));
    }
    const vbox = el("div", { class: "filters" }, "variants: ");
    for (const v of variants) {
      const cb = el("input", { type: "checkbox", checked: "" });
      cb.addEventListener("change", () => { cb.checked ? filter.variants.add(v) : filter.variants.delete(v); redraw(); });
      vbox.append(el("label", { style: "color:" + colorOf(v) }, cb, v));
    }
    fsec.append(vbox);
    const abox = el("div", { class: "filters" });
    for (const a of allAxes) {
      const values = [...new Set(points.filter((p) => p.axes && a in p.axes).map((p) => String(p.axes[a])))];
      const sel = el("select", {}, el("option", { value: "" }, "all"), ...values.map((v) => el("option", { value: v }, v)));
      sel.addEventListener("change", () => { filter.axes[a] = sel.value; redraw(); });
      abox.append(el("label", {}, a + " ", sel));
    }
    fsec.append(abox);
    const inRun = (x) => !filter.run || String(x.run) === filter.run;
    const shown = (p) => inRun(p) && filter.variants.has(p.variant) &&
      Object.entries(filter.axes).every(([a, v]) => !v || !(p.axes && a in p.axes) || String(p.axes[a]) === v);

    // Hypotheses: each one's measured ratio range against its threshold.
    if (data.hypotheses.length) {
      const hs = section("Hypotheses: measured ratio against the threshold", "hypotheses");
      hs.append(el("p", {}, "Per hypothesis, time(than) / time(faster) over its matched points: the bar spans the smallest to the largest, " +
        "the dot is the median, the black mark the threshold it must reach (by_at_least)."));
      if (haveCharts) {
        const [box, canvas] = chartBox(70 + 46 * data.hypotheses.length);
        hs.append(box);
        const labels = data.hypotheses.map((h) => "H" + h.number + (data.runs.length > 1 ? " (run " + h.run + ")" : "") + ": " + h.faster + " vs " + h.than);
        new Chart(canvas, {
          type: "bar",
          data: {
            labels,
            datasets: [
              { type: "bar", label: "ratio range (min to max)", data: data.hypotheses.map((h) => [h.ratio_min, h.ratio_max]),
                backgroundColor: data.hypotheses.map((h) => alpha(h.verdict === "confirmed" ? "#2ca02c" : h.verdict === "refuted" ? "#d62728" : "#7f7f7f", 0.5)) },
              { type: "scatter", label: "median ratio", data: data.hypotheses.map((h, i) => ({ x: h.ratio_median, y: labels[i] })),
                backgroundColor: "#000", pointRadius: 5 },
              { type: "scatter", label: "threshold", data: data.hypotheses.map((h, i) => ({ x: h.by_at_least, y: labels[i] })),
                pointStyle: "line", rotation: 90, pointRadius: 14, borderWidth: 3, borderColor: "#000" },
            ],
          },
          options: { indexAxis: "y", maintainAspectRatio: false,
            plugins: { title: { display: true, text: "Does each hypothesis reach its threshold?" } },
            scales: { x: { type: "logarithmic", title: { display: true, text: "time(than) / time(faster)" },
              min: Math.min(...data.hypotheses.flatMap((h) => [h.ratio_min, h.by_at_least]).filter(finite)) / 1.1,
              max: Math.max(...data.hypotheses.flatMap((h) => [h.ratio_max, h.by_at_least]).filter(finite)) * 1.1,
              ticks: { callback: (v) => (logTicks(v) !== null ? ratio(v) : null) } } } },
        });
      } else noCharts(hs);
      hs.append(table(["hypothesis", "when", "threshold", "verdict", "matched", "passed", "ratio min / median / max", "reason"],
        data.hypotheses.map((h) => ["H" + h.number + ": " + h.faster + " faster than " + h.than, h.when_text, ratio(h.by_at_least),
          h.verdict + (h.host_verdict ? " (host: " + h.host_verdict + ")" : ""), h.matched, h.passed,
          ratio(h.ratio_min) + " / " + ratio(h.ratio_median) + " / " + ratio(h.ratio_max), h.reason])));
    }

    // Winner map over two axes.
    const wsec = section("Which variant wins where", "winners");
    const wctl = el("div", { class: "filters" });
    const wbody = el("div");
    wsec.append(el("p", {}, "The fastest variant of each group (the points with the same axes), coloured by variant; the number is how much " +
      "faster it is than the runner-up (time(runner-up) / time(winner)); pale where their 95% intervals overlap. Axes not on the map " +
      "follow the filters above; where several groups share a cell, the cell names the most frequent winner and the count."), wctl, wbody);
    const numericAxes = allAxes.filter((a) => points.every((p) => !(p.axes && a in p.axes) || typeof p.axes[a] === "number"));
    const mapAxes = allAxes.length ? allAxes : [];
    const sizeAxis = (data.runs.find((r) => r.size_axis) || {}).size_axis || numericAxes[0] || mapAxes[0] || "";
    const pick = { cols: sizeAxis, rows: mapAxes.find((a) => a !== sizeAxis) || "" };
    for (const which of ["rows", "cols"]) {
      const sel = el("select", {}, el("option", { value: "" }, "none"), ...mapAxes.map((a) => el("option", { value: a }, a)));
      sel.value = pick[which];
      sel.addEventListener("change", () => { pick[which] = sel.value; drawWinners(); });
      wctl.append(el("label", {}, which + " ", sel));
    }
    function drawWinners() {
      wbody.replaceChildren();
      const groups = data.groups.filter((g) => inRun(g) && Object.entries(filter.axes).every(([a, v]) => !v || a === pick.rows || a === pick.cols ||
        !(a in g.axes) || String(g.axes[a]) === v) && filter.variants.has(g.winner));
      if (!groups.length) { wbody.append(el("p", {}, "No group with a winner under these filters.")); return; }
      const sortVals = (vals) => vals.sort((a, b) => (typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b))));
      const rv = pick.rows ? sortVals([...new Set(groups.map((g) => g.axes[pick.rows]))]) : [""];
      const cv = pick.cols ? sortVals([...new Set(groups.map((g) => g.axes[pick.cols]))]) : [""];
      const t = el("table", { class: "map" });
      t.append(el("tr", {}, el("th", {}, (pick.rows || "") + " \\ " + (pick.cols || "")), ...cv.map((c) => el("th", {}, c))));
      for (const r of rv) {
        const tr = el("tr", {}, el("th", {}, r));
        for (const c of cv) {
          const cell = groups.filter((g) => (!pick.rows || g.axes[pick.rows] === r) && (!pick.cols || g.axes[pick.cols] === c));
          if (!cell.length) { tr.append(el("td", {}, "–")); continue; }
          const count = new Map();
          for (const g of cell) count.set(g.winner, (count.get(g.winner) || 0) + 1);
          const [w, n] = [...count.entries()].sort((a, b) => b[1] - a[1])[0];
          const g0 = cell.find((g) => g.winner === w);
          const td = el("td", { style: "background:" + alpha(colorOf(w), g0.significant ? 0.55 : 0.18),
            title: cell.map((g) => axesText(g.axes) + ": " + g.winner + " " + ratio(g.margin_ratio) + " over " + g.runner_up).join("\n") },
            w, el("br"), cell.length > 1 ? n + " of " + cell.length : ratio(g0.margin_ratio));
          tr.append(td);
        }
        t.append(tr);
      }
      wbody.append(t);
    }

    // Time against the size axis, one line per variant and combination of the other axes.
    const tsec = section("Time against " + (sizeAxis || "the size axis"), "time");
    tsec.append(el("p", {}, "Median time per loop iteration with its 95% interval as a band; one line per variant and per combination " +
      "of the other axes (never one line across different values of another axis). Use the filters to fix axes."));
    const tbox = el("div");
    tsec.append(tbox);
    let timeChart = null;
    function drawTime() {
      if (!haveCharts) { tbox.replaceChildren(); noCharts(tbox); return; }
      if (!sizeAxis) { tbox.replaceChildren(el("p", {}, "No numeric axis to draw against.")); return; }
      const others = allAxes.filter((a) => a !== sizeAxis);
      // Axes the filters leave open are held at their first value, so a line never joins different values of one.
      const held = {};
      for (const a of others) if (!filter.axes[a]) {
        const v = points.find((p) => p.axes && a in p.axes);
        if (v) held[a] = String(v.axes[a]);
      }
      const sel = points.filter((p) => shown(p) && p.status === "ok" && !p.suspect && finite(p.time_s) && p.axes && typeof p.axes[sizeAxis] === "number" &&
        Object.entries(held).every(([a, v]) => !(a in p.axes) || String(p.axes[a]) === v));
      const lines = new Map();
      for (const p of sel) {
        const k = (!filter.run && data.runs.length > 1 ? "run " + p.run + " · " : "") + p.variant;
        if (!lines.has(k)) lines.set(k, { variant: p.variant, pts: [] });
        lines.get(k).pts.push(p);
      }
      const keys = [...lines.keys()];
      if (!keys.length) { tbox.replaceChildren(el("p", {}, "No point under these filters ran ok with a time: nothing to draw.")); return; }
      const datasets = [];
      const dashes = [[], [6, 3], [2, 2], [8, 3, 2, 3]];
      keys.slice(0, 48).forEach((k, i) => {
        const l = lines.get(k);
        l.pts.sort((a, b) => a.axes[sizeAxis] - b.axes[sizeAxis]);
        const c = colorOf(l.variant);
        const dash = dashes[keys.filter((x, j) => j < i && lines.get(x).variant === l.variant).length % dashes.length];
        datasets.push({ label: k, data: l.pts.map((p) => ({ x: p.axes[sizeAxis], y: p.time_s, p })), borderColor: c, backgroundColor: c,
          borderDash: dash, pointRadius: 3, fill: false });
        datasets.push({ label: k + " (95% interval)", band: true, data: l.pts.map((p) => ({ x: p.axes[sizeAxis], y: p.ci95_high_s })),
          borderWidth: 0, pointRadius: 0, backgroundColor: alpha(c, 0.18), fill: "+1" });
        datasets.push({ label: k + " (low)", band: true, data: l.pts.map((p) => ({ x: p.axes[sizeAxis], y: p.ci95_low_s })),
          borderWidth: 0, pointRadius: 0, fill: false });
      });
      tbox.replaceChildren();
      if (Object.keys(held).length)
        tbox.append(el("p", {}, "Held at: " + Object.entries(held).map(([a, v]) => a + "=" + v).join(", ") + " (choose other values with the filters above)."));
      if (keys.length > 48) tbox.append(el("p", { class: "warn" }, keys.length + " lines: the first 48 are drawn; fix an axis above to see the rest."));
      const [box, canvas] = chartBox(440);
      tbox.append(box);
      if (timeChart) timeChart.destroy();
      const xs = sel.map((p) => p.axes[sizeAxis]);
      timeChart = new Chart(canvas, {
        type: "line",
        data: { datasets },
        options: { maintainAspectRatio: false, parsing: true,
          plugins: { title: { display: true, text: "How does each variant's time grow with " + sizeAxis + "? (" + (axesText(Object.fromEntries(others.map((a) => [a, filter.axes[a] || held[a]]).filter(([, v]) => v))) || "every point") + ")" },
            legend: { labels: { filter: (item, d) => !d.datasets[item.datasetIndex].band } },
            tooltip: { filter: (item) => !item.dataset.band, callbacks: { label: (ctx) => {
              const p = ctx.raw.p; return ctx.dataset.label + ": " + time(p.time_s) + " [" + time(p.ci95_low_s) + ", " + time(p.ci95_high_s) + "]"; } } } },
          scales: {
            x: { type: logScale(xs) ? "logarithmic" : "linear", title: { display: true, text: sizeAxis },
              ticks: logScale(xs) ? { callback: (v) => logTicks(v) } : {} },
            y: { type: "logarithmic", title: { display: true, text: "time per iteration (s)" }, ticks: { callback: (v) => logTicks(v) !== null ? time(v) : null } },
          } },
      });
    }

    // Crossovers: where the faster of two variants changes along an axis.
    const csec = section("Crossovers (" + (data.crossovers || []).length + ")", "crossovers");
    csec.append(el("p", {}, "For each numeric axis, pair of variants and slice (the other axes fixed): where the faster of the two changes between " +
      "consecutive values, at the interpolated crossing. Significant: the 95% intervals are apart at both ends. Most decisive first (the smaller of the two end margins)."));
    const cbox = el("div");
    csec.append(cbox);
    function drawCrossovers() {
      const xs = (data.crossovers || []).filter((x) => inRun(x) && filter.variants.has(x.faster_below) && filter.variants.has(x.faster_above) &&
        Object.entries(filter.axes).every(([a, v]) => !v || !x.fixed || !(a in x.fixed) || String(x.fixed[a]) === v))
        .sort((a, b) => Math.min(b.ratio_below, b.ratio_above) - Math.min(a.ratio_below, a.ratio_above));
      cbox.replaceChildren(xs.length ? table(["axis", "between", "at ≈", "faster below → above", "margin below", "margin above", "significant", "other axes"],
        xs.slice(0, 1000).map((x) => [x.axis, x.between.join(" – "), finite(x.at) ? +x.at.toPrecision(3) : "", x.faster_below + " → " + x.faster_above,
          ratio(x.ratio_below), ratio(x.ratio_above), x.significant ? "yes" : "no", axesText(x.fixed)])) : el("p", {}, "None under these filters."));
    }

    // Roofline.
    const rsec = section("Roofline", "roofline");
    rsec.append(el("p", {}, "Achieved FLOP/s against arithmetic intensity (flop per compulsory byte) under min(memory ceiling × intensity, compute ceiling), " +
      "with the ceilings the run measured. Suspect points are crosses, points above their roof are stars; hover for the point. Points that do no " +
      "floating-point work have no place on it: their achieved bandwidth is in the point table."));
    const rbox = el("div");
    rsec.append(rbox);
    let roofChart = null;
    function drawRoofline() {
      rbox.replaceChildren();
      const roofed = data.runs.filter((r) => inRun(r) && finite(r.memory_Bps) && finite(r.compute_flop_per_s));
      if (!roofed.length) { rbox.append(el("p", {}, "No run shown measured both ceilings (the host backend has none): no roofline.")); return; }
      if (!haveCharts) { noCharts(rbox); return; }
      const roofRuns = new Set(roofed.map((r) => r.run));
      const sel = points.filter((p) => shown(p) && roofRuns.has(p.run) && p.status === "ok" && finite(p.intensity_flop_per_byte) && p.intensity_flop_per_byte > 0 && finite(p.flop_per_s) && p.flop_per_s > 0);
      if (!sel.length) { rbox.append(el("p", {}, "No point under these filters does floating-point work.")); return; }
      const ai = sel.map((p) => p.intensity_flop_per_byte);
      const ridges = roofed.map((r) => r.compute_flop_per_s / r.memory_Bps);
      const lo = Math.min(...ai, ...ridges) / 4, hi = Math.max(...ai, ...ridges) * 4;
      const datasets = roofed.map((run, i) => {
        const ridge = run.compute_flop_per_s / run.memory_Bps;
        return { type: "line", label: "roof of run " + run.run, data: [{ x: lo, y: lo * run.memory_Bps }, { x: ridge, y: run.compute_flop_per_s }, { x: hi, y: run.compute_flop_per_s }],
          borderColor: "#000", borderDash: [[], [6, 3], [2, 2]][i % 3], pointRadius: 0, borderWidth: 2 };
      });
      for (const v of variants) {
        const vp = sel.filter((p) => p.variant === v);
        if (!vp.length) continue;
        datasets.push({ type: "scatter", label: v, data: vp.map((p) => ({ x: p.intensity_flop_per_byte, y: p.flop_per_s, p })),
          backgroundColor: colorOf(v), borderColor: colorOf(v),
          pointStyle: vp.map((p) => (p.suspect ? "crossRot" : p.of_roofline > 1 ? "star" : "circle")),
          pointRadius: vp.map((p) => (p.suspect || p.of_roofline > 1 ? 8 : 4)), borderWidth: vp.map((p) => (p.suspect || p.of_roofline > 1 ? 2 : 1)) });
      }
      const [box, canvas] = chartBox(460);
      rbox.append(box);
      if (roofChart) roofChart.destroy();
      roofChart = new Chart(canvas, { type: "scatter", data: { datasets },
        options: { maintainAspectRatio: false,
          plugins: { title: { display: true, text: "How close is each point to what the GPU can do at its intensity?" },
            tooltip: { callbacks: { label: (ctx) => { const p = ctx.raw.p; if (!p) return ctx.dataset.label;
              return p.variant + " " + axesText(p.axes) + ": " + si(p.flop_per_s, "FLOP/s") + ", " + pct(p.of_roofline) + " of roof" + (p.suspect ? " (suspect)" : "") + (p.of_roofline > 1 ? " (above its roof)" : ""); } } } },
          scales: { x: { type: "logarithmic", title: { display: true, text: "arithmetic intensity (flop/B)" }, ticks: { maxRotation: 0, callback: (v) => { const e = Math.log10(v); return Math.abs(e - Math.round(e)) < 1e-9 ? String(+v.toPrecision(1)) : null; } } },
            y: { type: "logarithmic", title: { display: true, text: "achieved FLOP/s" }, ticks: { callback: (v) => (logTicks(v) !== null ? si(v, "FLOP/s") : null) } } } } });
    }

    // Failed and suspect points, then the warnings by kind.
    const flagged = points.filter((p) => p.failed || p.suspect);
    const xsec = section("Failed and suspect points (" + flagged.length + ")", "flagged");
    const notRun = new Map();
    for (const p of points) if (p.status !== "ok" && !p.failed) notRun.set(p.status, (notRun.get(p.status) || 0) + 1);
    if (notRun.size) xsec.append(el("p", {}, "Not run, by design (not failures): " + [...notRun.entries()].map(([k, n]) => n + " " + k).join(", ") + "; their reasons are in the point table."));
    if (!flagged.length) xsec.append(el("p", {}, "None: no point failed, and none is suspect."));
    else xsec.append(table(["variant", "point", "status", "why"], flagged.slice(0, 500).map((p) => [p.variant, axesText(p.axes),
      p.status + (p.suspect ? ", suspect" : ""), [p.reason, p.suspect_reason].filter(Boolean).join("; ")])));
    if (flagged.length > 500) xsec.append(el("p", {}, "The first 500 of " + flagged.length + " are listed."));
    const kinds = new Map();
    for (const p of points) for (const w of p.warnings) {
      if (!kinds.has(w.kind)) kinds.set(w.kind, { n: 0, example: p.variant + " " + axesText(p.axes) + ": " + w.message });
      kinds.get(w.kind).n++;
    }
    const wsec2 = section("Warnings by kind", "warnings");
    if (!kinds.size) wsec2.append(el("p", {}, "No point has a warning."));
    else wsec2.append(el("p", {}, "Each point's own warnings are in its drill-down below."),
      table(["warning", "points", "first example"], [...kinds.entries()].sort((a, b) => b[1].n - a[1].n).map(([k, v]) => [k, v.n, v.example])));

    // Every point, with a drill-down.
    const psec = section("Points", "points");
    psec.append(el("p", {}, "Click a row for its five-part note, kernels, correctness and warnings."));
    const pbody = el("div"), detail = el("div", { class: "detail" });
    psec.append(pbody, detail);
    let page = 0;
    const PAGE = 100;
    function drawPoints() {
      const sel = points.filter(shown);
      const pages = Math.max(1, Math.ceil(sel.length / PAGE));
      page = Math.min(page, pages - 1);
      const rows = sel.slice(page * PAGE, page * PAGE + PAGE).map((p) => {
        const tr = el("tr", { class: "clickable", onclick: () => showDetail(p) },
          el("td", {}, p.variant), el("td", {}, axesText(p.axes)), el("td", {}, p.status + (p.suspect ? " (suspect)" : "")),
          el("td", {}, time(p.time_s) + (p.host_paced ? " (submit)" : "")), el("td", {}, "[" + time(p.ci95_low_s) + ", " + time(p.ci95_high_s) + "]"),
          el("td", {}, p.bound || ""), el("td", {}, si(p.bandwidth_Bps, "B/s")), el("td", {}, pct(p.of_memory)));
        return tr;
      });
      const t = el("table", {}, el("tr", {}, ...["variant", "point", "status", "median time", "95% interval", "bound", "bandwidth", "of memory ceiling"].map((h) => el("th", {}, h))), ...rows);
      const nav = el("div", { class: "filters" },
        el("button", { onclick: () => { page = Math.max(0, page - 1); drawPoints(); } }, "previous"),
        " page " + (page + 1) + " of " + pages + " (" + sel.length + " points) ",
        el("button", { onclick: () => { page = Math.min(pages - 1, page + 1); drawPoints(); } }, "next"));
      pbody.replaceChildren(nav, t);
    }
    function showDetail(p) {
      const n = p.note || { measured: "not in this page: a page of more than 20,000 points holds the notes of its failed, suspect and selected points only; every note is in its record's interpretation" };
      detail.replaceChildren(el("h3", {}, p.variant + ": " + axesText(p.axes)),
        envList([["status", p.status + (p.reason ? ": " + p.reason : "")], ["median time", time(p.time_s) + " [" + time(p.ci95_low_s) + ", " + time(p.ci95_high_s) + "]" + (p.host_paced ? " (host submission)" : "")],
          ["measured", n.measured], ["likely bound", n.bound], ["evidence", n.evidence], ["next change", n.next_change],
          ["other cause checked", n.other_cause_checked], ["suspect", p.suspect_reason], ["correctness", p.correctness],
          ["warnings", p.warnings.map((w) => w.kind + ": " + w.message).join("; ")], ["id", p.id]]));
      if (p.kernels && p.kernels.length)
        detail.append(table(["kernel", "time", "bandwidth"], p.kernels.map((k) => [k.op, time(k.time_s), si(k.bandwidth_Bps, "B/s")])));
      if (p.host_paced) detail.append(el("p", {}, "This eager loop is host-paced: what an iteration costs is the host's submission time shown above; " +
        "the note's device time and the bandwidth are the GPU's (docs/metrics.md)."));
      detail.scrollIntoView({ block: "nearest" });
    }

    function redraw() { drawWinners(); drawTime(); drawCrossovers(); drawRoofline(); drawPoints(); }
    redraw();
  }

  // ---- the diff ------------------------------------------------------------------------------------------------
  function diff() {
    const d = data.diff;
    document.title = data.title;
    root.append(el("h1", {}, data.title));
    const s = d.summary;
    root.append(el("p", {}, "New against base: " + s.compared + " compared, " + s.same + " same, " +
      s.slower + " slower, " + s.faster + " faster, " + s.inconclusive + " inconclusive, " + s.status_changed + " status changed."));
    const e = d.options.min_effect;
    const pts = d.points.filter((p) => finite(p.ratio));
    const iv = (p) => (p.gate === "normalized" && finite(p.normalized_ratio_ci_low) ? [p.normalized_ratio, p.normalized_ratio_ci_low, p.normalized_ratio_ci_high]
      : finite(p.process_ratio_ci_low) ? [p.process_ratio, p.process_ratio_ci_low, p.process_ratio_ci_high] : [p.ratio, p.ratio_ci_low, p.ratio_ci_high]);
    pts.sort((a, b) => iv(b)[0] - iv(a)[0]);
    const colour = { slower: "#d62728", faster: "#2ca02c", same: "#7f7f7f", inconclusive: "#ff7f0e" };
    const sec = section("Every compared point's ratio (new / base) with its interval", "forest");
    sec.append(el("p", {}, "Forest plot: each row a point, the dot its ratio, the bar the interval its verdict used (process medians or the " +
      "calibration-normalised ratio where the diff used those), the shaded band the minimum effect (" + (100 * e).toFixed(1) + "%): a verdict is " +
      "slower or faster only when the interval lies outside the band."));
    const fbox = el("div");
    const onlyChanged = el("input", { type: "checkbox" });
    if (pts.length > 150) onlyChanged.checked = true;
    sec.append(el("div", { class: "filters" }, el("label", {}, onlyChanged, "only the points whose verdict is not same")), fbox);
    let forest = null;
    function drawForest() {
      fbox.replaceChildren();
      if (!haveCharts) { noCharts(fbox); return; }
      const rows = pts.filter((p) => !onlyChanged.checked || p.verdict !== "same");
      if (!rows.length) { fbox.append(el("p", {}, "Every compared point is same.")); return; }
      const labels = rows.map((p) => p.key);
      const [box, canvas] = chartBox(Math.min(30000, 90 + 16 * rows.length));
      fbox.append(box);
      if (forest) forest.destroy();
      forest = new Chart(canvas, {
        type: "bar",
        data: { labels, datasets: [
          { type: "line", showLine: false, label: "ratio", data: rows.map((p, i) => ({ x: iv(p)[0], y: labels[i] })),
            backgroundColor: rows.map((p) => colour[p.verdict] || "#000"), borderColor: rows.map((p) => colour[p.verdict] || "#000"), pointRadius: 4 },
          { label: "interval", data: rows.map((p) => [iv(p)[1], iv(p)[2]]), backgroundColor: rows.map((p) => alpha(colour[p.verdict] || "#000000", 0.6)),
            barPercentage: 0.45, categoryPercentage: 1, grouped: false },
          { label: "minimum effect", data: rows.map(() => [1 / (1 + e), 1 + e]), backgroundColor: "rgba(0,0,0,0.08)", barPercentage: 1,
            categoryPercentage: 1, grouped: false },
        ] },
        options: { indexAxis: "y", maintainAspectRatio: false,
          plugins: { title: { display: true, text: "Which points moved beyond the minimum effect? (" + rows.length + " of " + pts.length + " shown" + (onlyChanged.checked ? ": those not same" : "") + ")" }, legend: { position: "top" },
            tooltip: { callbacks: { label: (ctx) => { const p = rows[ctx.dataIndex]; const v = iv(p);
              return p.verdict + ": " + ratio(v[0]) + " [" + ratio(v[1]) + ", " + ratio(v[2]) + "] " + time(p.base_median_s) + " → " + time(p.new_median_s); } } } },
          scales: { x: { type: "logarithmic", title: { display: true, text: "new / base" },
            min: Math.min(1 / (1 + e), ...rows.map((p) => iv(p)[1]).filter(finite)) / 1.02, max: Math.max(1 + e, ...rows.map((p) => iv(p)[2]).filter(finite)) * 1.02,
            ticks: { callback: (v) => (logTicks(v) !== null ? ratio(v) : null) } }, y: { ticks: { autoSkip: false, font: { size: 10 } } } } },
      });
    }
    onlyChanged.addEventListener("change", drawForest);
    drawForest();
    root.append(el("h2", {}, "Points"));
    root.append(table(["point", "verdict", "ratio", "interval", "base", "new", "reason"], pts.map((p) => {
      const v = iv(p);
      return [p.key, el("td", { style: "color:" + (colour[p.verdict] || "#000") }, p.verdict), ratio(v[0]), "[" + ratio(v[1]) + ", " + ratio(v[2]) + "]",
        time(p.base_median_s), time(p.new_median_s), p.reason || ""];
    })));
    if (d.status_changes.length)
      root.append(el("h2", {}, "Status changes"), table(["point", "base", "new", "reason"], d.status_changes.map((c) => [c.key, c.base_status, c.new_status, c.reason || ""])));
  }

  // ---- the history ---------------------------------------------------------------------------------------------
  function history() {
    const h = data.history;
    document.title = data.title;
    root.append(el("h1", {}, data.title));
    const s = h.summary;
    root.append(el("p", {}, s.commits + " commits, " + s.points + " points, " + s.steps + " steps in " + s.groups + " groups (" + s.slower + " slower, " +
      s.faster + " faster, " + s.environment + " environment)."));
    const commitLabel = (c) => c.sha.slice(0, 8) + (c.subject ? " " + c.subject : "");
    const envChanged = h.commits.map((c, i) => i > 0 && JSON.stringify(c.environment) !== JSON.stringify(h.commits[i - 1].environment));
    const labels = h.commits.map((c, i) => c.sha.slice(0, 8) + (envChanged[i] ? " (new environment)" : ""));
    const seriesById = new Map((h.series || []).map((x) => [x.id, x]));
    if (!h.groups.length) root.append(el("p", {}, "No step was found."));
    h.groups.forEach((g, gi) => {
      const sec = section("Group " + (gi + 1) + ": " + g.kind + " at " + g.after.slice(0, 8) + (g.environment ? " (environment)" : ""), "group" + (gi + 1));
      const members = g.steps.map((i) => h.steps[i]).sort((a, b) => Math.abs(Math.log(b.ratio)) - Math.abs(Math.log(a.ratio)));
      sec.append(el("p", {}, members.length + " points stepped between " + g.before.slice(0, 8) + " and " + g.after.slice(0, 8) + ": ratio median " + ratio(g.median_ratio) +
        " (from " + ratio(g.min_ratio) + " to " + ratio(g.max_ratio) + "), bound classes " + Object.entries(g.bounds || {}).map(([k, n]) => n + " " + (k || "unknown")).join(", ") +
        ". The chart draws the " + Math.min(8, members.length) + " largest steps; all are listed below it."));
      const list = el("details", {}, el("summary", {}, "all " + members.length + " points of the group"),
        table(["point", "ratio", "95% interval", "kind"], members.map((st) => [st.key, ratio(st.ratio), "[" + ratio(st.ci_low) + ", " + ratio(st.ci_high) + "]", st.kind + (st.environment ? " (environment)" : "")])));
      if (!haveCharts) { noCharts(sec); sec.append(list); return; }
      const [box, canvas] = chartBox(380);
      sec.append(box, list);
      const datasets = [];
      const drawn = members.slice(0, 8);
      const axesOf = (key) => Object.fromEntries((key.split("/")[2] || "").split(",").filter((a) => a.includes("=")).map((a) => a.split("=")));
      const differ = [...new Set(drawn.flatMap((st) => Object.keys(axesOf(st.key))))].filter((a) => new Set(drawn.map((st) => axesOf(st.key)[a])).size > 1);
      const shortKey = (key) => key.split("/")[1] + (differ.length ? " " + differ.map((a) => a + "=" + axesOf(key)[a]).join(",") : "");
      const named = [...new Set(members.map((st) => st.key.split("/")[1]))];
      drawn.forEach((st) => {
        const se = seriesById.get(st.id);
        if (!se) return;
        const c = colorOf(st.key);
        const rs = se.runs.filter((r) => finite(r.time_s));
        datasets.push({ label: shortKey(st.key), data: rs.map((r) => ({ x: labels[r.commit], y: r.time_s, r })), borderColor: c, backgroundColor: c, pointRadius: rs.map((r) => (h.commits[r.commit].sha === st.after ? 7 : 3)),
          pointStyle: rs.map((r) => (h.commits[r.commit].sha === st.after ? "triangle" : "circle")) });
        datasets.push({ label: shortKey(st.key) + " (95%)", band: true, data: rs.map((r) => ({ x: labels[r.commit], y: r.ci_high_s })), borderWidth: 0, pointRadius: 0, backgroundColor: alpha(c, 0.18), fill: "+1" });
        datasets.push({ label: shortKey(st.key) + " (low)", band: true, data: rs.map((r) => ({ x: labels[r.commit], y: r.ci_low_s })), borderWidth: 0, pointRadius: 0, fill: false });
      });
      new Chart(canvas, { type: "line", data: { labels, datasets },
        options: { maintainAspectRatio: false,
          plugins: { title: { display: true, text: "Did " + named.slice(0, 4).join(", ") + (named.length > 4 ? " and " + (named.length - 4) + " more" : "") + " step at " + g.after.slice(0, 8) + "? (triangle: the step; the " + drawn.length + " largest of " + members.length + " drawn)" },
            legend: { labels: { filter: (item, d) => !d.datasets[item.datasetIndex].band } },
            tooltip: { filter: (item) => !item.dataset.band, callbacks: { title: (items) => commitLabel(h.commits[items[0].raw.r.commit]),
              label: (ctx) => ctx.dataset.label + ": " + time(ctx.raw.y) + " [" + time(ctx.raw.r.ci_low_s) + ", " + time(ctx.raw.r.ci_high_s) + "]" } } },
          scales: { x: { type: "category", title: { display: true, text: "commit (oldest first)" } }, y: { type: "logarithmic", title: { display: true, text: "time (s)" }, ticks: { callback: (v) => (logTicks(v) !== null ? time(v) : null) } } } } });
    });
    root.append(el("h2", {}, "Commits"));
    root.append(table(["commit", "subject", "created", "environment"], h.commits.map((c, i) => [c.sha.slice(0, 12), c.subject || "", c.created_utc,
      (envChanged[i] ? "changed: " : "") + Object.entries(c.environment).filter(([, v]) => v).map(([k, v]) => k + "=" + v).join(", ")])));
  }

  try {
    ({ report, diff, history })[data.kind]();
  } catch (e) {
    console.error("labrun view failed: " + e);
    root.append(el("p", { class: "warn" }, "This page could not be drawn: " + e));
  }
})();
