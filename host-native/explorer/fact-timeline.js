// A fact's history on a time line: the facts of one subject and predicate
// (POST /v1/facts/query with active_only: false) as segments from
// valid_from to valid_to (or to now, while active) on a horizontal time
// axis, the one holding now highlighted; facts that overlap (a conflict:
// two active values at once) get a lane each. `factGroups` and `layout` are
// pure (tested under Node); `factTimeline` builds SVG with DOM calls, every
// label a text node.

import { svg as el, clip, when } from "./dom.js";

const WIDTH = 900;
const PAD = 12;
const LANE = 30;
const BAR = 22;
/** Pixels between two time labels of the axis, at least. */
const LABEL_GAP = 130;
/** The shortest time an axis spans (a fact recorded just now is drawn across it, from its start on). */
export const MIN_SPAN = 10 * 60_000;

/**
 * `facts` grouped by subject and predicate (compared without case, as the
 * daemon compares them), in the order first met (the query answers the
 * latest `valid_from` first: the group changed last comes first):
 * `[{subject, predicate, facts}]`, each group's facts oldest first.
 */
export function factGroups(facts) {
  const groups = new Map();
  for (const f of facts) {
    const key = `${f.subject.trim().toLowerCase()}\u0000${f.predicate.trim().toLowerCase()}`;
    if (!groups.has(key)) groups.set(key, { subject: f.subject, predicate: f.predicate, facts: [] });
    groups.get(key).facts.push(f);
  }
  for (const g of groups.values()) {
    g.facts.sort((a, b) => Date.parse(a.valid_from) - Date.parse(b.valid_from) || a.thought_index - b.thought_index);
  }
  return [...groups.values()];
}

/** Whether fact `f` holds at `now` (ms): `valid_from <= now < valid_to`. */
export function holds(f, now) {
  return Date.parse(f.valid_from) <= now && (!f.valid_to || Date.parse(f.valid_to) > now);
}

/**
 * Where a group's facts (oldest first) go on one axis: `{start, end,
 * lanes, segments: [{fact, from, to, lane, current}]}` in ms. The axis runs
 * from the first `valid_from` to now or the last time named, whichever is
 * later, and spans at least `MIN_SPAN`. A closed fact runs to its
 * `valid_to`, an active one to the end of the axis; a fact overlapping an
 * earlier one's segment (two active values at once) takes the next free lane.
 */
export function layout(facts, now) {
  const times = facts.flatMap((f) => [Date.parse(f.valid_from), ...(f.valid_to ? [Date.parse(f.valid_to)] : [])]);
  const start = Math.min(...times);
  const end = Math.max(now, start + MIN_SPAN, ...times);
  const segments = facts.map((fact) => {
    const from = Date.parse(fact.valid_from);
    return { fact, from, to: fact.valid_to ? Date.parse(fact.valid_to) : end, lane: 0, current: holds(fact, now) };
  });
  const laneEnds = [];
  for (const s of segments) {
    let lane = laneEnds.findIndex((e) => e <= s.from);
    if (lane < 0) lane = laneEnds.push(-Infinity) - 1;
    laneEnds[lane] = Math.max(s.to, s.from);
    s.lane = lane;
  }
  return { start, end, lanes: Math.max(1, laneEnds.length), segments };
}

/** "2026-11-27 14:05" (UTC). */
function minute(ms) {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/**
 * The time line of `group` (from `factGroups`) at `now`: an `<svg>` with a
 * rect per fact (class `segment`, plus `current` for the value holding now
 * or `closed` / `scheduled`), its value written inside when it fits and in
 * full in its `<title>`, a "now" line and time labels along the axis.
 */
export function factTimeline(group, now = Date.now()) {
  const { start, end, lanes, segments } = layout(group.facts, now);
  const span = end - start;
  const x = (ms) => PAD + ((ms - start) / span) * (WIDTH - 2 * PAD);
  const axisY = 8 + lanes * LANE + 4;
  const height = axisY + 24;
  const current = segments.filter((s) => s.current).map((s) => s.fact.object);
  const label = `${group.subject} ${group.predicate}: ${segments.length} value(s) from ${minute(start)} UTC; now ${current.length ? current.join(" and ") : "none"}`;
  const svg = el("svg", { viewBox: `0 0 ${WIDTH} ${height}`, class: "fact-timeline", role: "img", "aria-label": label });
  svg.append(el("line", { x1: PAD, x2: WIDTH - PAD, y1: axisY, y2: axisY, class: "axis" }));
  for (const s of segments) {
    const x1 = x(s.from);
    const w = Math.max(3, x(s.to) - x1);
    const y = 8 + s.lane * LANE;
    const kind = s.current ? "current" : s.fact.valid_to ? "closed" : "scheduled";
    const until = s.fact.valid_to ? when(s.fact.valid_to) : s.current ? "now (active)" : "open (holds from its start)";
    const g = el("g", { class: `segment ${kind}`, "data-fact": s.fact.fact_id },
      el("title", {}, `${s.fact.object}: ${when(s.fact.valid_from)} to ${until}${s.fact.recorded_by ? `, recorded by ${s.fact.recorded_by}` : ""}`),
      el("rect", { x: x1.toFixed(1), y, width: w.toFixed(1), height: BAR, rx: 3 }));
    const room = Math.floor((w - 10) / 7.2);
    if (room >= 3) g.append(el("text", { x: (x1 + 5).toFixed(1), y: y + BAR / 2 + 4, class: "value" }, clip(s.fact.object, room)));
    svg.append(g);
    svg.append(el("line", { x1: x1.toFixed(1), x2: x1.toFixed(1), y1: axisY - 3, y2: axisY + 3, class: "tick-mark" }));
  }
  if (now >= start && now <= end) {
    const nx = x(now).toFixed(1);
    svg.append(el("line", { x1: nx, x2: nx, y1: 4, y2: axisY, class: "now" }));
  }
  // Time labels: the start, each fact's start where there is room, and the end (now, usually).
  const stops = [start, ...segments.map((s) => s.from), end].sort((a, b) => a - b);
  const placed = [];
  for (const t of stops) {
    if (placed.length && x(t) - x(placed.at(-1)) < LABEL_GAP) continue;
    placed.push(t);
  }
  while (placed.length > 1 && x(end) - x(placed.at(-1)) < LABEL_GAP) placed.pop();
  if (placed.at(-1) !== end) placed.push(end);
  placed.forEach((t, i) => {
    const anchor = i === 0 ? "start" : t === end ? "end" : "middle";
    const text = t === end && end === now ? `now (${minute(now).slice(11)})` : minute(t);
    svg.append(el("text", { x: x(t).toFixed(1), y: axisY + 17, class: "tick", "text-anchor": anchor }, text));
  });
  return svg;
}
