// #/webhooks: the daemon's webhooks (GET /v1/webhooks; admin on all
// chains) with their delivery state, registering one (POST /v1/webhooks;
// its secret is shown once, here) and deleting one (DELETE /v1/webhooks/{id}).

import { del, get, post } from "./api.js";
import { attempt, button, field, h, list, replace, status, table, when } from "./dom.js";
import { THOUGHT_TYPES } from "./types.js";

export async function webhooksView(main) {
  const { webhooks } = await get("/v1/webhooks");
  const reload = () => window.dispatchEvent(new HashChangeEvent("hashchange"));
  const rows = webhooks.map((w) => [
    h("code", { class: "webhook-id" }, w.id),
    h("span", { class: "webhook-url" }, w.url),
    w.chain_key_filter ?? "all chains",
    w.thought_type_filter?.length ? w.thought_type_filter.join(", ") : "all types",
    h("span", { class: w.active ? "ok" : "error" }, w.active ? "active" : "inactive"),
    String(w.delivered ?? 0),
    when(w.last_delivered_at),
    w.last_error ? h("span", { class: "error" }, w.last_error) : "—",
    button("Delete", async () => {
      if (!confirm(`Delete the webhook to ${w.url}? Deliveries not yet made are dropped.`)) return;
      if (await attempt("Delete", () => del(`/v1/webhooks/${encodeURIComponent(w.id)}`))) {
        status(`Deleted the webhook to ${w.url}.`);
        reload();
      }
    }, { class: "danger", "aria-label": `Delete the webhook to ${w.url}` }),
  ]);

  const [urlWrap, url] = field("URL", { id: "webhook-url", type: "url", required: true, placeholder: "https://hooks.example.com/mentisdb" });
  const [chainWrap, chain] = field("Only this chain", { id: "webhook-chain" });
  const [typesWrap, types] = field("Only these thought types", { id: "webhook-types", list: "webhook-type-list", placeholder: "Decision, Insight" });
  const [secretWrap, secret] = field("Secret (16-256 bytes; empty: generated)", { id: "webhook-secret", type: "password", autocomplete: "off" });
  const secretOut = h("div", { id: "webhook-secret-out" });
  const form = h("form", { id: "webhook-form", class: "op wide" }, urlWrap, chainWrap, typesWrap, secretWrap,
    h("datalist", { id: "webhook-type-list" }, THOUGHT_TYPES.map((t) => h("option", { value: t }))),
    h("button", { type: "submit" }, "Register"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = { url: url.value.trim() };
    if (chain.value.trim()) body.chain_key_filter = chain.value.trim();
    if (list(types.value)) body.thought_type_filter = list(types.value);
    if (secret.value) body.secret = secret.value;
    const r = await attempt("Register", () => post("/v1/webhooks", body));
    if (!r) return;
    status(`Registered a webhook to ${r.webhook.url}.`);
    // The secret is in this reply only: show it until the next view.
    await webhooksView(main);
    replace(main.querySelector("#webhook-secret-out"), h("p", { class: "secret", role: "note" },
      "The webhook's secret, shown only now (signatures are HMAC-SHA256 of the body with it): ", h("code", { id: "webhook-secret-value" }, r.secret)));
  });

  replace(main,
    h("h1", {}, "Webhooks"),
    h("p", { class: "hint" }, "Each thought appended after registration is POSTed to the URL, signed (X-MentisDB-Signature), retried until acknowledged. Loopback and private addresses need MENTISDB_WEBHOOK_ALLOWED_CIDRS."),
    webhooks.length ? table(["id", "url", "chain", "types", "state", "delivered", "last delivery", "last error", "actions"], rows, "Registered webhooks")
      : h("p", { class: "empty" }, "No webhooks."),
    h("section", { "aria-labelledby": "webhook-new" }, h("h2", { id: "webhook-new" }, "Register a webhook"), secretOut, form));
}
