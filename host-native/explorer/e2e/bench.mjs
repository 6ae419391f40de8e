// Figures of the explorer in headless Chromium against a debug or release
// mentisdbd (MENTISDBD, else CARGO_TARGET_DIR/debug): first paint of
// /explorer, the time until a 10k-thought chain's timeline shows, and the
// latency from an append over REST to its row in an open page (live events).
// Usage: node bench.mjs [thoughts=10000] [runs=7] [live=200]. Prints the medians (ms)
// and writes test-output/explorer-bench.json. Measures; asserts nothing.
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { launch } from "./browser.mjs";
import { MENTISDBD, startDaemon } from "./daemon.mjs";

const THOUGHTS = Number(process.argv[2] ?? 10_000);
const RUNS = Number(process.argv[3] ?? 7);
const LIVE = Number(process.argv[4] ?? 200);
const OUT = fileURLToPath(new URL("../../../test-output/", import.meta.url));
const TYPES = ["Decision", "Insight", "FactLearned", "Plan", "Question"];

const median = (xs) => {
  const s = xs.slice().sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x) => Math.round(x * 10) / 10;
const percentile = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
/** Milliseconds since the epoch with sub-millisecond digits (same clock in Node and the page). */
const now = () => performance.timeOrigin + performance.now();

const daemon = await startDaemon();
try {
  // Seed over REST, 32 appends in flight.
  const seedStart = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < THOUGHTS) {
      const i = next++;
      await daemon.call("/v1/thoughts", {
        chain_key: "big", thought_type: TYPES[i % TYPES.length], agent_id: `agent-${i % 7}`, tags: [`t${i % 13}`],
        content: `Thought number ${i}: the cache layer ${i % 2 ? "evicts" : "keeps"} entries of tenant ${i % 97} after ${i % 60} minutes.`,
      });
    }
  }));
  const seedMs = performance.now() - seedStart;
  const head = await daemon.call("/v1/head", { chain_key: "big" });

  const browser = await launch();
  const firstPaint = [];
  const firstContentfulPaint = [];
  const timeline = [];
  const timelineAll = [];
  let rowsShown = 0;
  for (let run = 0; run < RUNS; run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    await context.addInitScript((t) => sessionStorage.setItem("mentisdb.explorer.token", t), daemon.token);
    const page = await context.newPage();

    // First paint of the chains view (a fresh context: nothing cached).
    await page.goto(`${daemon.url}/explorer`);
    await page.waitForSelector("body[data-ready=true]");
    const paints = await page.evaluate(() => Object.fromEntries(performance.getEntriesByType("paint").map((p) => [p.name, p.startTime])));
    firstPaint.push(paints["first-paint"]);
    firstContentfulPaint.push(paints["first-contentful-paint"]);

    // A 10k chain's timeline, loaded as a person opens it: from navigation
    // start to the first rows in the DOM (default limit 500, 50 rows drawn).
    await page.goto(`${daemon.url}/explorer/#/chain/big`);
    timeline.push(await page.waitForFunction(() => document.querySelector("#timeline li") && document.body.dataset.ready === "true" && performance.now(), null, { polling: "raf" }).then((h) => h.jsonValue()));
    rowsShown = await page.locator("#timeline li").count();

    // The whole chain: limit 10000, Search, until the rows are replaced.
    await page.fill("#flt-limit", String(THOUGHTS));
    const start = await page.evaluate(() => {
      document.querySelector("#timeline").replaceChildren();
      return performance.now();
    });
    await page.click("#filters button[type=submit]");
    const end = await page.waitForFunction((n) => document.querySelector("#timeline-summary")?.textContent.includes(`of ${n} match`) && performance.now(), THOUGHTS, { polling: "raf" }).then((h) => h.jsonValue());
    timelineAll.push(end - start);
    await context.close();
  }

  // Live: appends one at a time while the timeline is open; each latency is
  // from just before the REST call to the row's insertion in the page.
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  await context.addInitScript((t) => sessionStorage.setItem("mentisdb.explorer.token", t), daemon.token);
  const page = await context.newPage();
  await page.goto(`${daemon.url}/explorer/#/chain/big`);
  await page.waitForSelector("#live-state[data-live=true]");
  await page.evaluate(() => {
    window.arrived = {};
    new MutationObserver((records) => {
      const t = performance.timeOrigin + performance.now();
      for (const r of records) for (const n of r.addedNodes) if (n.dataset?.index) window.arrived[n.dataset.index] ??= t;
    }).observe(document.querySelector("#timeline"), { childList: true });
  });
  const sent = {};
  for (let i = 0; i < LIVE; i++) {
    const t0 = now();
    const r = await daemon.call("/v1/thoughts", { chain_key: "big", thought_type: "Finding", agent_id: "live", content: `live thought ${i}` });
    sent[r.thought.index] = t0;
    await page.waitForFunction((index) => window.arrived[index] !== undefined, r.thought.index, { polling: "raf" });
  }
  const arrived = await page.evaluate(() => window.arrived);
  const live = Object.entries(sent).map(([index, t0]) => arrived[index] - t0);
  await context.close();
  await browser.close();
  const figures = {
    daemon: MENTISDBD,
    thoughts: head.thought_count,
    seed_appends_per_s: round(THOUGHTS / (seedMs / 1000)),
    runs: RUNS,
    first_paint_ms: round(median(firstPaint)),
    first_contentful_paint_ms: round(median(firstContentfulPaint)),
    timeline_default_ms: round(median(timeline)),
    timeline_all_ms: round(median(timelineAll)),
    rows_in_dom: rowsShown,
    live_appends: LIVE,
    live_latency_p50_ms: round(percentile(live, 50)),
    live_latency_p99_ms: round(percentile(live, 99)),
    live_latency_max_ms: round(Math.max(...live)),
    all_first_paint: firstPaint.map(round),
    all_timeline_default: timeline.map(round),
    all_timeline_all: timelineAll.map(round),
  };
  await mkdir(OUT, { recursive: true });
  await writeFile(`${OUT}explorer-bench.json`, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(JSON.stringify(figures, null, 2));
} finally {
  await daemon.stop();
}
