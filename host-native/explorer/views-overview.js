// #/overview, the landing page: every chain the token may read with its
// counts, charts of thoughts by type and by agent over time, the most
// recent thoughts across chains, kept live from GET /v1/events (all
// chains). Read-only: the chain operations are on #/admin.

import { authHeaders, get, post } from "./api.js";
import { h, replace, route, table, when } from "./dom.js";
import { activityChart, buckets } from "./chart.js";
import { subscribe } from "./sse.js";
import { typeBadge } from "./types.js";

/** Thoughts read per chain for the charts (the newest). */
export const PER_CHAIN = 500;
/** Rows of "Recent activity". */
export const RECENT = 12;

function clip(text, n = 220) {
  const s = String(text ?? "");
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** One line of recent activity: time, chain, type, agent, content. */
function activityRow(chainKey, t) {
  return h("li", { class: "activity", "data-chain": chainKey, "data-index": t.index },
    h("div", { class: "meta" },
      h("time", { datetime: t.timestamp }, when(t.timestamp)),
      h("a", { href: route("chain", chainKey), class: "chain" }, chainKey),
      h("a", { href: route("thought", chainKey, t.id), class: "idx" }, `#${t.index}`),
      typeBadge(t.thought_type),
      h("span", { class: "agent" }, t.agent_name && t.agent_name !== t.agent_id ? t.agent_name : t.agent_id)),
    h("p", { class: "content" }, t.forgotten ? h("em", { class: "muted" }, "forgotten") : clip(t.content)));
}

export async function overviewView(main) {
  const listing = await get("/v1/chains");
  const chains = listing.chains;
  const reads = await Promise.all(chains.map((c) => post("/v1/search", { chain_key: c.chain_key, limit: PER_CHAIN }).then((r) => r.thoughts).catch(() => [])));
  /** Every thought read, as [chainKey, thought]. */
  const all = chains.flatMap((c, i) => reads[i].map((t) => [c.chain_key, t]));
  const counts = new Map(chains.map((c) => [c.chain_key, c.thought_count]));
  const lastWrite = new Map(chains.map((c, i) => [c.chain_key, reads[i].at(-1)?.timestamp]));

  const totals = h("p", { id: "overview-totals", class: "facts-line" });
  const chainTable = h("div", { id: "overview-chains" });
  const charts = h("div", { id: "overview-charts", class: "charts" });
  const recent = h("ol", { id: "recent-activity", class: "thoughts activity-list", "aria-label": "Recent thoughts, newest first" });
  const live = h("span", { id: "overview-live", class: "live" }, "connecting…");

  const drawTotals = () => {
    const thoughts = [...counts.values()].reduce((a, b) => a + b, 0);
    replace(totals, `${counts.size} chain(s), ${thoughts} thought(s); new thoughts go to `, h("code", {}, listing.default_chain_key),
      " when a request names none · ", live);
  };
  const drawChains = () => replace(chainTable, counts.size
    ? table(["chain", "thoughts", "agents", "last write", "views"], [...counts.keys()].sort().map((k) => {
      const c = chains.find((x) => x.chain_key === k);
      return [
        h("a", { href: route("chain", k), class: "chain-link" }, k),
        h("span", { class: "count", "data-chain": k }, String(counts.get(k))),
        c ? String(c.agent_count) : "—",
        when(lastWrite.get(k)),
        h("span", { class: "actions" }, h("a", { href: route("agents", k) }, "agents"), h("a", { href: route("graph", k) }, "relation graph"),
          h("a", { href: route("coordination", k) }, "coordination")),
      ];
    }), "Chains this token may read")
    : h("p", { class: "empty" }, "No chains yet: add a thought from a chain's page, or import a MEMORY.md on the admin page."));
  const drawCharts = () => {
    const now = Date.now();
    const at = (t) => Date.parse(t.timestamp);
    const agentIndex = new Map();
    replace(charts,
      activityChart(buckets(all.map(([, t]) => ({ at: at(t), series: t.thought_type })), now), { title: "Thoughts by type", attr: (s) => ({ "data-type": s }) }),
      activityChart(buckets(all.map(([, t]) => ({ at: at(t), series: t.agent_id })), now), {
        title: "Thoughts by agent",
        attr: (s) => {
          if (!agentIndex.has(s)) agentIndex.set(s, agentIndex.size % 12);
          return { "data-series": agentIndex.get(s) };
        },
      }));
  };
  const sorted = all.slice().sort((a, b) => Date.parse(b[1].timestamp) - Date.parse(a[1].timestamp) || b[1].index - a[1].index);
  replace(recent, sorted.slice(0, RECENT).map(([k, t]) => activityRow(k, t)));
  drawTotals();
  drawChains();
  drawCharts();

  replace(main,
    h("h1", {}, "Overview"),
    totals,
    h("section", { "aria-labelledby": "ov-chains" }, h("h2", { id: "ov-chains" }, "Chains"), chainTable),
    h("section", { "aria-labelledby": "ov-activity" }, h("h2", { id: "ov-activity" }, "Activity over time"),
      h("p", { class: "hint" }, `The newest ${PER_CHAIN} thoughts of each chain, counted per time bucket (UTC).`), charts),
    h("section", { "aria-labelledby": "ov-recent" }, h("h2", { id: "ov-recent" }, "Recent activity across chains"),
      recent.childElementCount ? null : h("p", { class: "empty", id: "recent-empty" }, "Nothing yet."), recent));

  const stop = new AbortController();
  subscribe("/v1/events", authHeaders(), {
    signal: stop.signal,
    onState: (s) => {
      live.textContent = s.text;
      live.dataset.live = String(s.live);
    },
    onEvent: (e) => {
      if (e.event === "chain_deleted") {
        counts.delete(JSON.parse(e.data).chain_key);
        drawTotals();
        drawChains();
        return;
      }
      if (e.event !== "thought") return;
      const { chain_key: key, thought } = JSON.parse(e.data);
      if (all.some(([k, t]) => k === key && t.id === thought.id)) return;
      all.push([key, thought]);
      counts.set(key, Math.max(counts.get(key) ?? 0, thought.index + 1));
      lastWrite.set(key, thought.timestamp);
      const row = activityRow(key, thought);
      row.classList.add("fresh");
      main.querySelector("#recent-empty")?.remove();
      recent.prepend(row);
      while (recent.childElementCount > RECENT) recent.lastElementChild.remove();
      drawTotals();
      drawChains();
      drawCharts();
    },
  });
  return () => stop.abort();
}
