// A tiny, safe Markdown renderer for skills: it builds DOM nodes from the
// text (YAML front matter as a table of its keys, headings, paragraphs,
// lists, block quotes, fenced code, rules, inline code, bold, italic, links)
// and never parses HTML: any markup in the source stays literal text. Links keep only http(s), mailto and in-page
// targets; others become plain text.

import { h } from "./dom.js";

const SAFE_LINK = /^(https?:\/\/|mailto:|#)/i;

/** Inline spans of one line of text: an array of nodes. */
export function inline(text) {
  const out = [];
  // code | link | bold | italic, leftmost first.
  const pattern = /`([^`]+)`|\[([^\]]+)\]\(([^)\s]+)\)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_/g;
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
    if (m[1] !== undefined) out.push(h("code", {}, m[1]));
    else if (m[2] !== undefined) {
      out.push(SAFE_LINK.test(m[3]) ? h("a", { href: m[3], rel: "noopener noreferrer", target: m[3].startsWith("#") ? null : "_blank" }, ...inline(m[2])) : document.createTextNode(m[0]));
    } else if (m[4] !== undefined || m[5] !== undefined) out.push(h("strong", {}, ...inline(m[4] ?? m[5])));
    else out.push(h("em", {}, ...inline(m[6] ?? m[7])));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}

/**
 * The YAML front matter at the start of `lines` ("---", then "key: value"
 * lines, then "---" or "..."): {rows: [[key, value]], end: index after it},
 * or null. A key's indented or "- " lines below it are its value, one per
 * line; quotes around a plain value are dropped. Nothing is evaluated.
 */
export function frontMatter(lines) {
  if (lines[0]?.trim() !== "---") return null;
  const close = lines.findIndex((l, i) => i > 0 && (l.trim() === "---" || l.trim() === "..."));
  if (close < 0) return null;
  const rows = [];
  for (const line of lines.slice(1, close)) {
    if (!line.trim() || line.trimStart().startsWith("#")) continue;
    const kv = line.match(/^([^\s:#][^:]*?)\s*:(?:\s+(.*)|\s*)$/);
    if (kv && !/^\s/.test(line)) {
      rows.push([kv[1], (kv[2] ?? "").trim().replace(/^(["'])(.*)\1$/, "$2")]);
    } else if (rows.length) {
      const last = rows.at(-1);
      last[1] = last[1] ? `${last[1]}\n${line.trim()}` : line.trim();
    } else {
      rows.push(["", line.trim()]);
    }
  }
  return { rows, end: close + 1 };
}

function frontMatterTable(rows) {
  return h("table", { class: "front-matter" }, h("caption", {}, "Front matter"),
    h("tbody", {}, rows.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, yamlList(v) ?? v)))));
}

/** A value of "- a" lines as a `<ul>`, else null. */
function yamlList(value) {
  const items = value.split("\n");
  if (!value || !items.every((l) => l.startsWith("- "))) return null;
  return h("ul", {}, items.map((l) => h("li", {}, l.slice(2).replace(/^(["'])(.*)\1$/, "$2"))));
}

/** Renders Markdown `source` into a new `<div class="markdown">`. */
export function render(source) {
  const root = h("div", { class: "markdown" });
  const lines = String(source).replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  const front = frontMatter(lines);
  if (front) {
    root.append(frontMatterTable(front.rows));
    i = front.end;
  }
  let paragraph = [];
  const flush = () => {
    if (paragraph.length) root.append(h("p", {}, ...inline(paragraph.join(" "))));
    paragraph = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```|~~~)\s*([\w+-]*)/);
    if (fence) {
      flush();
      const body = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) body.push(lines[i]);
      i++;
      root.append(h("pre", {}, h("code", { "data-lang": fence[2] || null }, body.join("\n"))));
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      flush();
      root.append(h(`h${Math.min(6, heading[1].length + 1)}`, {}, ...inline(heading[2])));
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      root.append(h("hr"));
      i++;
      continue;
    }
    const item = line.match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
    if (item) {
      flush();
      const ordered = /\d/.test(item[1]);
      const listEl = h(ordered ? "ol" : "ul");
      while (i < lines.length) {
        const m = lines[i].match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
        if (!m || /\d/.test(m[1]) !== ordered) break;
        listEl.append(h("li", {}, ...inline(m[2])));
        i++;
      }
      root.append(listEl);
      continue;
    }
    if (line.startsWith(">")) {
      flush();
      const quoted = [];
      for (; i < lines.length && lines[i].startsWith(">"); i++) quoted.push(lines[i].replace(/^>\s?/, ""));
      root.append(h("blockquote", {}, render(quoted.join("\n"))));
      continue;
    }
    if (line.trim() === "") flush();
    else paragraph.push(line.trim());
    i++;
  }
  flush();
  return root;
}
