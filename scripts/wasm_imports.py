#!/usr/bin/env python3
"""Lists the imports of a core wasm module; with --expect-none, fails if there are any.

Parses the binary format directly (section id 2 is the import section), so it
needs nothing but Python.
"""
import sys


def leb(data, pos):
    result = shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return result, pos


def name(data, pos):
    n, pos = leb(data, pos)
    return data[pos:pos + n].decode(), pos + n


def imports(path):
    data = open(path, "rb").read()
    assert data[:4] == b"\0asm", f"{path} is not a wasm module"
    assert data[4:8] == b"\x01\0\0\0", f"{path} is not a core module (a component?)"
    pos, found = 8, []
    while pos < len(data):
        sid = data[pos]
        size, pos = leb(data, pos + 1)
        end = pos + size
        if sid == 2:
            count, p = leb(data, pos)
            for _ in range(count):
                module, p = name(data, p)
                field, p = name(data, p)
                kind = data[p]
                p += 1
                if kind == 0:
                    _, p = leb(data, p)
                elif kind == 1:
                    p += 1
                    flags, p = leb(data, p)
                    _, p = leb(data, p)
                    if flags & 1:
                        _, p = leb(data, p)
                elif kind == 2:
                    flags, p = leb(data, p)
                    _, p = leb(data, p)
                    if flags & 1:
                        _, p = leb(data, p)
                elif kind == 3:
                    p += 2
                found.append(f"{module}.{field}")
        pos = end
    return found


if __name__ == "__main__":
    path = sys.argv[1]
    found = imports(path)
    for i in found:
        print("import:", i)
    size = len(open(path, "rb").read())
    print(f"{path}: {len(found)} imports, {size} bytes")
    if "--expect-none" in sys.argv and found:
        sys.exit(f"the core must import nothing from its host, found {len(found)} imports")
