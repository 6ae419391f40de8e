// Sync figure inside headless Chromium: a page pulls N new thoughts from a
// real mentisdbd with db.sync() (checkpoint verified with the pinned key,
// records decoded, verified and hashed to the checkpoint's root, stored in
// IndexedDB), and reports thoughts/s including verification.
// The daemon's chain is made by the page itself (N appends in one database,
// exported, imported into the daemon), so the figure times only the sync.
//   MENTISDBD=<release mentisdbd> node sync-bench.mjs [N=100000]   (after scripts/build-wasm-pkg.sh)
// Prints JSON and writes test-output/wasm-sync-bench.json.
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { serve } from "./serve.mjs";
import { launch } from "./browser.mjs";
import { startDaemon } from "../../host-native/explorer/e2e/daemon.mjs";

const N = Number(process.argv[2] ?? 100000);
const OUT = fileURLToPath(new URL("../../test-output/", import.meta.url));
const server = await serve();
const daemon = await startDaemon({ token: "sync-bench-token", args: ["--allowed-origins", server.url] });
const browser = await launch();
try {
  const verifierKey = (await daemon.call("/v1/identity", undefined, "GET")).verifier_key;
  const page = await browser.newPage();
  await page.goto(`${server.url}/demo/`);
  await page.waitForSelector("body[data-ready=true]", { timeout: 60_000 });
  const result = await page.evaluate(async ({ n, url, token, verifierKey }) => {
    const M = window.MentisDb;
    const words = ["rust", "browser", "memory", "chain", "hash", "agent", "search", "index", "durable", "commit"];
    for (const name of ["sync-source", "sync-replica"]) await M.deleteDatabase(name);
    const source = await M.open("sync-source");
    const writes = [];
    for (let i = 0; i < n; i++) {
      writes.push(source.append({ chain_key: "bench", agent_id: `agent-${i % 4}`, thought_type: i % 3 ? "Finding" : "Decision",
        content: `Thought ${i}: ${words[i % 10]} ${words[(i * 7) % 10]} note number ${i} for the sync benchmark.`, tags: [`tag${i % 50}`] }));
    }
    await Promise.all(writes);
    const bytes = await source.exportChain("bench");
    const imported = await fetch(`${url}/v1/chains/bench/import`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" }, body: bytes });
    if (!imported.ok) throw new Error(`import: ${imported.status} ${await imported.text()}`);
    await source.close();
    const replica = await M.open("sync-replica");
    const t0 = performance.now();
    const report = await replica.sync(url, "bench", { verifierKey, token });
    const ms = performance.now() - t0;
    const head = replica.head("bench");
    await replica.close();
    for (const name of ["sync-source", "sync-replica"]) await M.deleteDatabase(name);
    return {
      thoughts_pulled: report.pulled, chain_bytes: bytes.length, sync_ms: +ms.toFixed(1),
      thoughts_per_s: +(report.pulled / (ms / 1000)).toFixed(0),
      head_matches_checkpoint: head.thought_count === report.tree_size && head.head_hash === report.head_hash,
      user_agent: navigator.userAgent,
    };
  }, { n: N, url: daemon.url, token: daemon.token, verifierKey });
  const daemonHead = await daemon.call("/v1/head", { chain_key: "bench" });
  result.daemon_thought_count = daemonHead.thought_count;
  await mkdir(OUT, { recursive: true });
  await writeFile(`${OUT}wasm-sync-bench.json`, JSON.stringify(result, null, 2));
  console.log(JSON.stringify(result, null, 2));
} finally {
  await browser.close();
  await daemon.stop();
  await server.close();
}
