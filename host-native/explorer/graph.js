// A small SVG graph of one thought and its neighbours: incoming links on the
// left, the thought in the middle, outgoing links on the right. Each node is
// an SVG link to that thought. Built with DOM calls; labels are text nodes.

import { svg as el, clip } from "./dom.js";

const NODE_W = 190;
const NODE_H = 34;
const GAP = 14;

/** A node box at (x, y): a link when `href` is set. */
function node(x, y, { label, sub, href, center }) {
  const box = el("g", { class: center ? "node center" : "node" },
    el("rect", { x, y, width: NODE_W, height: NODE_H, rx: 6 }),
    el("text", { x: x + 8, y: y + 14, class: "label" }, clip(label, 28)),
    el("text", { x: x + 8, y: y + 28, class: "sub" }, clip(sub, 30)));
  if (!href) return box;
  return el("a", { href }, el("title", {}, `${label}: ${sub}`), box);
}

/**
 * Draws `center` with `incoming` and `outgoing` neighbours
 * ({label, sub, href, edge}). Returns an `<svg>` with a title for screen readers.
 */
export function relationGraph(center, incoming, outgoing) {
  const rows = Math.max(1, incoming.length, outgoing.length);
  const height = rows * (NODE_H + GAP) + GAP;
  const width = NODE_W * 3 + 160;
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "group", class: "graph", "aria-label": `Relations of ${center.label}` });
  svg.append(el("defs", {}, el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
    el("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }))));
  const cy = height / 2 - NODE_H / 2;
  const cx = NODE_W + 80;
  const column = (items, x, fromCenter) => items.forEach((item, i) => {
    const y = GAP + i * (NODE_H + GAP);
    const [x1, y1, x2, y2] = fromCenter ? [cx + NODE_W, cy + NODE_H / 2, x, y + NODE_H / 2] : [x + NODE_W, y + NODE_H / 2, cx, cy + NODE_H / 2];
    svg.append(el("line", { x1, y1, x2, y2, class: "edge", "marker-end": "url(#arrow)" }));
    svg.append(el("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4, class: "edge-label", "text-anchor": "middle" }, clip(item.edge, 22)));
    svg.append(node(x, y, item));
  });
  column(incoming, 0, false);
  column(outgoing, cx + NODE_W + 80, true);
  svg.append(node(cx, cy, { ...center, center: true }));
  return svg;
}
