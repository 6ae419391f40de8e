// #/agents/<key>: the chain's agent registry (POST /v1/agent-registry) with
// keys, aliases and activity, and the actions the API allows: add or update
// an agent, add an alias, add and revoke a key, disable an agent.

import { post } from "./api.js";
import { attempt, button, field, h, replace, route, status, table, when } from "./dom.js";
import { exportMarkdown } from "./exports.js";

/** Bytes of a 32-byte Ed25519 public key given as hex or base64. */
export function keyBytes(text) {
  const s = text.trim();
  let bytes;
  if (/^[0-9a-fA-F]{64}$/.test(s)) bytes = s.match(/../g).map((b) => parseInt(b, 16));
  else {
    try {
      bytes = Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
    } catch {
      throw new Error("the public key must be 64 hex digits or base64");
    }
  }
  if (bytes.length !== 32) throw new Error(`an Ed25519 public key has 32 bytes, this has ${bytes.length}`);
  return bytes;
}

/** Whether an agent's or a key's status is active (`"Active"`, as MentisDB writes it; any case). */
function isActive(s) {
  return String(s).toLowerCase() === "active";
}

function form(id, title, fields, submitText, onSubmit) {
  const inputs = {};
  const wraps = fields.map(([name, label, attrs]) => {
    const [wrap, input] = field(label, { id: `${id}-${name}`, ...attrs });
    inputs[name] = input;
    return wrap;
  });
  const f = h("form", { id, class: "op" }, h("h3", {}, title), wraps, h("button", { type: "submit" }, submitText));
  f.addEventListener("submit", async (e) => {
    e.preventDefault();
    const values = Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value.trim()]));
    await onSubmit(values);
  });
  return f;
}

export async function agentsView(main, chainKey) {
  const reload = () => window.dispatchEvent(new HashChangeEvent("hashchange"));
  const act = async (what, path, body, done) => {
    const r = await attempt(what, () => post(path, { chain_key: chainKey, ...body }));
    if (r) {
      status(done);
      reload();
    }
  };
  const registry = await post("/v1/agent-registry", { chain_key: chainKey });
  const rows = registry.agents.map((a) => [
    h("span", { class: "agent-id" }, a.agent_id),
    a.display_name ?? "—",
    a.agent_owner ?? "—",
    h("span", { class: isActive(a.status) ? "ok" : "error" }, a.status),
    a.aliases.length ? a.aliases.join(", ") : "—",
    a.public_keys.length ? h("ul", { class: "keys" }, a.public_keys.map((k) => h("li", {},
      h("code", {}, k.key_id), ` ${k.algorithm}`, !isActive(k.status) ? h("span", { class: "error" }, " revoked")
        : button("Revoke", async () => {
          if (confirm(`Revoke key ${k.key_id} of ${a.agent_id}? Signatures made with it will no longer be accepted.`)) {
            await act("Revoke key", "/v1/agents/keys/revoke", { agent_id: a.agent_id, key_id: k.key_id }, `Revoked key ${k.key_id}.`);
          }
        }, { class: "danger", "aria-label": `Revoke key ${k.key_id} of ${a.agent_id}` })))) : "—",
    String(a.thought_count),
    a.thought_count ? `${when(a.first_seen_at)} → ${when(a.last_seen_at)}` : "—",
    h("span", { class: "actions" },
      button("Markdown", () => exportMarkdown(chainKey, a.agent_id), { "aria-label": `Export the thoughts of ${a.agent_id} as Markdown` }),
      isActive(a.status) ? button("Disable", async () => {
        if (confirm(`Disable agent ${a.agent_id}? Its appends will be refused.`)) {
          await act("Disable", "/v1/agents/disable", { agent_id: a.agent_id }, `Disabled ${a.agent_id}.`);
        }
      }, { class: "danger", "aria-label": `Disable agent ${a.agent_id}` }) : null),
  ]);
  replace(main,
    h("p", { class: "crumbs" }, h("a", { href: route("chain", chainKey) }, `← ${chainKey}`)),
    h("h1", {}, "Agents of ", h("code", {}, chainKey)),
    registry.agents.length ? table(["agent id", "name", "owner", "status", "aliases", "keys", "thoughts", "active", "actions"], rows, "Agent registry")
      : h("p", { class: "empty" }, "No agents yet."),
    h("section", { "aria-labelledby": "agent-ops" }, h("h2", { id: "agent-ops" }, "Change the registry"), h("div", { class: "ops" },
      form("upsert-agent", "Add or update an agent", [["agent_id", "Agent id", { required: true }], ["display_name", "Display name"], ["agent_owner", "Owner"], ["description", "Description"]], "Save agent",
        (v) => act("Save agent", "/v1/agents/upsert", Object.fromEntries(Object.entries(v).filter(([, x]) => x)), `Saved agent ${v.agent_id}.`)),
      form("add-alias", "Add an alias", [["agent_id", "Agent id", { required: true }], ["alias", "Alias", { required: true }]], "Add alias",
        (v) => act("Add alias", "/v1/agents/aliases", v, `Added alias ${v.alias}.`)),
      form("add-key", "Add an Ed25519 key", [["agent_id", "Agent id", { required: true }], ["key_id", "Key id", { required: true }], ["public_key", "Public key (hex or base64)", { required: true }]], "Add key",
        async (v) => {
          let bytes;
          try {
            bytes = keyBytes(v.public_key);
          } catch (e) {
            status(`Add key failed: ${e.message}`, "error");
            return;
          }
          await act("Add key", "/v1/agents/keys", { agent_id: v.agent_id, key_id: v.key_id, algorithm: "ed25519", public_key_bytes: bytes }, `Added key ${v.key_id}.`);
        }))));
}
