// The explorer's entry module: the token box, status line, and hash routing
// to the views (#/overview, the landing page; #/chains, #/chain/<key>,
// #/graph/<key>, #/coordination/<key>, #/thought/<key>/<id>,
// #/agents/<key>, #/skills, #/skill/<id>, #/webhooks, #/admin). Each view is a function
// `(main, ...params) => Promise<cleanup | void>` in a views-*.js module.
// A missing or refused token is explained once per screen, in #auth-message.

import { onAuthError, setToken, token } from "./api.js";
import { clearStatus, h, replace, status } from "./dom.js";
import { overviewView } from "./views-overview.js";
import { chainsView } from "./views-chains.js";
import { graphView } from "./views-graph.js";
import { coordinationView } from "./views-coordination.js";
import { adminView } from "./views-admin.js";
import { timelineView } from "./views-timeline.js";
import { thoughtView } from "./views-thought.js";
import { agentsView } from "./views-agents.js";
import { skillsView, skillView } from "./views-skills.js";
import { webhooksView } from "./views-webhooks.js";

const HOME = "#/overview";

const routes = [
  [/^#\/overview$/, overviewView],
  [/^#\/chains$/, chainsView],
  [/^#\/graph\/([^/]+)$/, graphView],
  [/^#\/coordination\/([^/]+)$/, coordinationView],
  [/^#\/admin$/, adminView],
  [/^#\/chain\/([^/]+)$/, timelineView],
  [/^#\/thought\/([^/]+)\/([^/]+)$/, thoughtView],
  [/^#\/agents\/([^/]+)$/, agentsView],
  [/^#\/skills$/, skillsView],
  [/^#\/skill\/([^/]+)$/, skillView],
  [/^#\/webhooks$/, webhooksView],
];

const main = document.getElementById("view");
const authMessage = document.getElementById("auth-message");
const tokenInput = document.getElementById("token-input");
let cleanup = null;

function showAuthProblem(error) {
  authMessage.hidden = false;
  // The daemon's 401 text only repeats this; a 403 names the missing scope.
  const what = error.status === 401
    ? "The daemon needs an API token (or did not accept this one). Paste it in the API token box above and choose “Use token”."
    : "This token may not do that (HTTP 403).";
  replace(authMessage, h("strong", {}, what), error.status === 401 ? null : ` ${error.message}`);
  document.body.dataset.auth = String(error.status);
  tokenInput.focus();
}

onAuthError(showAuthProblem);

let generation = 0;

/**
 * Draws the view of the current hash. Each view draws into its own
 * detached element, shown only if no newer render started meanwhile (a
 * slow view never overwrites a newer one; its cleanup runs at once).
 */
async function render() {
  const mine = ++generation;
  const hash = location.hash && location.hash !== "#/" ? location.hash : HOME;
  if (cleanup) {
    try {
      cleanup();
    } catch {
      // a view's cleanup never blocks the next view
    }
    cleanup = null;
  }
  const match = routes.map(([re, view]) => [hash.match(re), view]).find(([m]) => m);
  document.body.dataset.ready = "false";
  clearStatus();
  if (!match) {
    replace(main, h("h1", {}, "Not found"), h("p", {}, "No view at ", h("code", {}, hash), ". ", h("a", { href: HOME }, "Go to the overview.")));
    document.body.dataset.ready = "true";
    return;
  }
  const [m, view] = match;
  const params = m.slice(1).map((p) => decodeURIComponent(p));
  if (!main.querySelector(".loading")) replace(main, h("p", { class: "loading" }, "Loading…"));
  const target = h("div", { class: "view" });
  let done = null;
  try {
    done = (await view(target, ...params)) ?? null;
  } catch (e) {
    if (e.status === 401 || e.status === 403) {
      // #auth-message already says what is needed: one prompt, not three.
      replace(target, h("h1", {}, "Could not load this view"), h("p", { class: "muted" }, "See the message above; the view is drawn once the daemon answers."));
    } else {
      replace(target, h("h1", {}, "Could not load this view"), h("p", { class: "error" }, e.message));
      if (mine === generation) status(e.message, "error", { keep: false });
    }
  }
  if (mine !== generation) {
    if (done) done();
    return;
  }
  cleanup = done;
  markNav(hash);
  replace(main, target);
  document.body.dataset.ready = "true";
}

/** Marks the nav link of the current section with aria-current. */
function markNav(hash) {
  const section = hash.match(/^#\/[^/]+/)?.[0];
  const owner = { "#/chain": "#/chains", "#/graph": "#/chains", "#/coordination": "#/chains", "#/thought": "#/chains", "#/agents": "#/chains", "#/skill": "#/skills" }[section] ?? section;
  for (const a of document.querySelectorAll(".top nav a")) {
    if (a.getAttribute("href") === owner) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

document.getElementById("token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  setToken(tokenInput.value.trim());
  tokenInput.value = "";
  authMessage.hidden = true;
  delete document.body.dataset.auth;
  updateTokenState();
  render();
});

document.getElementById("token-forget").addEventListener("click", () => {
  setToken("");
  updateTokenState();
  render();
});

function updateTokenState() {
  tokenInput.placeholder = token() ? "a token is set for this tab" : "paste the daemon's token";
  document.body.dataset.token = token() ? "set" : "none";
}

window.addEventListener("hashchange", render);
updateTokenState();
render();
