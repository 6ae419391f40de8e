// #/chains: every chain the token may read with its head, integrity,
// agents and last write; the chain operations (branch, merge, delete),
// MEMORY.md import and the exports.

import { get, post } from "./api.js";
import { attempt, button, field, h, replace, route, select, status, table, when } from "./dom.js";
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
        button("Markdown", () => exportMarkdown(c.chain_key), { "aria-label": `Export ${c.chain_key} as Markdown` }),
        button("Chain file", () => exportChainFile(c.chain_key), { "aria-label": `Download the chain file of ${c.chain_key}` }),
        button("Delete", () => deleteChain(c.chain_key), { class: "danger", "aria-label": `Delete chain ${c.chain_key}` })),
    ];
  });
  replace(main,
    h("h1", {}, "Chains"),
    h("p", {}, `${keys.length} chain(s); new thoughts go to `, h("code", {}, listing.default_chain_key), " when a request names none."),
    keys.length ? table(["chain", "thoughts", "agents", "head", "integrity", "last write", "actions"], rows, "Chains this token may read")
      : h("p", { class: "empty" }, "No chains yet: append a thought or import a MEMORY.md below."),
    operations(keys),
    importForm(keys));
}

async function deleteChain(key) {
  if (!confirm(`Delete chain “${key}” and all its thoughts for good? This cannot be undone.`)) return;
  const r = await attempt("Delete", () => post("/v1/chains/delete", { chain_key: key }));
  if (r) {
    status(`Deleted chain ${r.chain_key}.`);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  }
}

/** Resolves "42" (an index) or an id to a thought id of `chain`. */
async function thoughtId(chain, given) {
  if (/^\d+$/.test(given)) return (await post("/v1/thought", { chain_key: chain, thought_index: Number(given) })).thought.id;
  return given;
}

function operations(keys) {
  const [srcWrap, src] = select("Source chain", keys, { id: "branch-source" });
  const [atWrap, at] = field("At thought (index or id)", { id: "branch-at", required: true });
  const [newWrap, newKey] = field("New chain key", { id: "branch-key", required: true });
  const branch = h("form", { class: "op", id: "branch-form" }, h("h3", {}, "Branch"),
    h("p", { class: "hint" }, "A new chain starting from one thought of the source; the thoughts keep their ids and content, the new chain has its own hash chain."),
    srcWrap, atWrap, newWrap, h("button", { type: "submit" }, "Branch"));
  branch.addEventListener("submit", async (e) => {
    e.preventDefault();
    const r = await attempt("Branch", async () => post("/v1/chains/branch", {
      source_chain_key: src.value, branch_thought_id: await thoughtId(src.value, at.value.trim()), branch_chain_key: newKey.value.trim(),
    }));
    if (r) {
      status(`Branched ${r.source_chain_key} into ${r.branch_chain_key}.`);
      location.hash = route("chain", r.branch_chain_key);
    }
  });

  const [fromWrap, from] = select("Merge this chain", keys, { id: "merge-source" });
  const [intoWrap, into] = select("into this chain", keys, { id: "merge-target" });
  const merge = h("form", { class: "op", id: "merge-form" }, h("h3", {}, "Merge"),
    h("p", { class: "hint" }, "Copies the first chain's thoughts after the second's, then deletes the first."),
    fromWrap, intoWrap, h("button", { type: "submit", class: "danger" }, "Merge"));
  merge.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!confirm(`Merge “${from.value}” into “${into.value}”? “${from.value}” is deleted afterwards.`)) return;
    const r = await attempt("Merge", () => post("/v1/chains/merge", { source_chain_key: from.value, target_chain_key: into.value }));
    if (r) {
      status(`Merged: ${r.thoughts_copied} thought(s) copied into ${into.value}${r.source_deleted ? `; ${from.value} deleted` : ""}.`);
      location.hash = route("chain", into.value);
    }
  });
  return h("section", { "aria-labelledby": "ops-title" }, h("h2", { id: "ops-title" }, "Chain operations"), h("div", { class: "ops" }, branch, merge));
}

function importForm(keys) {
  const [keyWrap, key] = field("Into chain", { id: "import-chain", list: "chain-keys", required: true, value: keys[0] ?? "" });
  const [agentWrap, agent] = field("Agent for lines that name none", { id: "import-agent" });
  const [mdWrap, md] = field("MEMORY.md text", { id: "import-markdown", tag: "textarea", rows: 8, required: true });
  const form = h("form", { class: "op", id: "import-form" }, h("datalist", { id: "chain-keys" }, keys.map((k) => h("option", { value: k }))),
    keyWrap, agentWrap, mdWrap, h("button", { type: "submit" }, "Import"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = { chain_key: key.value.trim(), markdown: md.value };
    if (agent.value.trim()) body.default_agent_id = agent.value.trim();
    const r = await attempt("Import", () => post("/v1/import-markdown", body));
    if (r) {
      status(`Imported ${r.count} thought(s) into ${body.chain_key}.`);
      if (r.count) location.hash = route("chain", body.chain_key);
    }
  });
  return h("section", { "aria-labelledby": "import-title" }, h("h2", { id: "import-title" }, "Import MEMORY.md"),
    h("p", { class: "hint" }, "Reads the layout the Markdown export writes and MentisDB 0.10's “- [#n] Type: content” lines; other lines are skipped."), form);
}
