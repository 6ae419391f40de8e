// Benchmarks inside headless Chromium (Debian's), through the packaged
// module and the demo page: durable appends/s while growing a chain to N
// thoughts (each append awaited = one strict IndexedDB commit), search
// latency at N thoughts, a burst of 1000 concurrent appends (group commit),
// and the time to re-open (load + verify) the N + 1000 thoughts; and how much
// the module's linear memory grew per thought (it never shrinks: the peak),
// after the appends, after the searches (text signatures built) and after
// one ranked query (the ranked index built).
//   node bench.mjs [N=10000]      (after scripts/build-wasm-pkg.sh)
// Prints JSON and writes test-output/wasm-bench.json.
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { serve } from "./serve.mjs";
import { launch } from "./browser.mjs";

const N = Number(process.argv[2] ?? 10000);
const OUT = fileURLToPath(new URL("../../test-output/", import.meta.url));
const server = await serve();
const browser = await launch();
try {
  const page = await browser.newPage();
  await page.goto(`${server.url}/demo/`);
  await page.waitForSelector("body[data-ready=true]", { timeout: 60_000 });
  const result = await page.evaluate(async (n) => {
    const M = window.MentisDb;
    const words = ["rust", "browser", "memory", "chain", "hash", "agent", "search", "index", "durable", "commit",
      "tokio", "wasm", "schema", "vector", "graph", "retrieval", "summary", "decision", "insight", "lesson"];
    const stats = (xs) => {
      const s = xs.slice().sort((a, b) => a - b);
      const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
      return { runs: s.length, median_ms: +q(0.5).toFixed(3), p95_ms: +q(0.95).toFixed(3), max_ms: +s[s.length - 1].toFixed(3) };
    };
    await M.deleteDatabase("bench");
    let db = await M.open("bench");
    const memory = () => window.wasmMemory.buffer.byteLength;
    const memoryAtOpen = memory();
    const thought = (i) => ({
      chain_key: "bench", agent_id: `agent-${i % 4}`, thought_type: i % 3 ? "Finding" : "Decision",
      content: `Thought ${i}: ${words[i % 20]} ${words[(i * 7) % 20]} ${words[(i * 13) % 20]} note number ${i} for the benchmark.`,
      tags: [`tag${i % 50}`], importance: (i % 10) / 10,
    });
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await db.append(thought(i));
    const appendMs = performance.now() - t0;
    const memoryAfterAppends = memory();
    const textLat = [], tagLat = [], recentLat = [];
    for (let q = 0; q < 200; q++) {
      let s = performance.now();
      db.search({ chain_key: "bench", text: `${words[q % 20]} note number ${q * 37}`, limit: 10 });
      textLat.push(performance.now() - s);
      s = performance.now();
      db.search({ chain_key: "bench", tags_any: [`tag${q % 50}`], limit: 10 });
      tagLat.push(performance.now() - s);
      s = performance.now();
      db.recentContext({ chain_key: "bench", last_n: 12 });
      recentLat.push(performance.now() - s);
    }
    const hits = db.search({ chain_key: "bench", text: "rust", limit: 10000 }).thoughts.length;
    const memoryAfterSearches = memory();
    await db.call("mentisdb_ranked_search", { chain_key: "bench", text: "rust browser memory" });
    const memoryAfterRanked = memory();
    const perThought = (bytes) => Math.round((bytes - memoryAtOpen) / n);
    // Then a burst of concurrent appends (they share commits).
    const burst = 1000;
    const t1 = performance.now();
    await Promise.all(Array.from({ length: burst }, (_, k) => db.append(thought(n + k))));
    const burstMs = performance.now() - t1;
    const total = n + burst;
    const bytes = (await db.exportChain("bench")).length;
    await db.close();
    const t2 = performance.now();
    db = await M.open("bench");
    const reopenMs = performance.now() - t2;
    const head = db.head("bench");
    await db.close();
    await M.deleteDatabase("bench");
    return {
      thoughts_appended_sequentially: n,
      sequential_durable_appends_per_s: +(n / (appendMs / 1000)).toFixed(1),
      burst_concurrent_appends: burst,
      burst_appends_per_s: +(burst / (burstMs / 1000)).toFixed(1),
      searched_at_thoughts: n, chain_thoughts_at_reopen: total, chain_bytes: bytes, integrity_ok: head.integrity_ok, thought_count_after_reopen: head.thought_count,
      search_text_limit10: stats(textLat), search_tag_limit10: stats(tagLat), recent_context_last12: stats(recentLat),
      text_rust_hits: hits,
      linear_memory_bytes_per_thought: { after_appends: perThought(memoryAfterAppends), after_searches: perThought(memoryAfterSearches), after_one_ranked_query: perThought(memoryAfterRanked) },
      reopen_load_and_verify_ms: +reopenMs.toFixed(1),
      user_agent: navigator.userAgent,
    };
  }, N);
  await mkdir(OUT, { recursive: true });
  await writeFile(`${OUT}wasm-bench.json`, JSON.stringify(result, null, 2));
  console.log(JSON.stringify(result, null, 2));
} finally {
  await browser.close();
  await server.close();
}
