// The overview's activity chart: thoughts counted per time bucket and per
// series (thought type or agent), drawn as stacked bars in plain SVG with a
// text legend. `buckets` is pure (tested under Node); `activityChart`
// builds DOM. Colours come from types.css (`data-type` / `data-series`).

import { h, svg as el } from "./dom.js";

const MINUTE = 60_000;
const STEPS = [MINUTE, 5 * MINUTE, 15 * MINUTE, 60 * MINUTE, 6 * 60 * MINUTE, 24 * 60 * MINUTE, 7 * 24 * 60 * MINUTE, 30 * 24 * 60 * MINUTE];
/** At least MIN_BARS and at most MAX_BARS bars (ending with now's); at most `MAX_SERIES` named series (the rest are "other"). */
export const MIN_BARS = 12;
export const MAX_BARS = 24;
export const MAX_SERIES = 8;

/**
 * Counts `items` ({at: ms, series: string}) per bucket from the earliest
 * one to `now`, with the smallest step giving at most MAX_BARS buckets
 * (at least MIN_BARS: a short span is drawn as the last MIN_BARS steps).
 * Returns {step, start, bars: [{from, counts: {series: n}, total}], series:
 * [names, most frequent first; "other" last when some were folded]}.
 */
export function buckets(items, now = Date.now()) {
  if (!items.length) return { step: STEPS[0], start: now, bars: [], series: [] };
  const first = Math.min(...items.map((i) => i.at));
  const end = Math.max(now, ...items.map((i) => i.at));
  const step = STEPS.find((s) => Math.floor(end / s) - Math.floor(first / s) < MAX_BARS) ?? STEPS.at(-1);
  const start = Math.min(Math.floor(first / step), Math.floor(end / step) - (MIN_BARS - 1)) * step;
  const n = Math.min(MAX_BARS, Math.floor((end - start) / step) + 1);
  const totals = new Map();
  for (const i of items) totals.set(i.series, (totals.get(i.series) ?? 0) + 1);
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([s]) => s);
  const named = new Set(ranked.length > MAX_SERIES ? ranked.slice(0, MAX_SERIES - 1) : ranked);
  const bars = Array.from({ length: n }, (_, k) => ({ from: start + k * step, counts: {}, total: 0 }));
  for (const i of items) {
    const bar = bars[Math.min(n - 1, Math.floor((i.at - start) / step))];
    const s = named.has(i.series) ? i.series : "other";
    bar.counts[s] = (bar.counts[s] ?? 0) + 1;
    bar.total++;
  }
  const series = ranked.filter((s) => named.has(s));
  if (named.size < ranked.length) series.push("other");
  return { step, start, bars, series };
}

/** "2026-11-27 08:40" (UTC) or "2026-11-27" when the step is a day or more. */
function label(ms, step) {
  const iso = new Date(ms).toISOString();
  return step >= 24 * 60 * MINUTE ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

function stepName(step) {
  if (step >= 30 * 24 * 60 * MINUTE) return "30 days";
  if (step >= 7 * 24 * 60 * MINUTE) return "week";
  if (step >= 24 * 60 * MINUTE) return "day";
  if (step >= 60 * MINUTE) return step === 60 * MINUTE ? "hour" : `${step / 60 / MINUTE} hours`;
  return step === MINUTE ? "minute" : `${step / MINUTE} minutes`;
}

/**
 * The chart of `data` (from `buckets`): `attr(series, i)` gives the colour
 * attributes of a series ({"data-type": t} or {"data-series": i}).
 */
export function activityChart(data, { title, attr }) {
  const width = 600;
  const height = 190;
  const pad = { left: 34, right: 8, top: 12, bottom: 36 };
  const max = Math.max(1, ...data.bars.map((b) => b.total));
  const slot = (width - pad.left - pad.right) / Math.max(1, data.bars.length);
  const scale = (height - pad.top - pad.bottom) / max;
  const summary = `${title}: ${data.bars.reduce((n, b) => n + b.total, 0)} thought(s) in ${data.bars.length} bar(s) of one ${stepName(data.step)}`;
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img", "aria-label": summary });
  const baseY = height - pad.bottom;
  svg.append(el("line", { x1: pad.left, x2: width - pad.right, y1: baseY, y2: baseY, class: "axis" }));
  svg.append(el("text", { x: pad.left - 6, y: pad.top + 8, class: "tick", "text-anchor": "end" }, String(max)));
  svg.append(el("text", { x: pad.left - 6, y: baseY, class: "tick", "text-anchor": "end" }, "0"));
  data.bars.forEach((bar, k) => {
    const x = pad.left + k * slot + slot * 0.15;
    let y = baseY;
    data.series.forEach((s, i) => {
      const n = bar.counts[s] ?? 0;
      if (!n) return;
      const hgt = n * scale;
      y -= hgt;
      svg.append(el("rect", { x: x.toFixed(1), y: y.toFixed(1), width: (slot * 0.7).toFixed(1), height: hgt.toFixed(1), class: "bar", ...(s === "other" ? {} : attr(s, i)) },
        el("title", {}, `${s}: ${n} (${label(bar.from, data.step)})`)));
    });
  });
  if (data.bars.length) {
    svg.append(el("text", { x: pad.left, y: baseY + 16, class: "tick" }, label(data.bars[0].from, data.step)));
    svg.append(el("text", { x: width - pad.right, y: baseY + 16, class: "tick", "text-anchor": "end" }, label(data.bars.at(-1).from, data.step)));
    svg.append(el("text", { x: (width + pad.left) / 2, y: height - 4, class: "tick", "text-anchor": "middle" }, `one bar per ${stepName(data.step)} (UTC)`));
  }
  const totals = Object.fromEntries(data.series.map((s) => [s, data.bars.reduce((n, b) => n + (b.counts[s] ?? 0), 0)]));
  const legend = h("ul", { class: "legend", "aria-label": `${title}: totals` }, data.series.map((s, i) =>
    h("li", s === "other" ? {} : attr(s, i), h("span", { class: "swatch", "aria-hidden": "true" }), `${s} ${totals[s]}`)));
  return h("figure", { class: "chart-box" }, h("figcaption", {}, title), svg, legend);
}
