// #/graph/<key>: the relation graph of a whole chain (refs and typed
// relations among its newest thoughts) as an arc diagram, with the same
// edges as a table. Each thought links to its own view, which draws its
// neighbours in both directions (graph.js).

import { post } from "./api.js";
import { h, replace, route, table } from "./dom.js";
import { chainEdges, chainGraph } from "./chain-graph.js";
import { typeBadge } from "./types.js";

/** Thoughts read (the newest) and edges drawn at most. */
export const READ = 1000;
export const MAX_EDGES = 300;

export async function graphView(main, chainKey) {
  const r = await post("/v1/search", { chain_key: chainKey, include_invalidated: true, limit: READ });
  const edges = chainEdges(r.thoughts).sort((a, b) => b.from.index - a.from.index).slice(0, MAX_EDGES);
  const href = (t) => route("thought", chainKey, t.id);
  const link = (t) => h("a", { href: href(t) }, `#${t.index}`);
  replace(main,
    h("p", { class: "crumbs" }, h("a", { href: route("chain", chainKey) }, `← ${chainKey}`)),
    h("h1", {}, "Relation graph of ", h("code", {}, chainKey)),
    h("p", { class: "hint", id: "graph-summary" },
      `${edges.length} link(s) among the newest ${r.thoughts.length} thought(s): refs and relations, each arc from the newer thought to the one it names. Select a thought to see its neighbours.`),
    edges.length ? h("div", { class: "graph-scroll" }, chainGraph(chainKey, edges, href))
      : h("p", { class: "empty" }, "No thought of this chain refs or relates to another yet."),
    edges.length ? h("section", { "aria-labelledby": "edges-title" }, h("h2", { id: "edges-title" }, "Links"),
      table(["from", "type", "link", "to", "type"], edges.map((e) => [link(e.from), typeBadge(e.from.thought_type), e.kind, link(e.to), typeBadge(e.to.thought_type)]), "Refs and relations, newest first"))
      : null);
}
