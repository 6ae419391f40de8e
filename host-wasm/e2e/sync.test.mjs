// Offline-first sync in a real browser: a page's IndexedDB copy of a chain
// follows a real mentisdbd (REST on loopback, CORS for the page's origin).
// The page writes while the daemon is down, the daemon restarts, sync runs,
// and both sides hold the same chain; a daemon whose files were rewritten
// is refused with the two checkpoints that prove the fork.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile, truncate } from "node:fs/promises";
import { join } from "node:path";
import { serve } from "./serve.mjs";
import { launch, loadModule } from "./browser.mjs";
import { startDaemon } from "../../host-native/explorer/e2e/daemon.mjs";

const CHAIN = "team";
let server, browser, page, daemon, verifierKey;

before(async () => {
  server = await serve();
  daemon = await startDaemon({ token: "sync-test-token", args: ["--allowed-origins", server.url] });
  verifierKey = (await daemon.call("/v1/identity", undefined, "GET")).verifier_key;
  browser = await launch();
  page = await (await browser.newContext()).newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await openReplica();
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
  await server?.close();
});

/** (Re)loads the page and opens the replica database as `window.replica`. */
async function openReplica() {
  await loadModule(page, server.url);
  await page.evaluate(async () => {
    window.replica = await window.wasm.MentisDb.open("sync-e2e");
  });
}

/** Runs db.sync in the page: the report, or the error's kind, message and checkpoints. */
function sync() {
  return page.evaluate(async ({ url, chain, verifierKey, token }) => {
    try {
      return { report: await window.replica.sync(url, chain, { verifierKey, token }) };
    } catch (e) {
      return { error: { kind: e.kind, message: e.message, accepted: e.accepted, offered: e.offered } };
    }
  }, { url: daemon.url, chain: CHAIN, verifierKey, token: daemon.token });
}

const localHead = () => page.evaluate((chain) => {
  const h = window.replica.head(chain);
  return { count: h.thought_count, hash: h.head_hash };
}, CHAIN);
const localContents = () => page.evaluate((chain) => window.replica.search({ chain_key: chain }).thoughts.map((t) => t.content), CHAIN);
const localAppend = (content) => page.evaluate(({ chain, content }) => window.replica.append({ chain_key: chain, thought_type: "Finding", content }), { chain: CHAIN, content });
const daemonAppend = (content) => daemon.call("/v1/thoughts", { chain_key: CHAIN, agent_id: "daemon-agent", thought_type: "Decision", content });
async function daemonHead() {
  const h = await daemon.call("/v1/head", { chain_key: CHAIN });
  assert.equal(h.integrity_ok, true);
  return { count: h.thought_count, hash: h.head_hash };
}

test("a new replica takes the daemon's chain", async () => {
  for (const c of ["plan the release", "ship on Friday", "write the notes"]) await daemonAppend(c);
  const { report, error } = await sync();
  assert.equal(error, undefined, JSON.stringify(error));
  assert.equal(report.pulled, 3);
  assert.equal(report.tree_size, 3);
  assert.deepEqual(await localHead(), await daemonHead());
});

test("thoughts written while the daemon is down land after the daemon's, on both sides", async () => {
  await daemon.pause();
  await localAppend("offline: found a flaky test");
  await localAppend("offline: the fix is a retry");
  const down = await sync();
  assert.equal(down.error?.kind, "unavailable", JSON.stringify(down));
  assert.equal((await localHead()).count, 5, "offline thoughts kept");

  await daemon.resume();
  await daemonAppend("daemon: release moved to Monday");
  const { report, error } = await sync();
  assert.equal(error, undefined, JSON.stringify(error));
  assert.equal(report.pushed, 2);
  assert.equal(report.tree_size, 6);
  assert.deepEqual(await localHead(), await daemonHead());
  assert.deepEqual(await localContents(), [
    "plan the release", "ship on Friday", "write the notes",
    "daemon: release moved to Monday", "offline: found a flaky test", "offline: the fix is a retry",
  ]);

  // The copy survives a reload (IndexedDB), and a second sync finds nothing new.
  await openReplica();
  assert.deepEqual(await localHead(), await daemonHead());
  const again = await sync();
  assert.equal(again.report.pulled + again.report.pushed, 0, JSON.stringify(again));
});

test("a daemon whose chain file was rewritten is refused, with both checkpoints", async () => {
  const before = await localHead();
  // Cut the daemon's chain file after its 4th record, a chain that still
  // opens: the history the replica accepted (6 thoughts) is gone.
  const bytes = async (args) => Buffer.from((await daemon.call("/v1/chains/records", { chain_key: CHAIN, ...args })).records_base64, "base64").length;
  const [all, firstFour] = [await bytes({}), await bytes({ to: 4 })];
  await daemon.pause();
  const chains = join(daemon.dir, "chains");
  const file = join(chains, (await readdir(chains)).find((f) => f.startsWith(CHAIN) && f.endsWith(".mdb")));
  const size = (await readFile(file)).length;
  await truncate(file, size - all + firstFour);
  await daemon.resume();
  assert.equal((await daemonHead()).count, 4);

  const rolledBack = await sync();
  assert.equal(rolledBack.error?.kind, "fork", JSON.stringify(rolledBack));
  // Rewritten: longer than before again, but not an extension of it.
  for (const c of ["rewritten 1", "rewritten 2", "rewritten 3"]) await daemonAppend(c);
  const forked = await sync();
  assert.equal(forked.error?.kind, "fork", JSON.stringify(forked));
  assert.match(forked.error.message, /consistency proof/);
  // Both checkpoints verify with the daemon's key, and they state
  // incompatible trees: anyone can check the fork.
  const heads = await page.evaluate(({ a, o, key }) => [window.wasm.verifyCheckpoint(a, key), window.wasm.verifyCheckpoint(o, key)],
    { a: forked.error.accepted, o: forked.error.offered, key: verifierKey });
  assert.equal(heads[0].tree_size, 6);
  assert.equal(heads[1].tree_size, 7);
  assert.deepEqual(await localHead(), before, "nothing local changed");
});
