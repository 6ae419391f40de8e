// LoCoMo retrieval inside headless Chromium (Debian's): the browser build
// with the static word-embedding model (hybrid), or without it (lexical),
// through `db.call("mentisdb_ranked_search")`, the same fixed procedure as
// `locomo-bench` (tests/src/locomo.rs): one chain per conversation, every
// turn one thought "[<session date_time>] <speaker>: <text>" by the speaker
// with tag "dia:<dia_id>", appended in order (each append a durable
// IndexedDB commit); every question of categories 1-4 with evidence asked
// with limit 10; a question scores the share of its evidence turns found.
// Reports R@5 / R@10 over all conversations, the mean over the five ways of
// leaving two out (fold i leaves out conversations i and i+1, sorted), and
// the time of each ranked query in the page (p50, p99).
//   node locomo-bench.mjs LOCOMO_DIR [MODEL_FILE]   (after scripts/build-wasm-pkg.sh;
//   MODEL_FILE from scripts/make-static-model.sh; without it: lexical)
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { serve } from "./serve.mjs";
import { launch, loadModule } from "./browser.mjs";

const [dir, modelFile] = process.argv.slice(2);
if (!dir) {
  console.error("usage: node locomo-bench.mjs LOCOMO_DIR [MODEL_FILE]");
  process.exit(2);
}

/** One conversation as the benches ingest it. */
function load(name, v) {
  const conv = v.conversation ?? v;
  const sessions = Object.keys(conv)
    .map((k) => [k, /^session_(\d+)$/.exec(k)])
    .filter(([, m]) => m && Array.isArray(conv[m[0]]))
    .map(([k, m]) => [Number(m[1]), conv[k]])
    .sort((a, b) => a[0] - b[0]);
  const turns = [];
  for (const [n, list] of sessions) {
    const date = conv[`session_${n}_date_time`] ?? "";
    for (const t of list) turns.push({ content: `[${date}] ${t.speaker ?? ""}: ${t.text ?? ""}`, agent: (t.speaker ?? "").toLowerCase(), dia: t.dia_id ?? "" });
  }
  const questions = [];
  for (const q of v.qa ?? []) {
    if (!(q.category >= 1 && q.category <= 4)) continue;
    const evidence = [...new Set((q.evidence ?? []).flatMap((e) => String(e).split(";").map((p) => p.trim()).filter(Boolean)))];
    if (evidence.length) questions.push({ text: typeof q.question === "string" ? q.question : JSON.stringify(q.question), category: q.category, evidence });
  }
  return { name, turns, questions };
}

const files = (await readdir(dir)).filter((f) => /^conv-.*\.json$/.test(f)).sort();
const convs = [];
for (const f of files) convs.push(load(f.replace(/\.json$/, ""), JSON.parse(await readFile(join(dir, f), "utf8"))));
const model = modelFile ? await readFile(modelFile) : null;

const server = await serve();
const browser = await launch();
try {
  const page = await browser.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  // The model reaches the page as a file it fetches, as a site would serve it.
  await page.route("**/bench-data/model.bin", (route) => route.fulfill({ body: model ?? Buffer.alloc(0), contentType: "application/octet-stream" }));
  await loadModule(page, server.url, 60_000);
  const results = [];
  for (const conv of convs) {
    results.push(await page.evaluate(async ({ conv, withModel }) => {
      const { MentisDb } = window.wasm;
      const options = { defaultChainKey: conv.name };
      let openMs = 0;
      if (withModel) {
        const bytes = new Uint8Array(await (await fetch("/bench-data/model.bin")).arrayBuffer());
        options.embeddingModel = bytes;
      }
      await MentisDb.deleteDatabase("locomo");
      const t0 = performance.now();
      const db = await MentisDb.open("locomo", options);
      openMs = performance.now() - t0;
      const t1 = performance.now();
      for (const t of conv.turns) {
        await db.append({ chain_key: conv.name, agent_id: t.agent, thought_type: "FactLearned", content: t.content, tags: [`dia:${t.dia}`] });
      }
      const ingestMs = performance.now() - t1;
      const scores = [];
      const times = [];
      let backend = "";
      for (const q of conv.questions) {
        const s = performance.now();
        const r = await db.call("mentisdb_ranked_search", { chain_key: conv.name, text: q.text, limit: 10 });
        times.push(performance.now() - s);
        backend = r.backend;
        const found = r.results.map((h) => (h.thought.tags ?? []).find((x) => x.startsWith("dia:"))?.slice(4));
        const share = (k) => q.evidence.filter((e) => found.slice(0, k).includes(e)).length / q.evidence.length;
        scores.push({ r5: share(5), r10: share(10), category: q.category });
      }
      await db.close();
      await MentisDb.deleteDatabase("locomo");
      return { name: conv.name, turns: conv.turns.length, backend, openMs, ingestMs, scores, times };
    }, { conv, withModel: !!model }));
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const recall = (rs) => ({ r5: 100 * mean(rs.flatMap((r) => r.scores.map((s) => s.r5))), r10: 100 * mean(rs.flatMap((r) => r.scores.map((s) => s.r10))) });
  const all = recall(results);
  const folds = results.length >= 3
    ? results.map((_, i) => recall([results[i], results[(i + 1) % results.length]]))
    : [];
  const times = results.flatMap((r) => r.times).sort((a, b) => a - b);
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  const out = {
    backend: results[0]?.backend,
    model_bytes: model?.length ?? 0,
    questions: times.length,
    all_five: { r5: +all.r5.toFixed(1), r10: +all.r10.toFixed(1) },
    mean_left_out: folds.length ? { r5: +mean(folds.map((f) => f.r5)).toFixed(1), r10: +mean(folds.map((f) => f.r10)).toFixed(1) } : null,
    query_ms: { p50: +q(0.5).toFixed(2), p99: +q(0.99).toFixed(2) },
    per_conversation: results.map((r) => ({ name: r.name, turns: r.turns, r10: +recall([r]).r10.toFixed(1), open_ms: +r.openMs.toFixed(1), ingest_turns_per_s: +(r.turns / (r.ingestMs / 1000)).toFixed(0) })),
    user_agent: await page.evaluate(() => navigator.userAgent),
  };
  console.log(JSON.stringify(out, null, 2));
} finally {
  await browser.close();
  await server.close();
}
