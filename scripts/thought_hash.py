#!/usr/bin/env python3
"""Recompute a MentisDB thought hash from its JSON, independently of the Rust code.

An implementation of the canonical encoding as docs/architecture/hashing.md
documents it, schemas 1, 2 and 3 (schema 2 plus an entity_type), forgotten
thoughts included. It exists
so the golden vectors in core/src/canonical.rs are not checked against the
code that produced them, and so anyone can verify a thought by hand:

    curl -s -X POST localhost:9472/v1/thought -H 'content-type: application/json' \\
         -d '{"chain_key":"k","thought_index":3}' | jq .thought | scripts/thought_hash.py

Prints the recomputed hash, and exits 1 when it differs from the thought's `hash`.
"""
import hashlib
import json
import struct
import sys


def u8(v):
    return struct.pack("<B", v)


def u32(v):
    return struct.pack("<I", v)


def u64(v):
    return struct.pack("<Q", v)


def f64(v):
    return struct.pack("<d", v)


def bytes_(b):
    return u32(len(b)) + b


def str_(s):
    return bytes_(s.encode("utf-8"))


def opt(v, enc):
    return u8(0) if v is None else u8(1) + enc(v)


def str_list(items):
    return u32(len(items)) + b"".join(str_(s) for s in items)


def signature(t):
    sig = t.get("thought_signature")
    return opt(None if sig is None else bytes(sig), bytes_)


def scores(t):
    return opt(t.get("confidence"), f64) + f64(t["importance"])


def links(t):
    out = u32(len(t["refs"])) + b"".join(u64(r) for r in t["refs"])
    out += u32(len(t["relations"]))
    for r in t["relations"]:
        out += str_(r["kind"]) + str_(r["target_id"]) + opt(r.get("target_index"), u64) + opt(r.get("chain_key"), str_)
    return out


def head(t):
    return (u32(t["schema_version"]) + u64(t["index"]) + str_(t["id"]) + str_(t["timestamp"])
            + opt(t.get("session_id"), str_) + str_(t["agent_id"]) + str_(t["agent_name"])
            + opt(t.get("agent_owner"), str_) + opt(t.get("signing_key_id"), str_))


def thought_hash(t):
    if t["schema_version"] == 1:
        body = (head(t) + signature(t) + str_(t["thought_type"]) + str_(t["role"]) + str_(t["content"])
                + scores(t) + str_list(t["tags"]) + str_list(t["concepts"]) + links(t) + opt(t.get("prev_hash"), str_))
        return hashlib.sha256(b"mentisdb/thought/v1\0" + body).hexdigest()
    fields = (head(t) + str_(t["thought_type"]) + str_(t["role"]) + scores(t) + links(t)
              + opt(t.get("prev_hash"), str_))
    if t["schema_version"] == 3:
        fields += str_(t["entity_type"])
    if t.get("forgotten"):
        content_digest = bytes.fromhex(t["forgotten"]["content_digest"])
    else:
        erasable = (bytes_(bytes.fromhex(t["content_salt"])) + signature(t) + str_(t["content"])
                    + str_list(t["tags"]) + str_list(t["concepts"]))
        content_digest = hashlib.sha256(b"mentisdb/thought-content/v2\0" + erasable).digest()
    domain = b"mentisdb/thought/v3\0" if t["schema_version"] == 3 else b"mentisdb/thought/v2\0"
    return hashlib.sha256(domain + fields + content_digest).hexdigest()


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    t = json.load(sys.stdin)
    h = thought_hash(t)
    print(h)
    return 0 if h == t.get("hash", h) else 1


if __name__ == "__main__":
    sys.exit(main())
