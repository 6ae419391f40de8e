// The memory explorer: a thin page over the MentisDb class of ../pkg.
import init, { MentisDb } from "../pkg/mentisdb_wasm.js";

const $ = (id) => document.getElementById(id);
let db;

function setStatus(text, kind = "") {
  $("status").textContent = text;
  $("status").className = kind;
}

function chainKey() {
  return $("chain").value.trim() || "notes";
}

function list(text) {
  return text.split(",").map((t) => t.trim()).filter(Boolean);
}

function renderThoughts(ol, thoughts, emptyText) {
  ol.replaceChildren();
  if (thoughts.length === 0) {
    const li = document.createElement("li");
    li.className = "empty";
    li.textContent = emptyText;
    ol.append(li);
    return;
  }
  for (const t of thoughts) {
    const li = document.createElement("li");
    li.dataset.index = t.index;
    const meta = document.createElement("div");
    meta.className = "meta";
    const type = document.createElement("span");
    type.className = "type";
    type.textContent = `#${t.index} ${t.thought_type}`;
    const when = document.createElement("span");
    when.textContent = t.timestamp;
    const who = document.createElement("span");
    who.textContent = `by ${t.agent_name || t.agent_id} · importance ${t.importance}`;
    meta.append(type, when, who);
    for (const tag of t.tags) {
      const s = document.createElement("span");
      s.className = "tag";
      s.textContent = tag;
      meta.append(s);
    }
    const content = document.createElement("div");
    content.className = "content";
    content.textContent = t.content;
    li.append(meta, content);
    ol.append(li);
  }
}

function refresh() {
  const key = chainKey();
  const chainKeys = db.listChains().chain_keys;
  const chains = $("chains");
  chains.replaceChildren();
  for (const k of chainKeys) {
    const o = document.createElement("option");
    o.value = k;
    chains.append(o);
  }
  // Reads of a chain that does not exist yet are `not_found` (as in MentisDB 0.10).
  if (!chainKeys.includes(key)) {
    $("head-count").textContent = "0";
    $("head-integrity").textContent = "– (no thoughts yet)";
    $("head-hash").textContent = "– (empty chain)";
    $("head-location").textContent = "– (created by the first append)";
    renderThoughts($("recent"), [], "No thoughts yet: append one above.");
    $("prompt").textContent = "";
    return;
  }
  const head = db.head(key);
  $("head-count").textContent = head.thought_count;
  $("head-integrity").innerHTML = "";
  const integrity = document.createElement("span");
  integrity.className = head.integrity_ok ? "ok-text" : "bad-text";
  integrity.textContent = head.integrity_ok ? "ok (chain verified at open, head hash checked)" : "BROKEN";
  $("head-integrity").append(integrity);
  $("head-hash").textContent = head.head_hash ?? "– (empty chain)";
  $("head-location").textContent = head.storage_location;
  const recent = db.traverse({ chain_key: key, anchor_boundary: "head", direction: "backward", include_anchor: true, chunk_size: 10 });
  renderThoughts($("recent"), recent.thoughts, "No thoughts yet: append one above.");
  $("prompt").textContent = db.recentContext({ chain_key: key, last_n: 10 });
}

async function guarded(what, f) {
  try {
    await f();
  } catch (e) {
    setStatus(`${what} failed: ${e.message}`, "error");
    console.error(e);
  }
}

$("append-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  guarded("Append", async () => {
    const content = $("content").value.trim();
    if (!content) return;
    const out = await db.append({
      chain_key: chainKey(),
      agent_id: "browser-user",
      agent_name: "Browser user",
      thought_type: $("thought-type").value,
      content,
      importance: Number($("importance").value),
      tags: list($("tags").value),
    });
    $("content").value = "";
    refresh();
    setStatus(`Saved thought #${out.thought.index} (durable in IndexedDB)`, "ok");
  });
});

$("search-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  guarded("Search", async () => {
    const args = { chain_key: chainKey(), limit: 50 };
    if ($("search-text").value.trim()) args.text = $("search-text").value.trim();
    if (list($("search-tags").value).length) args.tags_any = list($("search-tags").value);
    const started = performance.now();
    const found = db.search(args);
    const ms = (performance.now() - started).toFixed(1);
    renderThoughts($("results"), found.thoughts.slice().reverse(), "Nothing matches.");
    setStatus(`${found.thoughts.length} match(es) in ${ms} ms`, "ok");
  });
});

$("chain").addEventListener("change", () => guarded("Switching chain", async () => {
  $("results").replaceChildren();
  refresh();
}));

$("export").addEventListener("click", () => guarded("Export", async () => {
  const bytes = await db.exportChain(chainKey());
  const url = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = `${chainKey()}.mdb`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  setStatus(`Exported ${bytes.length} bytes`, "ok");
}));

$("import").addEventListener("change", () => guarded("Import", async () => {
  const file = $("import").files[0];
  if (!file) return;
  const bytes = new Uint8Array(await file.arrayBuffer());
  $("import").value = "";
  const out = await db.importChain(bytes);
  $("results").replaceChildren();
  $("chain").value = out.chain_key;
  refresh();
  setStatus(`Imported chain '${out.chain_key}' (${out.thought_count} thoughts, verified)`, "ok");
}));

await guarded("Opening the database", async () => {
  const wasm = await init();
  db = await MentisDb.open("demo");
  window.MentisDb = MentisDb; // for the console and the benches
  window.wasmMemory = wasm.memory; // the module's linear memory (e2e/bench.mjs reads its size)
  window.mentis = db;
  $("storage-name").textContent = db.storageName;
  refresh();
  const n = db.openReport.chains.reduce((s, c) => s + c.thought_count, 0);
  setStatus(`Ready: ${db.openReport.chains.length} chain(s), ${n} thought(s) verified`, "ok");
  document.body.dataset.ready = "true";
});
