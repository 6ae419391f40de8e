// #/chain/<key>: the chain's timeline (POST /v1/search with every filter,
// newest first, shown a page at a time), a ranked question box
// (POST /v1/ranked-search, each hit's score parts), adding and forgetting a
// thought (thought-edit.js), and live updates from GET /v1/events (new
// thoughts appear at the top; with a filter set, a note in this view says so).

import { authHeaders, post } from "./api.js";
import { attempt, button, field, h, list, replace, route, status, when } from "./dom.js";
import { exportChainFile, exportMarkdown } from "./exports.js";
import { subscribe } from "./sse.js";
import { THOUGHT_TYPES, typeBadge } from "./types.js";
import { addThoughtForm, forgetControl } from "./thought-edit.js";

/** Rows added to the page per "Show more". */
export const PAGE = 50;

/** One thought as a list row: index, time, type, agent, content, tags. */
export function thoughtRow(chainKey, t, extra) {
  return h("li", { class: "thought", "data-index": t.index },
    h("div", { class: "meta" },
      h("a", { href: route("thought", chainKey, t.id), class: "idx" }, `#${t.index}`),
      typeBadge(t.thought_type),
      t.role && t.role !== "Memory" ? h("span", { class: "role" }, t.role) : null,
      h("span", { class: "agent" }, t.agent_name && t.agent_name !== t.agent_id ? `${t.agent_name} (${t.agent_id})` : t.agent_id),
      h("time", { datetime: t.timestamp }, when(t.timestamp)),
      h("span", { class: "imp", title: "importance" }, `imp ${Number(t.importance ?? 0).toFixed(2)}`)),
    t.forgotten ? h("p", { class: "content forgotten" }, h("em", {}, `Forgotten by ${t.forgotten.forgotten_by} at ${when(t.forgotten.forgotten_at)}: ${t.forgotten.reason}`))
      : h("p", { class: "content" }, t.content),
    t.tags?.length || t.concepts?.length ? h("p", { class: "labels" },
      (t.tags ?? []).map((x) => h("span", { class: "tag" }, `#${x}`)), (t.concepts ?? []).map((x) => h("span", { class: "concept" }, x))) : null,
    extra ?? null);
}

function filterForm(onSearch) {
  const inputs = {};
  const add = (name, label, attrs = {}) => {
    const [wrap, input] = field(label, { id: `flt-${name}`, ...attrs });
    inputs[name] = input;
    return wrap;
  };
  const form = h("form", { id: "filters", class: "filters" },
    add("text", "Text"),
    add("thought_types", "Thought types", { list: "thought-types", placeholder: "Decision, Insight" }),
    add("roles", "Roles", { placeholder: "Memory, Summary" }),
    add("tags_any", "Tags (any)"),
    add("concepts_any", "Concepts (any)"),
    add("agent_ids", "Agent ids"),
    add("min_importance", "Min importance", { type: "number", min: 0, max: 1, step: 0.05 }),
    add("since", "Since", { type: "datetime-local", step: 1 }),
    add("until", "Until", { type: "datetime-local", step: 1 }),
    add("limit", "Limit", { type: "number", min: 1, max: 100000, value: 500 }),
    add("include_invalidated", "Include superseded", { type: "checkbox" }),
    h("datalist", { id: "thought-types" }, THOUGHT_TYPES.map((t) => h("option", { value: t }))),
    h("button", { type: "submit" }, "Search"));
  const values = () => {
    const v = inputs;
    const body = {
      text: v.text.value.trim() || undefined,
      thought_types: list(v.thought_types.value),
      roles: list(v.roles.value),
      tags_any: list(v.tags_any.value),
      concepts_any: list(v.concepts_any.value),
      agent_ids: list(v.agent_ids.value),
      min_importance: v.min_importance.value === "" ? undefined : Number(v.min_importance.value),
      since: v.since.value ? new Date(v.since.value).toISOString() : undefined,
      until: v.until.value ? new Date(v.until.value).toISOString() : undefined,
      limit: v.limit.value === "" ? undefined : Number(v.limit.value),
      include_invalidated: v.include_invalidated.checked || undefined,
    };
    return Object.fromEntries(Object.entries(body).filter(([, x]) => x !== undefined));
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    onSearch(values());
  });
  return { form, values };
}

/** The score parts of a ranked hit that are not zero, largest first. */
function scoreParts(score) {
  return Object.entries(score ?? {}).filter(([k, v]) => k !== "total" && typeof v === "number" && v !== 0).sort((a, b) => b[1] - a[1]);
}

function rankedBox(chainKey, filters) {
  const [qWrap, q] = field("Question", { id: "ranked-text", tag: "textarea", rows: 2, required: true, placeholder: "what did we decide about the cache?" });
  qWrap.classList.add("question");
  // Enter asks; Shift+Enter starts a new line.
  q.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      q.form.requestSubmit();
    }
  });
  const [lWrap, limit] = field("Hits", { id: "ranked-limit", type: "number", min: 1, max: 100, value: 10 });
  const out = h("ol", { id: "ranked-results", class: "thoughts ranked" });
  const note = h("p", { class: "hint", id: "ranked-note" });
  const form = h("form", { id: "ranked-form", class: "filters" }, qWrap, lWrap, h("button", { type: "submit" }, "Ask"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const { limit: _ignored, include_invalidated, ...rest } = filters();
    const body = { ...rest, include_invalidated, chain_key: chainKey, text: q.value.trim(), limit: Number(limit.value) || 10 };
    const r = await attempt("Ranked search", () => post("/v1/ranked-search", body));
    if (!r) return;
    replace(note, `${r.results.length} of ${r.total} hit(s); backend ${r.backend}. Filters of the timeline apply.`);
    replace(out, r.results.map((hit) => thoughtRow(chainKey, hit.thought, h("div", { class: "score" },
      h("strong", {}, `score ${hit.score.total.toFixed(3)}`),
      h("ul", { class: "parts", "aria-label": "score parts" }, scoreParts(hit.score).map(([k, v]) => h("li", {}, `${k} ${v.toFixed(3)}`))),
      hit.matched_terms?.length ? h("span", { class: "terms" }, `matched: ${hit.matched_terms.join(", ")}`) : null,
      hit.match_sources?.length ? h("span", { class: "terms" }, `in: ${hit.match_sources.join(", ")}`) : null))));
  });
  return h("section", { "aria-labelledby": "ranked-title" }, h("h2", { id: "ranked-title" }, "Ask (ranked search)"), form, note, out);
}

export async function timelineView(main, chainKey) {
  const head = await post("/v1/head", { chain_key: chainKey });
  const listEl = h("ol", { id: "timeline", class: "thoughts", "aria-label": "Thoughts, newest first" });
  const summary = h("p", { id: "timeline-summary", class: "hint" });
  const more = h("button", { type: "button", id: "show-more", hidden: true }, `Show ${PAGE} more`);
  const live = h("span", { id: "live-state", class: "live" }, "connecting…");
  const countText = h("span", { id: "thought-count" }, `${head.thought_count} thought(s)`);
  // This chain's live notes (new thoughts under a filter, a lagged stream):
  // part of this view, so they go when the user leaves it.
  const banner = h("p", { id: "new-thoughts", class: "banner", role: "status", hidden: true });
  let shown = [];
  let rendered = 0;
  let filtered = false;
  let count = head.thought_count;
  const seen = new Set();

  const row = (t) => thoughtRow(chainKey, t, t.forgotten ? null : forgetControl(chainKey, t, (now) => {
    shown = shown.map((x) => (x.id === now.id ? now : x));
    listEl.querySelector(`li[data-index="${now.index}"]`)?.replaceWith(row(now));
  }));
  const showCounts = () => {
    countText.textContent = `${count} thought(s)`;
    replace(summary, `Showing ${rendered} of ${shown.length} match(es), newest first; the chain has ${count} thought(s).`);
  };
  const renderMore = () => {
    const next = shown.slice(rendered, rendered + PAGE);
    listEl.append(...next.map(row));
    rendered += next.length;
    more.hidden = rendered >= shown.length;
    showCounts();
  };
  more.addEventListener("click", renderMore);
  const note = (...text) => {
    replace(banner, ...text, " ", button("Search again", () => search(values()), { id: "new-thoughts-refresh" }));
    banner.hidden = false;
  };

  const { form, values } = filterForm((f) => search(f));
  async function search(f) {
    const r = await attempt("Search", () => post("/v1/search", { ...f, chain_key: chainKey }));
    if (!r) return;
    banner.hidden = true;
    filtered = Object.keys(f).some((k) => k !== "limit");
    shown = r.thoughts.slice().reverse();
    for (const t of shown) seen.add(t.id);
    count = Math.max(count, (shown[0]?.index ?? -1) + 1);
    rendered = 0;
    listEl.replaceChildren();
    renderMore();
  }

  /** A thought appended (from the stream or the add form) goes on top, once. */
  const arrived = (thought) => {
    if (seen.has(thought.id)) return;
    seen.add(thought.id);
    count = Math.max(count, thought.index + 1);
    if (filtered) {
      showCounts();
      note(`New thought #${thought.index} arrived; search again to see it among the filtered results.`);
      return;
    }
    shown.unshift(thought);
    rendered++;
    const r = row(thought);
    r.classList.add("fresh");
    listEl.prepend(r);
    showCounts();
  };

  const exportsBar = h("p", { class: "actions" },
    h("a", { href: route("agents", chainKey) }, "Agents"),
    h("a", { href: route("graph", chainKey), id: "graph-link" }, "Relation graph"),
    h("a", { href: route("coordination", chainKey), id: "coordination-link" }, "Coordination"),
    button("Export Markdown", () => exportMarkdown(chainKey)),
    button("Download chain file", () => exportChainFile(chainKey)));

  replace(main,
    h("h1", {}, "Chain ", h("code", {}, chainKey)),
    h("p", { class: "facts-line" },
      countText, " · head ", h("code", { title: head.head_hash ?? "" }, (head.head_hash ?? "—").slice(0, 16)),
      " · ", h("span", { class: head.integrity_ok ? "ok" : "error" }, head.integrity_ok ? "verified" : "integrity FAILED"), " · ", live),
    exportsBar,
    addThoughtForm(chainKey, arrived),
    rankedBox(chainKey, values),
    h("section", { "aria-labelledby": "timeline-title" }, h("h2", { id: "timeline-title" }, "Timeline"), form, banner, summary, listEl, more));

  await search(values());

  // Live: new thoughts go on top (when no filter is set; otherwise a note).
  const stop = new AbortController();
  subscribe(`/v1/events?chain_key=${encodeURIComponent(chainKey)}`, authHeaders(), {
    signal: stop.signal,
    onState: (s) => {
      live.textContent = s.text;
      live.dataset.live = String(s.live);
    },
    onEvent: (e) => {
      if (e.event === "lagged") {
        // The stream fell behind: read the timeline again (no gap then).
        search(values());
        return;
      }
      if (e.event === "chain_deleted") {
        if (JSON.parse(e.data).chain_key === chainKey) {
          status(`Chain ${chainKey} was deleted.`, "error", { keep: false });
          live.textContent = "chain deleted";
        }
        return;
      }
      if (e.event === "ready") {
        // A thought written between the first read and the subscription.
        const next = JSON.parse(e.data).chains?.[chainKey];
        if (typeof next === "number" && next > count) search(values());
        return;
      }
      if (e.event !== "thought") return;
      const { chain_key: key, thought } = JSON.parse(e.data);
      if (key === chainKey) arrived(thought);
    },
  });
  return () => stop.abort();
}
