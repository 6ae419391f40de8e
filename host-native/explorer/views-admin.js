// #/admin: what changes or removes chains for good, kept off the landing
// page: delete a chain, branch one from a thought, merge one into another
// (two distinct chains, named in the confirmation; a chain is never merged
// into itself: the page refuses before calling the API), and MEMORY.md import.

import { get, post } from "./api.js";
import { attempt, button, field, h, replace, route, select, status, table } from "./dom.js";

const CHOOSE = ["", "— choose a chain —"];

/** Why merging `source` into `target` is refused, or null when it may go ahead. */
export function mergeProblem(source, target) {
  if (!source || !target) return "Choose both chains.";
  if (source === target) return `A chain cannot be merged into itself (“${source}”): choose two different chains.`;
  return null;
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

function branchForm(keys) {
  const [srcWrap, src] = select("Source chain", [CHOOSE, ...keys], { id: "branch-source", required: true });
  const [atWrap, at] = field("At thought (index or id)", { id: "branch-at", required: true });
  const [newWrap, newKey] = field("New chain key", { id: "branch-key", required: true });
  const form = h("form", { class: "op", id: "branch-form" }, h("h3", {}, "Branch"),
    h("p", { class: "hint" }, "A new chain starting from one thought of the source; the thoughts keep their ids and content, the new chain has its own hash chain."),
    srcWrap, atWrap, newWrap, h("button", { type: "submit" }, "Branch"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const r = await attempt("Branch", async () => post("/v1/chains/branch", {
      source_chain_key: src.value, branch_thought_id: await thoughtId(src.value, at.value.trim()), branch_chain_key: newKey.value.trim(),
    }));
    if (r) {
      status(`Branched ${r.source_chain_key} into ${r.branch_chain_key}.`);
      location.hash = route("chain", r.branch_chain_key);
    }
  });
  return form;
}

function mergeForm(keys) {
  const [fromWrap, from] = select("Merge this chain (deleted afterwards)", [CHOOSE, ...keys], { id: "merge-source", required: true });
  const [intoWrap, into] = select("into this chain (kept)", [CHOOSE, ...keys], { id: "merge-target", required: true });
  const problem = h("p", { id: "merge-problem", class: "error", role: "alert", hidden: true });
  // The chain chosen as source cannot also be the target.
  from.addEventListener("change", () => {
    for (const o of into.options) o.disabled = o.value !== "" && o.value === from.value;
    if (into.value === from.value) into.value = "";
  });
  const form = h("form", { class: "op", id: "merge-form", novalidate: true }, h("h3", {}, "Merge"),
    h("p", { class: "hint" }, "Copies the first chain's thoughts after the second's, then deletes the first."),
    fromWrap, intoWrap, problem, h("button", { type: "submit", class: "danger" }, "Merge"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const source = from.value;
    const target = into.value;
    const why = mergeProblem(source, target);
    problem.hidden = !why;
    problem.textContent = why ?? "";
    if (why) return;
    if (!confirm(`Merge “${source}” into “${target}”? The thoughts of “${source}” are copied after those of “${target}”, then “${source}” is deleted.`)) return;
    const r = await attempt("Merge", () => post("/v1/chains/merge", { source_chain_key: source, target_chain_key: target }));
    if (r) {
      status(`Merged: ${r.thoughts_copied} thought(s) copied into ${target}${r.source_deleted ? `; ${source} deleted` : ""}.`);
      location.hash = route("chain", target);
    }
  });
  if (keys.length < 2) {
    for (const x of form.querySelectorAll("select, button")) x.disabled = true;
    problem.hidden = false;
    problem.textContent = "Merging needs two chains.";
    problem.removeAttribute("role");
  }
  return form;
}

function importForm(keys) {
  const [keyWrap, key] = field("Into chain", { id: "import-chain", list: "chain-keys", required: true });
  const [agentWrap, agent] = field("Agent for lines that name none", { id: "import-agent" });
  const [mdWrap, md] = field("MEMORY.md text", { id: "import-markdown", tag: "textarea", rows: 8, required: true });
  const form = h("form", { class: "op wide", id: "import-form" }, h("datalist", { id: "chain-keys" }, keys.map((k) => h("option", { value: k }))),
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

export async function adminView(main) {
  const listing = await get("/v1/chains");
  const keys = listing.chains.map((c) => c.chain_key).sort();
  const rows = listing.chains.slice().sort((a, b) => a.chain_key.localeCompare(b.chain_key)).map((c) => [
    h("a", { href: route("chain", c.chain_key) }, c.chain_key),
    String(c.thought_count),
    button("Delete", () => deleteChain(c.chain_key), { class: "danger", "aria-label": `Delete chain ${c.chain_key}` }),
  ]);
  replace(main,
    h("h1", {}, "Admin"),
    h("p", { class: "hint warning-note" }, "These operations change or remove chains for good and need a token with admin scope. Each asks before it acts."),
    h("section", { "aria-labelledby": "admin-chains" }, h("h2", { id: "admin-chains" }, "Delete a chain"),
      keys.length ? table(["chain", "thoughts", "delete"], rows, "Chains") : h("p", { class: "empty" }, "No chains.")),
    h("section", { "aria-labelledby": "ops-title" }, h("h2", { id: "ops-title" }, "Branch and merge"), h("div", { class: "ops" }, branchForm(keys), mergeForm(keys))),
    importForm(keys));
}
