// Real-browser end-to-end test of the demo page: type a thought, reload,
// find it by search; export the chain for the native verification and import
// a daemon-written chain through the page. Screenshots go to test-output/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { serve } from "./serve.mjs";
import { launch } from "./browser.mjs";

const OUT = fileURLToPath(new URL("../../test-output/", import.meta.url));
const FIXTURE = fileURLToPath(new URL("../tests/fixtures/daemon-chain.mdb", import.meta.url));
let server, browser, context, page;

before(async () => {
  await mkdir(OUT, { recursive: true });
  server = await serve();
  browser = await launch();
  context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1100, height: 1250 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function ready() {
  await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
}

test("a typed thought survives a reload and is found by search", async () => {
  await page.goto(`${server.url}/demo/`);
  await ready();
  assert.match(await page.textContent("#status"), /^Ready: 0 chain/);
  const thought = `Remember: the browser keeps memory across reloads (${Date.now()})`;
  await page.selectOption("#thought-type", "Decision");
  await page.fill("#tags", "e2e, persistence");
  await page.fill("#content", thought);
  await page.click("#append");
  await page.waitForFunction(() => document.querySelector("#status").textContent.startsWith("Saved thought #0"));
  assert.equal(await page.textContent("#head-count"), "1");

  await page.reload();
  await ready();
  assert.match(await page.textContent("#status"), /^Ready: 1 chain\(s\), 1 thought/);
  await page.fill("#search-text", "across reloads");
  await page.click("#search");
  await page.waitForFunction(() => document.querySelector("#status").textContent.includes("match(es)"));
  const results = await page.locator("#results li .content").allTextContents();
  assert.deepEqual(results, [thought]);
  assert.equal(await page.textContent("#head-count"), "1");
  assert.match(await page.textContent("#head-integrity"), /^ok/);
  assert.match(await page.textContent("#head-location"), /^indexeddb:\/\/mentisdb\/demo\/chains\/notes\./);

  // A second thought, then the view a person sees.
  await page.fill("#content", "Search runs in memory; writes wait for the IndexedDB commit.");
  await page.selectOption("#thought-type", "Insight");
  await page.fill("#tags", "design");
  await page.click("#append");
  await page.waitForFunction(() => document.querySelector("#status").textContent.startsWith("Saved thought #1"));
  await page.fill("#search-text", "");
  await page.fill("#search-tags", "e2e, design");
  await page.click("#search");
  await page.waitForFunction(() => document.querySelectorAll("#results li").length === 2);
  await page.screenshot({ path: `${OUT}demo.png`, fullPage: true });

  // Export through the page's button; the native test verifies the file.
  const download = page.waitForEvent("download");
  await page.click("#export");
  await (await download).saveAs(`${OUT}browser-export.mdb`);
  const head = await page.evaluate(() => window.mentis.head("notes"));
  await writeFile(`${OUT}browser-export.json`, JSON.stringify({
    chain_key: "notes", head_hash: head.head_hash, thought_count: head.thought_count, search_text: "across reloads",
  }, null, 2));
  const exported = await readFile(`${OUT}browser-export.mdb`);
  assert.equal(exported.subarray(0, 8).toString(), "MDBCHAIN");
});

test("a daemon-written chain file imports through the page", async () => {
  await page.setInputFiles("#import", FIXTURE);
  await page.waitForFunction(() => document.querySelector("#status").textContent.startsWith("Imported chain 'daemon-notes'"));
  assert.equal(await page.inputValue("#chain"), "daemon-notes");
  assert.equal(await page.textContent("#head-count"), "4");
  const expected = (await readFile(fileURLToPath(new URL("../tests/fixtures/daemon-chain.head", import.meta.url)), "utf8")).trim();
  assert.equal(await page.textContent("#head-hash"), expected);
  // Importing it again is refused with a clear message.
  await page.setInputFiles("#import", FIXTURE);
  await page.waitForFunction(() => document.querySelector("#status").className === "error");
  assert.equal(await page.textContent("#status"), "Import failed: chain 'daemon-notes' already exists in database 'demo'; import refuses to overwrite it");
  await page.screenshot({ path: `${OUT}demo-import.png`, fullPage: true });
});
