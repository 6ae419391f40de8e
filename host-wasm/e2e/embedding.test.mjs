// Hybrid ranked search in a real browser: MentisDb.open(name, { embeddingModel })
// with a static word-embedding model (mentisdb-embed-static's file format)
// built here from a tiny hand-made vocabulary, so a query word finds a
// thought that shares no word with it, only a meaning.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serve } from "./serve.mjs";
import { launch, loadModule } from "./browser.mjs";

let server, browser, page;

/** A model file: magic, version 1, dim, rows, name, newline vocabulary, then (f32 scale, int8 × dim) per token, little-endian. */
function staticModel(name, vectors) {
  const tokens = Object.keys(vectors);
  const dim = vectors[tokens[0]].length;
  const enc = new TextEncoder();
  const nameBytes = enc.encode(name);
  const vocab = enc.encode(tokens.join("\n"));
  const bytes = new Uint8Array(8 + 16 + nameBytes.length + 4 + vocab.length + tokens.length * (4 + dim));
  const view = new DataView(bytes.buffer);
  bytes.set(enc.encode("MDBSTEMB"), 0);
  let at = 8;
  for (const n of [1, dim, tokens.length, nameBytes.length]) { view.setUint32(at, n, true); at += 4; }
  bytes.set(nameBytes, at); at += nameBytes.length;
  view.setUint32(at, vocab.length, true); at += 4;
  bytes.set(vocab, at); at += vocab.length;
  for (const t of tokens) {
    const v = vectors[t];
    const max = Math.max(...v.map(Math.abs));
    const scale = max > 0 ? max / 127 : 0;
    view.setFloat32(at, scale, true); at += 4;
    for (const x of v) { view.setInt8(at, scale ? Math.round(x / scale) : 0); at += 1; }
  }
  return bytes;
}

const VECTORS = {
  "[PAD]": [0, 0, 0, 0], "[UNK]": [0, 0, 0, 0],
  car: [1, 0.1, 0, 0], automobile: [0.95, 0.15, 0, 0], drove: [0.6, 0, 0, 0.2],
  banana: [0, 0, 1, 0], fruit: [0, 0.1, 0.9, 0], ate: [0, 0, 0.5, 0.3],
  i: [0, 0, 0, 0], a: [0, 0, 0, 0], new: [0, 0.2, 0, 0.4], the: [0, 0, 0, 0],
};

before(async () => {
  server = await serve();
  browser = await launch();
  page = await (await browser.newContext()).newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await loadModule(page, server.url);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test("a static embedding model makes ranked search hybrid and finds by meaning", async () => {
  const model = Array.from(staticModel("tiny-static-4", VECTORS));
  const out = await page.evaluate(async (model) => {
    const { MentisDb } = window.wasm;
    const run = async (options) => {
      await MentisDb.deleteDatabase("embedding-e2e");
      const db = await MentisDb.open("embedding-e2e", options);
      await db.append({ chain_key: "c", thought_type: "Finding", content: "I bought a new automobile" });
      await db.append({ chain_key: "c", thought_type: "Finding", content: "I ate a banana" });
      const answer = await db.call("mentisdb_ranked_search", { chain_key: "c", text: "car", limit: 5 });
      const fruit = await db.call("mentisdb_ranked_search", { chain_key: "c", text: "fruit", limit: 5 });
      await db.close();
      return { backend: answer.backend, top: answer.results.map((r) => r.thought.content), fruit: fruit.results.map((r) => r.thought.content) };
    };
    const hybrid = await run({ defaultChainKey: "c", embeddingModel: new Uint8Array(model) });
    const lexical = await run({ defaultChainKey: "c" });
    let refused = null;
    try {
      await MentisDb.open("embedding-e2e", { embeddingModel: new Uint8Array([1, 2, 3]) });
    } catch (e) {
      refused = { kind: e.kind, message: e.message };
    }
    await MentisDb.deleteDatabase("embedding-e2e");
    return { hybrid, lexical, refused };
  }, model);
  assert.equal(out.hybrid.backend, "hybrid");
  assert.equal(out.hybrid.top[0], "I bought a new automobile");
  assert.equal(out.hybrid.fruit[0], "I ate a banana");
  assert.equal(out.lexical.backend, "lexical");
  assert.ok(!out.lexical.top.includes("I bought a new automobile"), `lexical found ${JSON.stringify(out.lexical.top)}`);
  assert.match(out.refused?.message ?? "", /embeddingModel/);
});

test("the page's tool list leaves out what only a daemon serves", async () => {
  const out = await page.evaluate(async () => {
    const { MentisDb } = window.wasm;
    const names = MentisDb.toolSpecs().map((t) => t.name);
    await MentisDb.deleteDatabase("daemon-only-e2e");
    const db = await MentisDb.open("daemon-only-e2e");
    let refused = null;
    try {
      await db.call("mentisdb_register_webhook", { url: "https://example.com/hook" });
    } catch (e) {
      refused = { kind: e.kind, message: e.message };
    }
    await db.close();
    await MentisDb.deleteDatabase("daemon-only-e2e");
    return { names, refused };
  });
  for (const tool of ["mentisdb_register_webhook", "mentisdb_list_webhooks", "mentisdb_delete_webhook", "mentisdb_extract_memories", "mentisdb_chain_records", "mentisdb_append_batch"]) {
    assert.ok(!out.names.includes(tool), `${tool} is listed in the page`);
  }
  for (const tool of ["mentisdb_append", "mentisdb_ranked_search", "mentisdb_upload_skill", "mentisdb_checkpoint", "mentisdb_export_chain"]) {
    assert.ok(out.names.includes(tool), `${tool} is missing in the page`);
  }
  assert.equal(out.refused?.kind, "unknown_tool", JSON.stringify(out.refused));
});
