// DOM helpers. Everything the page shows is built with these: text goes in
// through textContent only, never parsed as HTML (thoughts are untrusted).

/**
 * Creates an element: `h("a", {href: "#/x", class: "k"}, "text", child)`.
 * Attributes are set with setAttribute (never `on*` handlers or `style`);
 * children are nodes or strings (as text nodes); null/false are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") || name === "style") throw new Error(`attribute ${name} is not allowed`);
    el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/** Appends nodes or strings (as text) to `el`, flattening arrays. */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Removes every child of `el`, then appends `children`. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** A labelled input: returns [wrapper, input]. */
export function field(label, attrs = {}) {
  const id = attrs.id ?? `f-${Math.random().toString(36).slice(2, 9)}`;
  const input = h(attrs.tag ?? "input", { ...attrs, tag: null, id });
  return [h("label", { for: id, class: "field" }, h("span", {}, label), input), input];
}

/** A labelled select of `options` ([value, text] pairs or strings). */
export function select(label, options, attrs = {}) {
  const [wrap, sel] = field(label, { ...attrs, tag: "select" });
  for (const o of options) {
    const [value, text] = Array.isArray(o) ? o : [o, o];
    sel.append(h("option", { value }, text));
  }
  return [wrap, sel];
}

/** A button that runs `action` on click, disabled while it runs. */
export function button(text, action, attrs = {}) {
  const b = h("button", { type: "button", ...attrs }, text);
  b.addEventListener("click", async () => {
    b.disabled = true;
    try {
      await action();
    } finally {
      b.disabled = false;
    }
  });
  return b;
}

/** A definition list of [term, value] rows; values may be nodes. */
export function facts(rows) {
  const dl = h("dl", { class: "facts" });
  for (const [term, value] of rows) {
    if (value === undefined) continue;
    dl.append(h("dt", {}, term), h("dd", {}, value === null ? "—" : value));
  }
  return dl;
}

/** A table with a header row and data rows (cells: nodes or strings). */
export function table(headers, rows, caption) {
  return h("table", {},
    caption ? h("caption", {}, caption) : null,
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c))))));
}

/** Splits "a, b ,c" into ["a","b","c"]; empty gives undefined. */
export function list(text) {
  const items = String(text ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  return items.length ? items : undefined;
}

/** `#/chain/<key>` style link with an encoded path segment per part. */
export function route(...parts) {
  return "#/" + parts.map((p) => encodeURIComponent(String(p))).join("/");
}

/** Short relative+absolute time text of an RFC 3339 timestamp. */
export function when(ts) {
  if (!ts) return "—";
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? String(ts) : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

/** Offers `blob` as a download named `name`. */
export function download(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: name, class: "hidden" });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * Shows `text` in the page's status line; `kind` "error" marks it as such.
 * By default the message outlives the next view change (an action that
 * navigates still reports what it did), then [`clearStatus`] removes it;
 * with `keep: false` it belongs to the current view and goes with it.
 */
export function status(text, kind = "info", { keep = true } = {}) {
  const line = document.getElementById("status");
  line.textContent = text;
  line.dataset.kind = kind;
  if (keep) line.dataset.keep = "once";
  else delete line.dataset.keep;
}

/** Called on every view change: clears the status unless just set. */
export function clearStatus() {
  const line = document.getElementById("status");
  if (line.dataset.keep) delete line.dataset.keep;
  else line.textContent = "";
}

/**
 * Runs `action`, reporting its failure in the status line (not thrown). A
 * token problem (401/403) is explained once, by the page's token message:
 * the status line then only says what failed.
 */
export async function attempt(what, action) {
  try {
    const result = await action();
    return result;
  } catch (e) {
    const auth = e.status === 401 || e.status === 403;
    status(auth ? `${what} failed (HTTP ${e.status}; see the message above).` : `${what} failed: ${e.message}`, "error", { keep: false });
    return undefined;
  }
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element (the charts and graphs): `attrs` set as attributes (null and undefined left out), children appended, strings as text nodes. */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

/** `text` cut to `n` characters, the last an ellipsis when cut. */
export function clip(text, n) {
  const s = String(text ?? "");
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
