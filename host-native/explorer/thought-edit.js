// Changing a chain from its timeline: adding a thought (POST /v1/thoughts)
// and forgetting one (POST /v1/thoughts/forget: content, tags and concepts
// erased for good, the chain still verifies; admin scope). A token that may
// not do it gets the page's one token message (a 401/403 from the API).

import { post } from "./api.js";
import { attempt, field, h, list, select, status } from "./dom.js";
import { THOUGHT_TYPES } from "./types.js";

/** A form adding a thought to `chainKey`; calls `onAdded(thought)`. */
export function addThoughtForm(chainKey, onAdded) {
  const [typeWrap, type] = select("Type", THOUGHT_TYPES, { id: "add-type" });
  type.value = "Finding";
  const [agentWrap, agent] = field("Agent id", { id: "add-agent", required: true, value: sessionStorage.getItem("mentisdb.explorer.agent") ?? "", autocomplete: "off" });
  const [impWrap, importance] = field("Importance (0–1)", { id: "add-importance", type: "number", min: 0, max: 1, step: 0.05, placeholder: "0.5" });
  const [tagsWrap, tags] = field("Tags (comma-separated)", { id: "add-tags" });
  const [textWrap, content] = field("Content", { id: "add-content", tag: "textarea", rows: 3, required: true });
  textWrap.classList.add("full");
  const form = h("form", { id: "add-thought-form", class: "op wide" },
    h("div", { class: "filters" }, typeWrap, agentWrap, impWrap, tagsWrap), textWrap, h("button", { type: "submit" }, "Add thought"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = { chain_key: chainKey, thought_type: type.value, agent_id: agent.value.trim(), content: content.value };
    if (importance.value !== "") body.importance = Number(importance.value);
    if (list(tags.value)) body.tags = list(tags.value);
    const r = await attempt("Add thought", () => post("/v1/thoughts", body));
    if (!r) return;
    sessionStorage.setItem("mentisdb.explorer.agent", body.agent_id);
    content.value = "";
    tags.value = "";
    status(`Added thought #${r.thought.index} to ${chainKey}.`, "info", { keep: false });
    onAdded(r.thought);
  });
  return h("details", { class: "add-thought", id: "add-thought" }, h("summary", {}, "Add a thought"),
    h("p", { class: "hint" }, "Appends to this chain as the agent named (needs a token with write scope when tokens are on)."), form);
}

/**
 * A "Forget…" disclosure for thought `t`: a reason, a confirmation naming
 * the thought and chain, then the forget call; `onForgotten(thought)` gets
 * the thought as it is now.
 */
export function forgetControl(chainKey, t, onForgotten) {
  const [reasonWrap, reason] = field("Reason (kept with it)", { id: `forget-reason-${t.index}`, required: true });
  const form = h("form", { class: "forget-form" }, reasonWrap,
    h("button", { type: "submit", class: "danger", "aria-label": `Forget thought #${t.index}` }, "Forget for good"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!confirm(`Forget thought #${t.index} of “${chainKey}”? Its content, tags and concepts are erased for good; its index, type, time and hash stay.`)) return;
    const r = await attempt("Forget", () => post("/v1/thoughts/forget", { chain_key: chainKey, thought_id: t.id, reason: reason.value.trim() }));
    if (!r) return;
    status(`Forgot thought #${t.index} of ${chainKey}.`, "info", { keep: false });
    onForgotten(r.thought);
  });
  return h("details", { class: "forget" }, h("summary", {}, "Forget…"), form);
}
