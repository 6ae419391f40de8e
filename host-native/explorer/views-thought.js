// #/thought/<key>/<id or index>: one thought's fields, hash, prev_hash and
// signature state, and its refs and relations in both directions: outgoing
// from the thought itself, incoming found by reading the chain, drawn as a
// graph whose nodes link to those thoughts.

import { post } from "./api.js";
import { facts, h, replace, route, when } from "./dom.js";
import { relationGraph } from "./graph.js";
import { typeBadge } from "./types.js";

function locator(chainKey, idOrIndex) {
  return /^\d+$/.test(idOrIndex) ? { chain_key: chainKey, thought_index: Number(idOrIndex) } : { chain_key: chainKey, thought_id: idOrIndex };
}

/** A graph node of thought `t` of `chainKey`, or of an unreadable target. */
function nodeOf(chainKey, t, edge, fallback) {
  if (!t) return { label: fallback, sub: "not readable", edge, href: null };
  return { label: `#${t.index} ${t.thought_type}`, sub: t.content, edge, href: route("thought", chainKey, t.id) };
}

async function outgoing(chainKey, t) {
  const targets = [
    ...t.refs.map((index) => ({ edge: "ref", chain: chainKey, loc: { thought_index: index }, name: `#${index}` })),
    ...t.relations.map((r) => ({
      edge: r.kind, chain: r.chain_key ?? chainKey, name: `${r.chain_key ? `${r.chain_key} ` : ""}${r.target_index !== null && r.target_index !== undefined ? `#${r.target_index}` : r.target_id}`,
      loc: { thought_id: r.target_id },
    })),
  ];
  return Promise.all(targets.map(async (x) => {
    const found = await post("/v1/thought", { chain_key: x.chain, ...x.loc }).catch(() => null);
    const n = nodeOf(x.chain, found?.thought, x.edge, x.name);
    if (x.chain !== chainKey && found) n.label = `${x.chain} ${n.label}`;
    return n;
  }));
}

/**
 * Thoughts of the chain that ref or relate to `t`. Only later thoughts can
 * (a ref or relation names an existing thought), so the read starts at its time.
 */
async function incoming(chainKey, t, count) {
  const all = await post("/v1/search", { chain_key: chainKey, include_invalidated: true, since: t.timestamp, limit: Math.max(1, count - t.index) });
  const out = [];
  for (const other of all.thoughts) {
    if (other.refs?.includes(t.index)) out.push(nodeOf(chainKey, other, "ref", ""));
    for (const r of other.relations ?? []) {
      if (r.target_id === t.id && (!r.chain_key || r.chain_key === chainKey)) out.push(nodeOf(chainKey, other, r.kind, ""));
    }
  }
  return out;
}

/** The signature state: unsigned, or signed with a key and that key's state now. */
async function signature(chainKey, t) {
  if (!t.thought_signature) return h("span", { class: "muted", id: "signature-state" }, "unsigned (the agent id is asserted, not proven)");
  const registry = await post("/v1/agent-registry", { chain_key: chainKey }).catch(() => null);
  const key = registry?.agents.find((a) => a.agent_id === t.agent_id)?.public_keys.find((k) => k.key_id === t.signing_key_id);
  const now = key ? `the key is ${String(key.status).toLowerCase()} now` : "the key is no longer in the registry";
  return h("span", { class: String(key?.status).toLowerCase() === "active" ? "ok" : "error", id: "signature-state" },
    `signed by ${t.agent_id} with key ${t.signing_key_id}, verified by the daemon when appended; ${now}`);
}

export async function thoughtView(main, chainKey, idOrIndex) {
  const [r, head] = await Promise.all([post("/v1/thought", locator(chainKey, idOrIndex)), post("/v1/head", { chain_key: chainKey })]);
  const t = r.thought;
  const [out, inc, signed] = await Promise.all([outgoing(chainKey, t), incoming(chainKey, t, head.thought_count), signature(chainKey, t)]);
  const prev = t.index > 0 ? h("a", { href: route("thought", chainKey, String(t.index - 1)) }, h("code", {}, t.prev_hash)) : h("span", { class: "muted" }, "none (first thought)");
  replace(main,
    h("p", { class: "crumbs" }, h("a", { href: route("chain", chainKey) }, `← ${chainKey}`), " · ", h("a", { href: route("graph", chainKey) }, "the chain's relation graph")),
    h("h1", {}, `Thought #${t.index} `, typeBadge(t.thought_type)),
    t.forgotten ? h("p", { class: "content forgotten", id: "thought-content" }, h("em", {}, `Forgotten by ${t.forgotten.forgotten_by} at ${when(t.forgotten.forgotten_at)}: ${t.forgotten.reason}`))
      : h("pre", { class: "content", id: "thought-content" }, t.content),
    facts([
      ["id", h("code", {}, t.id)],
      ["chain", h("a", { href: route("chain", chainKey) }, chainKey)],
      ["time", h("time", { datetime: t.timestamp }, when(t.timestamp))],
      ["agent", t.agent_name && t.agent_name !== t.agent_id ? `${t.agent_name} (${t.agent_id})` : t.agent_id],
      ["owner", t.agent_owner],
      ["role", t.role],
      ["session", t.session_id],
      ["importance", String(t.importance)],
      ["confidence", t.confidence === null ? null : String(t.confidence)],
      ["tags", t.tags?.length ? t.tags.join(", ") : null],
      ["concepts", t.concepts?.length ? t.concepts.join(", ") : null],
      ["entity type", t.entity_type],
      ["schema", String(t.schema_version)],
      ["hash", h("code", { id: "thought-hash" }, t.hash)],
      ["prev_hash", prev],
      ["signature", signed],
    ]),
    h("section", { "aria-labelledby": "rel-title" },
      h("h2", { id: "rel-title" }, "Relations"),
      h("p", { class: "hint", id: "rel-summary" }, `${inc.length} incoming, ${out.length} outgoing. Select a node to open that thought.`),
      relationGraph({ label: `#${t.index} ${t.thought_type}`, sub: t.content, href: null }, inc, out)),
    h("p", { class: "actions" },
      t.index > 0 ? h("a", { href: route("thought", chainKey, String(t.index - 1)) }, "← previous") : null,
      t.index + 1 < head.thought_count ? h("a", { href: route("thought", chainKey, String(t.index + 1)) }, "next →") : null));
}
