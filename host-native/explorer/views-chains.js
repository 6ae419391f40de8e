// #/chains: every chain the token may read with its head, integrity,
// agents and last write, links to its timeline, agents, relation graph and
// coordination view, and the exports. Changing chains (branch, merge,
// delete, import) is on #/admin.

import { get, post } from "./api.js";
import { button, h, replace, route, table, when } from "./dom.js";
import { exportChainFile, exportMarkdown } from "./exports.js";

export async function chainsView(main) {
  const listing = await get("/v1/chains");
  const keys = listing.chains.map((c) => c.chain_key);
  const heads = await Promise.all(keys.map((k) => post("/v1/head", { chain_key: k }).catch((e) => ({ error: e.message }))));
  const rows = listing.chains.map((c, i) => {
    const head = heads[i];
    return [
      h("a", { href: route("chain", c.chain_key), class: "chain-link" }, c.chain_key),
      String(c.thought_count),
      String(c.agent_count),
      head.error ? h("span", { class: "error" }, head.error) : h("code", { title: head.head_hash ?? "" }, (head.head_hash ?? "—").slice(0, 16)),
      head.error ? "—" : h("span", { class: head.integrity_ok ? "ok" : "error" }, head.integrity_ok ? "verified" : "FAILED"),
      when(head.latest_thought?.timestamp),
      h("span", { class: "actions" },
        h("a", { href: route("agents", c.chain_key) }, "Agents"),
        h("a", { href: route("graph", c.chain_key) }, "Graph"),
        h("a", { href: route("coordination", c.chain_key) }, "Coordination"),
        button("Markdown", () => exportMarkdown(c.chain_key), { "aria-label": `Export ${c.chain_key} as Markdown` }),
        button("Chain file", () => exportChainFile(c.chain_key), { "aria-label": `Download the chain file of ${c.chain_key}` })),
    ];
  });
  replace(main,
    h("h1", {}, "Chains"),
    h("p", {}, `${keys.length} chain(s); new thoughts go to `, h("code", {}, listing.default_chain_key), " when a request names none. ",
      "Branch, merge, delete and import are on the ", h("a", { href: "#/admin" }, "admin page"), "."),
    keys.length ? table(["chain", "thoughts", "agents", "head", "integrity", "last write", "actions"], rows, "Chains this token may read")
      : h("p", { class: "empty" }, "No chains yet."));
}
