// A chain's relation graph as an arc diagram: the thoughts that ref or
// relate to another (or are referred to) in index order, one row each (a
// link to the thought, its type coloured), and an arc per ref or relation
// on the left, newer to older. Built with DOM calls; labels are text nodes.

import { svg as el, clip } from "./dom.js";

const ROW = 28;
const ARCS = 260;

/**
 * The edges among `thoughts` (one chain's, any order): [{from, to, kind}]
 * with thought objects, for each ref and each same-chain relation whose
 * target is among them.
 */
export function chainEdges(thoughts) {
  const byIndex = new Map(thoughts.map((t) => [t.index, t]));
  const byId = new Map(thoughts.map((t) => [t.id, t]));
  const edges = [];
  for (const t of thoughts) {
    for (const i of t.refs ?? []) if (byIndex.has(i)) edges.push({ from: t, to: byIndex.get(i), kind: "ref" });
    for (const r of t.relations ?? []) {
      if (!r.chain_key && byId.has(r.target_id)) edges.push({ from: t, to: byId.get(r.target_id), kind: r.kind });
    }
  }
  return edges;
}

/** The arc diagram of `edges`; `href(t)` links a thought's row. */
export function chainGraph(chainKey, edges, href) {
  const nodes = [...new Map(edges.flatMap((e) => [[e.from.index, e.from], [e.to.index, e.to]])).values()].sort((a, b) => a.index - b.index);
  const row = new Map(nodes.map((t, i) => [t.index, i]));
  const width = ARCS + 620;
  const height = nodes.length * ROW + 16;
  const y = (t) => 14 + row.get(t.index) * ROW;
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, width, height, class: "graph chain-graph", role: "group", "aria-label": `Relation graph of ${chainKey}` });
  svg.append(el("defs", {}, el("marker", { id: "arc-arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" },
    el("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }))));
  const span = Math.max(1, nodes.length - 1);
  for (const e of edges) {
    const [y1, y2] = [y(e.from), y(e.to)];
    const reach = 24 + (ARCS - 40) * (Math.abs(row.get(e.from.index) - row.get(e.to.index)) / span);
    const x = ARCS - 6;
    svg.append(el("path", { d: `M ${x} ${y1} C ${x - reach} ${y1}, ${x - reach} ${y2}, ${x} ${y2}`, class: `arc arc-${e.kind === "ref" ? "ref" : "relation"}`, "marker-end": "url(#arc-arrow)" },
      el("title", {}, `#${e.from.index} ${e.kind} #${e.to.index}`)));
    svg.append(el("text", { x: x - reach * 0.75 - 2, y: (y1 + y2) / 2 + 4, class: "edge-label", "text-anchor": "end" }, clip(e.kind, 16)));
  }
  for (const t of nodes) {
    const ty = y(t);
    svg.append(el("circle", { cx: ARCS, cy: ty, r: 6, class: "dot", "data-type": t.thought_type }));
    svg.append(el("a", { href: href(t) },
      el("text", { x: ARCS + 14, y: ty + 4, class: "label" }, `#${t.index} ${t.thought_type}`,
        el("tspan", { class: "sub", dx: 8 }, clip(t.content ?? "", 70)))));
  }
  return svg;
}
