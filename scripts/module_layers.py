#!/usr/bin/env python3
"""Checks that the top-level modules of each crate stand in layers, as
ARCHITECTURE.md draws them. Usage:

    scripts/module_layers.py            check every crate; exit 1 on a problem
    scripts/module_layers.py --print    print each crate's layers as they are now

A top-level module is a file or folder directly under the crate's src/
(`core/src/chain/` is `chain`). Module A uses B when A's code, outside its
tests, names a path that resolves into B: `crate::b::...`, `super::...`
climbing into B, a `use crate::{a::X, b::Y}` group, or `$crate::b::...` in a
macro. Comments, string literals, inline `#[cfg(test)] mod tests { ... }`
and test files (`tests.rs`, or a file declared `#[cfg(test)] mod name;`)
do not count.

The rule: the uses form no cycle, and each module uses only modules on
lower layers. ARCHITECTURE.md holds, for each crate listed in CRATES, a
block opened by a line "```layers <crate>" whose lines read
"<layer number>  <module> <module> ...", top layer first. A module missing
from the drawing, a use that goes up or sideways, or a cycle is reported
with the edge that breaks the rule, and `--print` shows a drawing that
holds (each module on the lowest layer its uses allow)."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRATES = {"core": "core/src", "host-native": "host-native/src"}
# Crates checked for cycles only (small enough to need no drawing).
ACYCLIC = {"fs-storage": "fs-storage/src", "pg-storage": "pg-storage/src", "host-wasm": "host-wasm/src",
           "host-wasi": "host-wasi/src", "compat-mentisdb": "compat-mentisdb/src"}
ROOT_FILES = ("lib", "main")


# Comments, string literals (raw ones too) and char literals, read in one
# pass from the left: a `//` inside a string (a URL) is not a comment, and a
# quote inside a comment or a char literal does not open a string.
LEXEMES = re.compile(r"""//[^\n]*|/\*.*?\*/|\br(#*)"(?:.|\n)*?"\1|"(?:[^"\\]|\\.)*"|'(?:[^'\\\n]|\\'|\\[^'\n]{1,9})'""", re.S)


def strip(src):
    src = LEXEMES.sub(lambda m: "" if m.group(0).startswith("/") else '""', src)
    return re.sub(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{.*", "", src, flags=re.S)


def test_files(src_dir):
    """Files declared `#[cfg(test)] mod name;`, and every tests.rs."""
    out = set()
    for d, _, fs in os.walk(src_dir):
        for f in fs:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(d, f)
            if f == "tests.rs":
                out.add(path)
            text = open(path, encoding="utf-8").read()
            for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text):
                base = d if f in ("mod.rs", "lib.rs", "main.rs") else os.path.join(d, f[:-3])
                for cand in (os.path.join(base, m.group(1) + ".rs"), os.path.join(base, m.group(1), "mod.rs")):
                    out.add(cand)
    return out


def group_paths(src):
    """`crate::{a::X, b::{c, d}}` -> ["crate::a::X", "crate::b"]."""
    out = []
    for m in re.finditer(r"(\$?crate|super(?:::super)*|self)::\{", src):
        i, depth = m.end(), 1
        while i < len(src) and depth:
            depth += {"{": 1, "}": -1}.get(src[i], 0)
            i += 1
        body, items, cur, depth = src[m.end():i - 1], [], "", 0
        for ch in body:
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if ch == "," and depth == 0:
                items.append(cur)
                cur = ""
            else:
                cur += ch
        items.append(cur)
        for item in items:
            item = re.sub(r"\s+", "", item.split("{")[0]).rstrip(":")
            if item:
                out.append(m.group(1) + "::" + item)
    return out


def uses(src_dir):
    """The crate's top-level modules and, for each, the ones it uses (with a file that does)."""
    tops, files = set(), []
    skip = test_files(src_dir)
    for d, _, fs in os.walk(src_dir):
        for f in fs:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, src_dir)[:-3].split(os.sep)
            if rel[0] in ROOT_FILES or rel[0] == "bin":
                continue
            tops.add(rel[0])
            if path not in skip:
                files.append((path, rel))
    edges = {t: {} for t in tops}
    for path, rel in files:
        here = rel[:-1] if rel[-1] == "mod" else rel
        src = strip(open(path, encoding="utf-8").read())
        paths = [m.group(0) for m in re.finditer(r"(?:\$?crate|super(?:::super)*|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+", src)]
        for p in paths + group_paths(src):
            parts = p.split("::")
            if parts[0] in ("crate", "$crate"):
                target = parts[1:]
            elif parts[0] == "self":
                target = here + parts[1:]
            else:
                n = 0
                while parts and parts[0] == "super":
                    n, parts = n + 1, parts[1:]
                target = here[:max(len(here) - n, 0)] + parts
            if target and target[0] in tops and target[0] != here[0]:
                edges[here[0]].setdefault(target[0], os.path.relpath(path, ROOT))
    return edges


def cycles(edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def layering(edges):
    """Each module on the lowest layer its uses allow (edges must be acyclic)."""
    layer = {}

    def of(v):
        if v not in layer:
            layer[v] = 1 + max((of(w) for w in edges[v]), default=-1)
        return layer[v]

    for v in edges:
        of(v)
    return layer


def drawing(layer):
    top = max(layer.values(), default=0)
    return "\n".join(f"{n}  " + " ".join(sorted(m for m in layer if layer[m] == n)) for n in range(top, -1, -1))


def drawn(crate):
    text = open(os.path.join(ROOT, "ARCHITECTURE.md"), encoding="utf-8").read()
    m = re.search(r"^```layers " + re.escape(crate) + r"\n(.*?)^```", text, flags=re.S | re.M)
    if not m:
        return None
    layers = {}
    for line in m.group(1).splitlines():
        if line.strip():
            n, *mods = line.split()
            for mod in mods:
                layers[mod] = int(n)
    return layers


def main():
    problems = []
    for crate, src in {**CRATES, **ACYCLIC}.items():
        edges = uses(os.path.join(ROOT, src))
        found = cycles(edges)
        for comp in found:
            problems.append(f"{crate}: modules in a cycle: {' '.join(comp)}")
            for a in comp:
                for b in sorted(e for e in edges[a] if e in comp):
                    problems.append(f"    {a} uses {b} ({edges[a][b]})")
        if "--print" in sys.argv and not found and crate in CRATES:
            print(f"```layers {crate}\n{drawing(layering(edges))}\n```")
        if crate not in CRATES or found:
            continue
        layers = drawn(crate)
        if layers is None:
            problems.append(f"{crate}: ARCHITECTURE.md has no ```layers {crate} block (scripts/module_layers.py --print makes one)")
            continue
        for m in sorted(set(edges) - set(layers)):
            problems.append(f"{crate}: module {m} is not in ARCHITECTURE.md's layers")
        for m in sorted(set(layers) - set(edges)):
            problems.append(f"{crate}: ARCHITECTURE.md's layers name {m}, which is not a module")
        for a in sorted(edges):
            for b, where in sorted(edges[a].items()):
                if a in layers and b in layers and layers[b] >= layers[a]:
                    problems.append(f"{crate}: {a} (layer {layers[a]}) uses {b} (layer {layers[b]}), not below it ({where})")
    for p in problems:
        print(p)
    if problems:
        print("(scripts/module_layers.py --print shows layers that hold, when there is no cycle)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
