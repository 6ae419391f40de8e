"""Provable memory, checked by an independent verifier written from the
specifications (not from the daemon's code): RFC 9162 section 2.1.3.2
(inclusion) and 2.1.4.2 (consistency), and the C2SP signed-note /
tlog-checkpoint formats with Ed25519 (`cryptography`).
"""

from __future__ import annotations

import base64
import hashlib

import requests
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def leaf(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def verify_inclusion(leaf_hash: bytes, index: int, size: int, path: list[bytes], root: bytes) -> bool:
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf_hash
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes, path: list[bytes]) -> bool:
    if first == second:
        return not path and first_root == second_root
    if first == 0 or first > second or not path:
        return False
    if first & (first - 1) == 0:
        path = [first_root] + path
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node(c, fr), node(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == first_root and sr == second_root and sn == 0


def verify_checkpoint(text: str, name: str, public_key: bytes) -> tuple[str, int, bytes]:
    """Returns (origin, size, root) of a checkpoint signed by `name`'s Ed25519 key."""
    body, sigs = text.split("\n\n", 1)
    body += "\n"
    origin, size, root_b64 = body.split("\n")[:3]
    key_id = hashlib.sha256(name.encode() + b"\n" + b"\x01" + public_key).digest()[:4]
    for line in sigs.splitlines():
        assert line.startswith("\u2014 "), line
        who, blob = line[2:].rsplit(" ", 1)
        raw = base64.b64decode(blob, validate=True)
        if who == name and raw[:4] == key_id:
            Ed25519PublicKey.from_public_bytes(public_key).verify(raw[4:], body.encode())
            return origin, int(size), base64.b64decode(root_b64, validate=True)
    raise AssertionError(f"no signature by {name}")


def test_the_daemons_checkpoints_and_proofs_verify_independently(daemon):
    ident = requests.get(daemon.rest + "/v1/identity", timeout=30).json()
    name, pk = ident["name"], bytes.fromhex(ident["public_key"])
    key_id = hashlib.sha256(name.encode() + b"\n" + b"\x01" + pk).digest()[:4].hex()
    assert ident["verifier_key"] == name + "+" + key_id + "+" + base64.b64encode(b"\x01" + pk).decode()
    appended = [daemon.ok("/v1/thoughts", {"chain_key": "py-proofs", "thought_type": "Finding", "content": f"fact {i}"}) for i in range(13)]
    old = verify_checkpoint(daemon.ok("/v1/checkpoint", {"chain_key": "py-proofs"})["checkpoint"], name, pk)
    assert old[0] == f"{name}/py-proofs" and old[1] == 13
    for a in appended:
        # The leaf hash is SHA-256(0x00 || the 32 raw bytes of the chain hash).
        assert bytes.fromhex(a["leaf_hash"]) == leaf(bytes.fromhex(a["thought"]["hash"]))
        i = a["thought"]["index"]
        p = daemon.ok("/v1/proofs/inclusion", {"chain_key": "py-proofs", "index": i, "tree_size": 13})
        path = [bytes.fromhex(h) for h in p["hashes"]]
        assert verify_inclusion(bytes.fromhex(a["leaf_hash"]), i, 13, path, old[2])
        if path:
            bad = bytearray(path[0])
            bad[0] ^= 1
            assert not verify_inclusion(bytes.fromhex(a["leaf_hash"]), i, 13, [bytes(bad)] + path[1:], old[2])
    for i in range(13, 30):
        daemon.ok("/v1/thoughts", {"chain_key": "py-proofs", "thought_type": "Finding", "content": f"fact {i}"})
    new = verify_checkpoint(daemon.ok("/v1/checkpoint", {"chain_key": "py-proofs"})["checkpoint"], name, pk)
    assert new[1] == 30
    for first in (1, 4, 13, 29, 30):
        c = daemon.ok("/v1/proofs/consistency", {"chain_key": "py-proofs", "first": first, "second": 30})
        first_root = old[2] if first == 13 else bytes.fromhex(c["first_root"])
        assert verify_consistency(first, 30, first_root, new[2], [bytes.fromhex(h) for h in c["hashes"]]), first


def test_a_tampered_checkpoint_signature_is_rejected(daemon):
    ident = requests.get(daemon.rest + "/v1/identity", timeout=30).json()
    daemon.ok("/v1/thoughts", {"chain_key": "py-sig", "thought_type": "Finding", "content": "x"})
    note = daemon.ok("/v1/checkpoint", {"chain_key": "py-sig"})["checkpoint"]
    tampered = note.replace("\n1\n", "\n2\n", 1)
    try:
        verify_checkpoint(tampered, ident["name"], bytes.fromhex(ident["public_key"]))
    except InvalidSignature:
        return
    raise AssertionError("a changed tree size verified")
