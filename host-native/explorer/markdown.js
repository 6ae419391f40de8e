// A tiny, safe Markdown renderer for skills: it builds DOM nodes from the
// text (headings, paragraphs, lists, block quotes, fenced code, rules,
// inline code, bold, italic, links) and never parses HTML: any markup in the
// source stays literal text. Links keep only http(s), mailto and in-page
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

/** Renders Markdown `source` into a new `<div class="markdown">`. */
export function render(source) {
  const root = h("div", { class: "markdown" });
  const lines = String(source).replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
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
