#!/usr/bin/env python3
"""Lists import cycles between the modules of a crate's src/ and exits 1 if
there is one. Usage: module_cycles.py SRC_DIR [-v]  (-v names the edges).

A module is a file (a/b.rs or a/b/mod.rs -> a::b). An edge m -> n exists when
m's code (not its comments, not its inline `mod tests`) names a
crate::/super::/self:: path that resolves to n. A module using its own
submodules, or a submodule using its parent, is not counted as a cycle."""
import os, re, sys
root = sys.argv[1]
mods = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if not f.endswith('.rs'): continue
        p = os.path.join(d, f); rel = os.path.relpath(p, root)[:-3].split(os.sep)
        if rel[-1] in ('mod', 'lib', 'main'): rel = rel[:-1]
        mods['::'.join(rel)] = p
def resolve(path):
    parts = path.split('::')
    while parts:
        k = '::'.join(parts)
        if k in mods: return k
        parts = parts[:-1]
    return ''
edges = {m: set() for m in mods}
for m, p in mods.items():
    src = open(p).read()
    src = re.sub(r'//[^\n]*', '', src)  # doc links are not imports
    src = re.sub(r'#\[cfg\(test\)\]\s*mod tests\s*\{.*', '', src, flags=re.S)  # ignore inline tests
    here = m.split('::') if m else []
    is_dir = p.endswith('mod.rs') or p.endswith('lib.rs')
    parent = here if is_dir else here[:-1]
    for mm in re.finditer(r'\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)', src):
        kind, rest = mm.group(1), mm.group(2)[2:]
        if kind == 'crate': base = []
        elif kind == 'self': base = here
        else: base = here[:-1]
        tgt = resolve('::'.join(base + rest.split('::')))
        if tgt != m and not m.startswith(tgt + '::') and tgt != '':
            edges[m].add(tgt)
# Tarjan SCC
idx = {}; low = {}; st = []; on = set(); out = []; c = [0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in edges[v]:
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: out.append(sorted(comp))
for v in mods:
    if v not in idx: sc(v)
for comp in out:
    print('cycle:', ' <-> '.join(comp))
    if '-v' in sys.argv:
        for a in comp:
            print('   ', a, '->', sorted(e for e in edges[a] if e in comp))
sys.exit(1 if out else 0)
