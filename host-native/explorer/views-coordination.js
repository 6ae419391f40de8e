// #/coordination/<key>: who works on a chain now and on what. The agents
// present (POST /v1/presence/list), the claims held with their time left
// counting down in the page (POST /v1/claims/list; a claim is dropped when
// it reaches zero), the undecided reviews (POST /v1/reviews/list; decided
// ones on request) and each fact's history on a time line
// (POST /v1/facts/query with active_only: false; fact-timeline.js). Live:
// each coordination event of GET /v1/events re-reads the list it concerns
// (debounced); a (re)connection re-reads them all. It changes nothing.

import { authHeaders, post } from "./api.js";
import { attempt, clip, field, h, replace, route, status, when } from "./dom.js";
import { subscribe } from "./sse.js";
import { factGroups, factTimeline, holds } from "./fact-timeline.js";

/** How long a burst of events waits before its list is read again. */
export const DEBOUNCE_MS = 200;
/** Subject-predicate groups drawn at most (the ones changed last). */
export const MAX_FACT_GROUPS = 50;
/** How often the time left and idle times are redrawn. */
const TICK_MS = 250;

/** The list each coordination event re-reads. */
export const EVENT_LISTS = {
  claim_acquired: "claims",
  claim_released: "claims",
  claim_expired: "claims",
  fact_recorded: "facts",
  fact_closed: "facts",
  review_requested: "reviews",
  review_decided: "reviews",
  presence_updated: "presence",
};

/** `ms` as "1h 02m 03s", "4m 05s" or "12s" (never below 0); whole seconds by `round`. */
export function duration(ms, round = Math.floor) {
  const total = Math.max(0, round(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const pad = (n) => String(n).padStart(2, "0");
  if (hours) return `${hours}h ${pad(minutes)}m ${pad(seconds)}s`;
  if (minutes) return `${minutes}m ${pad(seconds)}s`;
  return `${seconds}s`;
}

/** The time left of a claim expiring at `expiresAt` (RFC 3339) at `now`, in ms (0 or less: ended). */
export function remainingMs(expiresAt, now = Date.now()) {
  return Date.parse(expiresAt) - now;
}

/** A table whose rows are `[attrs, cells]` (cells: nodes or strings). */
function grid(id, headers, rows, caption) {
  return h("table", { id },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows.map(([attrs, cells]) => h("tr", attrs, cells.map((c) => h("td", {}, c ?? "—"))))));
}

function agentName(a) {
  return a.display_name && a.display_name !== a.agent_id ? `${a.display_name} (${a.agent_id})` : a.agent_id;
}

function presenceTable(agents, now) {
  if (!agents.length) return h("p", { class: "empty" }, "No agent has sent a heartbeat on this chain in the last 30 minutes.");
  return grid("presence-table", ["agent", "doing", "file", "tool", "session", "last seen"], agents.map((a) => [
    { "data-agent": a.agent_id, "data-session": a.session_id ?? "" },
    [
      h("span", { class: "agent" }, agentName(a)),
      a.current_action ? h("span", { class: "action" }, a.current_action) : null,
      a.current_file ? h("code", { class: "file" }, a.current_file) : null,
      a.tool,
      a.session_id ? h("code", {}, a.session_id) : null,
      h("span", {}, h("time", { datetime: a.last_seen }, when(a.last_seen)), " · ",
        h("span", { class: "idle", "data-last-seen": a.last_seen }, `idle ${duration(now - Date.parse(a.last_seen))}`)),
    ],
  ]), "Agents seen in the last 30 minutes, the most recently seen first");
}

function claimsTable(claims, now) {
  if (!claims.length) return h("p", { class: "empty" }, "No claim is held.");
  return grid("claims-table", ["key", "holder", "fencing token", "acquired", "expires", "time left", "metadata"], claims.map((c) => [
    { "data-key": c.key },
    [
      h("code", { class: "claim-key" }, c.key),
      h("span", { class: "holder" }, c.holder),
      String(c.fencing_token),
      h("time", { datetime: c.acquired_at }, when(c.acquired_at)),
      h("time", { datetime: c.expires_at }, when(c.expires_at)),
      h("span", { class: "remaining", "data-expires": c.expires_at }, duration(remainingMs(c.expires_at, now), Math.ceil)),
      c.metadata === null || c.metadata === undefined ? null : h("code", { class: "metadata", title: JSON.stringify(c.metadata) }, clip(JSON.stringify(c.metadata), 120)),
    ],
  ]), "Claims held now, by key; the time left counts down in this page");
}

function reviewsTable(reviews, withDecided) {
  if (!reviews.length) return h("p", { class: "empty" }, withDecided ? "No review was asked for on this chain." : "No open review.");
  return grid("reviews-table", ["subject", "requester", "reviewers", "claim", "requested", "deadline", "status", "decision"], reviews.map((r) => [
    { "data-review": r.review_id, "data-status": r.status },
    [
      h("span", { class: "subject" }, r.subject),
      r.requester,
      r.reviewers.length ? r.reviewers.join(", ") : h("span", { class: "muted" }, "anyone but the requester"),
      r.claim_key ? h("code", {}, r.claim_key) : null,
      h("time", { datetime: r.requested_at }, when(r.requested_at)),
      h("time", { datetime: r.deadline }, when(r.deadline)),
      h("span", { class: "review-status", "data-status": r.status }, r.status.replace("_", " ")),
      r.decision ? h("span", { class: "decision" }, `${r.decision.replace("_", " ")} by ${r.decided_by ?? "?"} at ${when(r.decided_at)}`, r.comment ? h("span", { class: "comment" }, `: ${r.comment}`) : null) : null,
    ],
  ]), withDecided ? "Reviews, newest first (decided ones included)" : "Reviews not yet decided, newest first");
}

function factGroupBlock(chainKey, group, now) {
  const rows = group.facts.slice().reverse().map((f) => [
    { "data-fact": f.fact_id, class: holds(f, now) ? "current" : null },
    [
      h("span", { class: "object" }, f.object),
      h("time", { datetime: f.valid_from }, when(f.valid_from)),
      f.valid_to ? h("time", { datetime: f.valid_to }, when(f.valid_to)) : holds(f, now) ? h("span", { class: "ok" }, "now (active)") : "open (holds from its start)",
      f.recorded_by,
      f.confidence === null || f.confidence === undefined ? null : Number(f.confidence).toFixed(2),
      h("a", { href: route("thought", chainKey, f.fact_id) }, `#${f.thought_index}`),
    ],
  ]);
  return h("figure", { class: "fact-group", "data-subject": group.subject, "data-predicate": group.predicate },
    h("figcaption", {}, h("strong", {}, group.subject), " · ", h("span", { class: "predicate" }, group.predicate),
      h("span", { class: "muted" }, ` (${group.facts.length} value(s))`)),
    h("div", { class: "graph-scroll" }, factTimeline(group, now)),
    grid(null, ["value", "from", "to", "recorded by", "confidence", "thought"], rows, `${group.subject} ${group.predicate}, latest first`));
}

export async function coordinationView(main, chainKey) {
  const state = { presence: [], claims: [], reviews: [], facts: [] };
  const boxes = {
    presence: h("div", { id: "presence" }),
    claims: h("div", { id: "claims" }),
    reviews: h("div", { id: "reviews" }),
    facts: h("div", { id: "facts" }),
  };
  const factsNote = h("p", { class: "hint", id: "facts-summary" });
  const live = h("span", { id: "coord-live", class: "live" }, "connecting…");
  const decided = h("input", { id: "reviews-decided", type: "checkbox" });
  const decidedWrap = h("label", { for: "reviews-decided", class: "check" }, decided, " Show decided reviews too");
  const [subjectWrap, subject] = field("Subject", { id: "facts-subject" });
  const [predicateWrap, predicate] = field("Predicate", { id: "facts-predicate" });
  const factsForm = h("form", { id: "facts-form", class: "filters" }, subjectWrap, predicateWrap, h("button", { type: "submit" }, "Show"));

  let factsDrawnAt = 0;
  const draw = {
    presence: () => replace(boxes.presence, presenceTable(state.presence, Date.now())),
    claims: () => replace(boxes.claims, claimsTable(state.claims, Date.now())),
    reviews: () => replace(boxes.reviews, reviewsTable(state.reviews, decided.checked)),
    facts: () => {
      const now = Date.now();
      const groups = factGroups(state.facts);
      const shown = groups.slice(0, MAX_FACT_GROUPS);
      const filtered = subject.value.trim() || predicate.value.trim();
      replace(factsNote, groups.length
        ? `${state.facts.length} fact(s) in ${groups.length} subject-predicate pair(s)${shown.length < groups.length ? `; the ${shown.length} changed last are drawn` : ""}. Each value runs from its valid_from to its valid_to (to now while active); the one holding now is highlighted. Times in UTC.`
        : "");
      replace(boxes.facts, shown.length ? shown.map((g) => factGroupBlock(chainKey, g, now))
        : h("p", { class: "empty" }, filtered ? "No fact matches." : "No fact was recorded on this chain."));
      factsDrawnAt = now;
    },
  };

  const reads = {
    presence: () => post("/v1/presence/list", { chain_key: chainKey }).then((r) => r.agents),
    claims: () => post("/v1/claims/list", { chain_key: chainKey }).then((r) => r.claims),
    reviews: () => post("/v1/reviews/list", { chain_key: chainKey, include_decided: decided.checked || undefined }).then((r) => r.reviews),
    facts: () => post("/v1/facts/query", {
      chain_key: chainKey,
      subject: subject.value.trim() || undefined,
      predicate: predicate.value.trim() || undefined,
      active_only: false,
    }).then((r) => r.facts),
  };
  const TITLES = { presence: "Presence", claims: "Claims", reviews: "Reviews", facts: "Facts" };
  /** Reads of each list started so far: an answer older than the newest read is dropped. */
  const sequence = { presence: 0, claims: 0, reviews: 0, facts: 0 };
  async function load(name) {
    const mine = ++sequence[name];
    const value = await attempt(`Reading the ${TITLES[name].toLowerCase()}`, reads[name]);
    if (value === undefined || mine !== sequence[name]) return;
    state[name] = value;
    draw[name]();
  }

  // The first read: a failure is the view's (the router shows it).
  const first = await Promise.all(Object.keys(reads).map((name) => reads[name]()));
  Object.keys(reads).forEach((name, i) => {
    state[name] = first[i];
    draw[name]();
  });

  decided.addEventListener("change", () => load("reviews"));
  factsForm.addEventListener("submit", (e) => {
    e.preventDefault();
    load("facts");
  });

  const section = (name, title, ...extra) => h("section", { "aria-labelledby": `${name}-title` },
    h("h2", { id: `${name}-title` }, title), ...extra, boxes[name]);
  replace(main,
    h("p", { class: "crumbs" }, h("a", { href: route("chain", chainKey) }, `← ${chainKey}`)),
    h("h1", {}, "Coordination on ", h("code", {}, chainKey)),
    h("p", { class: "facts-line" }, "Who is working on this chain and on what: presence, claims, reviews and facts. ", live),
    section("presence", "Who is present"),
    section("claims", "Claims"),
    section("reviews", "Reviews", h("p", {}, decidedWrap)),
    section("facts", "Facts over time", factsForm, factsNote));

  // The time left of each claim and the idle time of each agent, redrawn
  // in place; a claim reaching zero is dropped (the daemon's claim_expired
  // then re-reads the list).
  const tick = () => {
    const now = Date.now();
    const ended = state.claims.filter((c) => remainingMs(c.expires_at, now) <= 0);
    if (ended.length) {
      state.claims = state.claims.filter((c) => !ended.includes(c));
      draw.claims();
    }
    for (const span of boxes.claims.querySelectorAll(".remaining")) {
      span.textContent = duration(remainingMs(span.dataset.expires, now), Math.ceil);
    }
    for (const span of boxes.presence.querySelectorAll(".idle")) {
      span.textContent = `idle ${duration(now - Date.parse(span.dataset.lastSeen))}`;
    }
    // An active fact's segment runs to now: redraw the time lines each minute.
    if (now - factsDrawnAt > 60_000) draw.facts();
  };
  const ticker = setInterval(tick, TICK_MS);

  const timers = {};
  const soon = (name) => {
    clearTimeout(timers[name]);
    timers[name] = setTimeout(() => load(name), DEBOUNCE_MS);
  };
  const stop = new AbortController();
  subscribe(`/v1/events?chain_key=${encodeURIComponent(chainKey)}`, authHeaders(), {
    signal: stop.signal,
    onState: (s) => {
      live.textContent = s.text;
      live.dataset.live = String(s.live);
    },
    onEvent: (e) => {
      if (e.event === "ready" || e.event === "lagged") {
        // Connected (again) or behind: what changed meanwhile is not all
        // resent (presence and expiries are live only): read every list.
        for (const name of Object.keys(reads)) soon(name);
        return;
      }
      if (e.event === "chain_deleted") {
        if (JSON.parse(e.data).chain_key === chainKey) {
          status(`Chain ${chainKey} was deleted.`, "error", { keep: false });
          live.textContent = "chain deleted";
        }
        return;
      }
      const name = EVENT_LISTS[e.event];
      if (!name) return;
      let key;
      try {
        key = JSON.parse(e.data).chain_key;
      } catch {
        return;
      }
      if (key === chainKey) soon(name);
    },
  });
  return () => {
    stop.abort();
    clearInterval(ticker);
    for (const t of Object.values(timers)) clearTimeout(t);
  };
}
