// Web pages the user opens cannot drive or read the default daemon (no
// token, loopback): in headless Chromium, a page from another origin
// (`evil.test`, mapped to 127.0.0.1 with --host-resolver-rules) sends
// `no-cors` fetches with text/plain bodies, form posts (urlencoded and
// multipart) and text/plain bodies to every state-changing REST route and
// to both MCP paths (`/mcp`, 0.10's `/tools/execute`); a DNS-rebinding page
// (`rebind.test` on the daemon's own port) tries the same same-origin.
// Nothing changes: the chain count and the head before and after are equal.
// The explorer, served by the daemon itself, keeps working.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { launch } from "./browser.mjs";
import { startDaemon } from "./daemon.mjs";

let daemon, browser, attacker, attackerPort;
const BROWSER_ARGS = ["--host-resolver-rules=MAP evil.test 127.0.0.1, MAP rebind.test 127.0.0.1"];

/**
 * Runs `check` on a new page. Chromium itself has died under the first
 * test's load (about one run in twenty: a crash of the browser, not an
 * answer of the daemon); then it is relaunched and the whole check runs
 * once more, so every assertion is still made on a complete attack.
 */
async function onPage(check) {
  for (let attempt = 0; ; attempt++) {
    let page;
    try {
      page = await browser.newPage();
      return await check(page);
    } catch (e) {
      if (attempt > 0 || !/Target page, context or browser has been closed/.test(String(e?.message))) throw e;
      console.warn(`chromium died during the check (${String(e.message).split("\n")[0]}); relaunching it and running the check again`);
      await browser.close().catch(() => {});
      browser = await launch(BROWSER_ARGS);
    } finally {
      await page?.close().catch(() => {});
    }
  }
}

/** What a person or a test sees of the store: the chains and each head. */
async function snapshot() {
  const chains = await daemon.call("/v1/chains", undefined, "GET");
  const heads = [];
  for (const key of chains.chain_keys) heads.push(await daemon.call("/v1/head", { chain_key: key }));
  return { chains: chains.chain_keys, heads: heads.map((h) => [h.chain_key, h.thought_count, h.head_hash]) };
}

before(async () => {
  daemon = await startDaemon({ token: null });
  await daemon.call("/v1/thoughts", { chain_key: "keep", agent_id: "ada", thought_type: "Decision", content: "the one thought" });
  await daemon.call("/v1/agents/upsert", { chain_key: "keep", agent_id: "ada", display_name: "Ada" });
  attacker = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<!doctype html><title>a page the user opened</title><iframe name=sink></iframe>");
  });
  await new Promise((resolve) => attacker.listen(0, "127.0.0.1", resolve));
  attackerPort = attacker.address().port;
  browser = await launch(BROWSER_ARGS);
});

after(async () => {
  await browser?.close();
  attacker?.close();
  await daemon?.stop();
});

/** Every state-changing route of the daemon: REST (from its OpenAPI document) and MCP. */
async function targets() {
  const doc = await (await fetch(`${daemon.url}/openapi.json`)).json();
  const rest = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const method of Object.keys(ops)) {
      if (method === "post" || method === "delete") rest.push({ method: method.toUpperCase(), url: daemon.url + path.replace("{chain_key}", "keep").replace("{id}", "w1") });
    }
  }
  rest.push({ method: "POST", url: `${daemon.url}/v1/admin/flush` });
  const mcp = ["/mcp", "/", "/tools/execute", "/tools/list"].map((p) => ({ method: "POST", url: daemon.mcpUrl + p }));
  return [...rest, ...mcp];
}

/** Bodies that would do harm if a route took them. */
const HARM = JSON.stringify({
  chain_key: "keep", agent_id: "mallory", thought_type: "Decision", content: "planted by a web page",
  tool: "mentisdb_delete_chain", parameters: { chain_key: "keep" },
  jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "mentisdb_delete_chain", arguments: { chain_key: "keep" } },
});

test("a page from another origin changes nothing through any route", async () => {
  const before = await snapshot();
  const all = await targets();
  assert.ok(all.length > 40, `${all.length} routes`);
  const sent = await onPage(async (page) => {
    await page.goto(`http://evil.test:${attackerPort}/`);
    return page.evaluate(async ({ all, harm }) => {
      let n = 0;
      for (const { method, url } of all) {
        // A "simple" cross-origin request: no preflight, the response is opaque.
        for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
          try { await fetch(url, { method: method === "DELETE" ? "POST" : method, mode: "no-cors", headers: { "content-type": type }, body: harm }); } catch {}
          n++;
        }
        try { await fetch(url, { method: "POST", mode: "no-cors", body: harm }); } catch {}
        n++;
        // A CORS request a page may try; the preflight or the answer stops it.
        try { await fetch(url, { method, headers: { "content-type": "application/json" }, body: harm }); } catch {}
        n++;
      }
      // Form posts, urlencoded and multipart, into a frame.
      for (const { url } of all) {
        for (const enctype of ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"]) {
          const form = document.createElement("form");
          Object.assign(form, { method: "POST", action: url, enctype, target: "sink" });
          const input = document.createElement("input");
          Object.assign(input, { name: harm.slice(0, -1) + ',"x":"', value: '"}' });
          form.append(input);
          document.body.append(form);
          form.submit();
          form.remove();
          await new Promise((r) => setTimeout(r, 5));
          n++;
        }
      }
      // Reads a page can start without CORS: images and scripts of the backup and the event stream.
      for (const path of ["/v1/admin/backup", "/v1/events"]) {
        const img = document.createElement("img");
        img.src = all[0].url.replace(/\/v1\/.*$/, path);
        document.body.append(img);
        const script = document.createElement("script");
        script.src = all[0].url.replace(/\/v1\/.*$/, path);
        document.body.append(script);
        const frame = document.createElement("iframe");
        frame.src = all[0].url.replace(/\/v1\/.*$/, path);
        document.body.append(frame);
        n += 3;
      }
      await new Promise((r) => setTimeout(r, 500));
      return n;
    }, { all, harm: HARM });
  });
  assert.ok(sent > 200, `${sent} attempts`);
  assert.deepEqual(await snapshot(), before, "the store is unchanged");
  assert.ok(!daemon.stderr.join("").includes("planted"), "nothing was appended");
  assert.ok(!daemon.stderr.join("").includes("backup streamed"), "no backup was taken for another site's <img>, <script> or <iframe>");
});

test("a DNS-rebinding page on the daemon's own port gets nothing", async () => {
  const before = await snapshot();
  const rest = new URL(daemon.url);
  const results = await onPage(async (page) => {
    const answer = await page.goto(`http://rebind.test:${rest.port}/v1/admin/backup`);
    assert.equal(answer.status(), 421, "the backup (with the signing key) is not served to a rebound name");
    return page.evaluate(async ({ harm }) => {
      const statuses = [];
      for (const [method, path] of [["GET", "/v1/chains"], ["GET", "/v1/events"], ["POST", "/v1/chains/delete"], ["POST", "/v1/thoughts"], ["GET", "/explorer/"]]) {
        const r = await fetch(path, { method, headers: method === "POST" ? { "content-type": "application/json" } : {}, body: method === "POST" ? harm : undefined });
        statuses.push(r.status);
      }
      return statuses;
    }, { harm: HARM });
  });
  assert.deepEqual(results, [421, 421, 421, 421, 421]);
  assert.deepEqual(await snapshot(), before);
});

test("the explorer, served by the daemon itself, keeps working", async () => {
  await onPage(async (page) => {
    const errors = [];
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    const answer = await page.goto(`${daemon.url}/explorer/`);
    assert.equal(answer.status(), 200);
    const head = await page.evaluate(async () => {
      const r = await fetch("/v1/head", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ chain_key: "keep" }) });
      return [r.status, (await r.json()).thought_count];
  });
  assert.deepEqual(head, [200, 1], "same-origin calls (Origin: the daemon's own) are answered");
  await page.getByText("keep", { exact: true }).first().waitFor({ timeout: 10000 });
  assert.deepEqual(errors.filter((e) => !e.includes("favicon")), []);
  });
});
