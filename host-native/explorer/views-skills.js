// #/skills and #/skill/<id>: the skill registry. A skill's versions, its
// rendered and source views, a line diff between any two versions, the
// safety warnings (with links to their lines), and upload, deprecate, revoke.

import { get, post } from "./api.js";
import { attempt, field, h, replace, route, select, status, table, when } from "./dom.js";
import { diffLines } from "./diff.js";
import { render } from "./markdown.js";

function uploadForm(skillId, content = "") {
  const [agentWrap, agent] = field("Uploading agent id", { id: "upload-agent", required: true });
  const [chainWrap, chain] = field("Chain whose registry holds the agent", { id: "upload-chain", placeholder: "default chain" });
  const [idWrap, id] = field("Skill id (empty: from the name)", { id: "upload-id", value: skillId ?? "" });
  const [fmtWrap, fmt] = select("Format", ["markdown", "json"], { id: "upload-format" });
  const [textWrap, text] = field("Content", { id: "upload-content", tag: "textarea", rows: 12, required: true });
  text.value = content;
  const form = h("form", { id: "upload-form", class: "op wide" }, agentWrap, chainWrap, idWrap, fmtWrap, textWrap, h("button", { type: "submit" }, "Upload"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = { agent_id: agent.value.trim(), content: text.value, format: fmt.value };
    if (chain.value.trim()) body.chain_key = chain.value.trim();
    if (id.value.trim()) body.skill_id = id.value.trim();
    const r = await attempt("Upload", () => post("/v1/skills/upload", body));
    if (r) {
      status(`Uploaded ${r.skill.skill_id}: version ${r.skill.version_count}.`);
      const target = route("skill", r.skill.skill_id);
      if (location.hash === target) window.dispatchEvent(new HashChangeEvent("hashchange"));
      else location.hash = target;
    }
  });
  return form;
}

export async function skillsView(main) {
  const { skills } = await get("/v1/skills");
  replace(main,
    h("h1", {}, "Skills"),
    skills.length ? table(["skill", "name", "status", "versions", "updated", "by"], skills.map((s) => [
      h("a", { href: route("skill", s.skill_id) }, s.skill_id), s.name, h("span", { class: s.status === "active" ? "ok" : "error" }, s.status),
      String(s.version_count), when(s.updated_at), s.latest_uploaded_by_agent_name ?? s.latest_uploaded_by_agent_id ?? "—",
    ]), "Skill registry") : h("p", { class: "empty" }, "No skills yet."),
    h("section", { "aria-labelledby": "upload-title" }, h("h2", { id: "upload-title" }, "Upload a skill"), uploadForm()));
}

/** The line number a safety warning names ("line 5: ..."), or null. */
export function warningLine(text) {
  const m = String(text).match(/^line (\d+):/);
  return m ? Number(m[1]) : null;
}

function sourceView(content, flagged) {
  return h("ol", { class: "source", id: "skill-source", "aria-label": "Source, by line" }, content.split("\n").map((line, i) =>
    h("li", { id: `src-line-${i + 1}`, class: flagged.has(i + 1) ? "flagged" : null, tabindex: flagged.has(i + 1) ? -1 : null }, h("code", {}, line || " "))));
}

function diffView(entries) {
  const changed = entries.filter((e) => e.op !== " ").length;
  return h("div", { id: "skill-diff" },
    h("p", { class: "hint" }, changed ? `${entries.filter((e) => e.op === "-").length} line(s) removed, ${entries.filter((e) => e.op === "+").length} added.` : "The versions are the same."),
    h("table", { class: "diff" }, h("caption", { class: "sr-only" }, "Line diff"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "old"), h("th", { scope: "col" }, "new"), h("th", { scope: "col" }, "change"), h("th", { scope: "col" }, "line"))),
      h("tbody", {}, entries.map((e) => h("tr", { class: e.op === "+" ? "add" : e.op === "-" ? "del" : "same" },
        h("td", { class: "ln" }, e.a ?? ""), h("td", { class: "ln" }, e.b ?? ""), h("td", { class: "op" }, e.op === " " ? "" : e.op === "+" ? "added" : "removed"),
        h("td", {}, h("code", {}, e.text || " ")))))));
}

export async function skillView(main, skillId) {
  const [versions, latest] = await Promise.all([post("/v1/skills/versions", { skill_id: skillId }), post("/v1/skills/read", { skill_id: skillId, format: "markdown" })]);
  const list = versions.versions;
  const byId = new Map();
  const read = async (versionId) => {
    if (!byId.has(versionId)) byId.set(versionId, await post("/v1/skills/read", { skill_id: skillId, version_id: versionId, format: "markdown" }));
    return byId.get(versionId);
  };
  byId.set(latest.version_id, latest);
  const label = (v) => `v${v.version_number} · ${when(v.uploaded_at)} · ${v.uploaded_by_agent_name ?? v.uploaded_by_agent_id}`;
  const options = list.map((v) => [v.version_id, label(v)]).reverse();

  const body = h("div", { id: "skill-body" });
  const warnings = h("ul", { id: "skill-warnings", class: "warnings" });
  const [showWrap, show] = select("Version", options, { id: "skill-version" });
  const [modeWrap, mode] = select("View", [["rendered", "Rendered"], ["source", "Source"]], { id: "skill-mode" });
  show.value = latest.version_id;
  const showVersion = async () => {
    const v = await attempt("Read", () => read(show.value));
    if (!v) return;
    const flagged = new Set(v.safety_warnings.map(warningLine).filter((n) => n !== null));
    replace(warnings, v.safety_warnings.map((w) => {
      const line = warningLine(w);
      if (line === null) return h("li", {}, w);
      const jump = h("button", { type: "button", class: "link" }, `line ${line}`);
      jump.addEventListener("click", () => {
        mode.value = "source";
        paint().then(() => document.getElementById(`src-line-${line}`)?.focus());
      });
      return h("li", { class: "flag" }, jump, w.slice(w.indexOf(":")));
    }));
    const paint = async () => replace(body, mode.value === "source" ? sourceView(v.content, flagged) : render(v.content));
    mode.onchange = paint;
    await paint();
  };
  show.addEventListener("change", showVersion);

  const [fromWrap, from] = select("From", options, { id: "diff-from" });
  const [toWrap, to] = select("To", options, { id: "diff-to" });
  if (options.length > 1) from.value = options[1][0];
  const diffOut = h("div", { id: "diff-out" });
  const diffForm = h("form", { id: "diff-form", class: "filters" }, fromWrap, toWrap, h("button", { type: "submit" }, "Compare"));
  diffForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    const pair = await attempt("Diff", () => Promise.all([read(from.value), read(to.value)]));
    if (!pair) return;
    try {
      replace(diffOut, diffView(diffLines(pair[0].content, pair[1].content)));
    } catch (err) {
      status(err.message, "error");
    }
  });

  const [reasonWrap, reason] = field("Reason", { id: "status-reason" });
  const lifecycle = (what, path) => {
    const b = h("button", { type: "button", class: "danger" }, what);
    b.addEventListener("click", async () => {
      if (!confirm(`${what} skill “${skillId}”? Agents reading it will be warned${what === "Revoke" ? " not to follow it" : ""}.`)) return;
      const r = await attempt(what, () => post(path, { skill_id: skillId, reason: reason.value.trim() || undefined }));
      if (r) {
        status(`${what}d ${skillId}.`);
        window.dispatchEvent(new HashChangeEvent("hashchange"));
      }
    });
    return b;
  };

  const history = versions.status_history ?? [];
  replace(main,
    h("p", { class: "crumbs" }, h("a", { href: "#/skills" }, "← skills")),
    h("h1", {}, "Skill ", h("code", {}, skillId), " ", h("span", { id: "skill-status", class: latest.status === "active" ? "ok" : "error" }, latest.status)),
    table(["version", "uploaded", "by", "format", "content hash", "signed"], list.map((v) => [
      `v${v.version_number}`, when(v.uploaded_at), v.uploaded_by_agent_name ?? v.uploaded_by_agent_id, v.source_format,
      h("code", { title: v.content_hash }, v.content_hash.slice(0, 16)), v.skill_signature ? `yes (${v.signing_key_id})` : "no",
    ]), "Versions"),
    history.length ? h("p", { class: "hint" }, `Status changes: ${history.map((s) => `${s.status ?? ""} ${when(s.changed_at ?? s.at)} ${s.reason ?? ""}`.trim()).join("; ")}`) : null,
    h("section", { "aria-labelledby": "content-title" }, h("h2", { id: "content-title" }, "Content"),
      h("div", { class: "filters" }, showWrap, modeWrap),
      h("h3", {}, "Safety warnings"), warnings, body),
    h("section", { "aria-labelledby": "diff-title" }, h("h2", { id: "diff-title" }, "Compare versions"), diffForm, diffOut),
    h("section", { "aria-labelledby": "life-title" }, h("h2", { id: "life-title" }, "Lifecycle"),
      h("div", { class: "filters" }, reasonWrap, lifecycle("Deprecate", "/v1/skills/deprecate"), lifecycle("Revoke", "/v1/skills/revoke"))),
    h("section", { "aria-labelledby": "new-version-title" }, h("h2", { id: "new-version-title" }, "Upload a new version"), uploadForm(skillId, latest.content)));
  await showVersion();
}
