"""Restart the daemon (graceful and SIGKILL): everything acknowledged
before is there and verifies."""

from __future__ import annotations

import pytest
import requests

from conftest import Daemon


def all_thoughts(d: Daemon, chain: str) -> list[dict]:
    out = d.ok("/v1/thoughts/traverse", {"chain_key": chain, "anchor_boundary": "genesis", "direction": "forward", "chunk_size": 500})
    return out["thoughts"]


@pytest.mark.parametrize("kill", [False, True], ids=["sigterm", "sigkill"])
def test_restart_keeps_everything(data_dir, kill):
    d = Daemon(data_dir)
    d.ok("/v1/bootstrap", {"chain_key": "bin", "content": "binary chain"})
    d.ok("/v1/bootstrap", {"chain_key": "txt", "content": "jsonl chain", "storage_adapter": "jsonl"})
    for i in range(25):
        for chain in ("bin", "txt"):
            d.ok("/v1/thoughts", {"chain_key": chain, "thought_type": "Finding", "content": f"{chain} fact {i}", "tags": [f"t{i}"]})
    d.ok("/v1/agents/upsert", {"chain_key": "bin", "agent_id": "astro", "display_name": "Astro"})
    before = {c: all_thoughts(d, c) for c in ("bin", "txt")}
    d.stop(kill=kill)

    d2 = Daemon(data_dir)
    try:
        for chain in ("bin", "txt"):
            head = d2.ok("/v1/head", {"chain_key": chain})
            assert head["integrity_ok"] is True and head["thought_count"] == 26
            assert all_thoughts(d2, chain) == before[chain]
        agent = d2.ok("/v1/agent", {"chain_key": "bin", "agent_id": "astro"})
        assert agent["agent"]["display_name"] == "Astro"
        chains = requests.get(d2.rest + "/v1/chains", timeout=10).json()
        adapters = {c["chain_key"]: c["storage_adapter"] for c in chains["chains"]}
        assert adapters == {"bin": "binary", "txt": "jsonl"}
    finally:
        d2.stop()
