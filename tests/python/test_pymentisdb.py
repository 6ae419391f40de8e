"""pymentisdb, the reference's own Python client, against the REST port.

PyPI's pymentisdb==0.9.0 (its only release) ships no Python module: its
wheel and sdist hold metadata only. The first test detects that and skips
with the explanation; it runs the real client if a module ever appears.
The second test performs the same flow the client would, with `requests`.
"""

from __future__ import annotations

import importlib
import importlib.metadata

import pytest
import requests


def test_pymentisdb_client_flow(daemon):
    dist = importlib.metadata.distribution("pymentisdb")  # installed by the stage
    try:
        pymentisdb = importlib.import_module("pymentisdb")
    except ModuleNotFoundError:
        files = [str(f) for f in (dist.files or [])]
        assert not any(f.endswith(".py") for f in files), f"pymentisdb has modules but none imports: {files}"
        pytest.skip(f"pymentisdb=={dist.version} on PyPI contains no Python module (files: {files}); "
                    "the same flow is tested with requests in test_client_flow_over_rest")
    client = pymentisdb.MentisDbClient(base_url=daemon.rest)
    client.bootstrap(chain_key="py-client", content="pymentisdb bootstrap")
    client.append_thought(chain_key="py-client", thought_type=pymentisdb.ThoughtType.INSIGHT, content="Rate limiting is the real bottleneck.")
    found = client.search(chain_key="py-client", text="rate limiting")
    assert found
    assert client.recent_context(chain_key="py-client")
    assert client.head(chain_key="py-client")


def test_client_flow_over_rest(daemon):
    s = requests.Session()
    base = daemon.rest

    def post(path, body):
        r = s.post(base + path, json=body, timeout=30)
        assert r.status_code == 200, f"{path}: {r.status_code} {r.text}"
        return r.json()

    boot = post("/v1/bootstrap", {"chain_key": "py-client", "agent_id": "py", "content": "pymentisdb bootstrap", "storage_adapter": "jsonl"})
    assert boot["bootstrapped"] is True
    appended = post("/v1/thoughts", {"chain_key": "py-client", "agent_id": "py", "thought_type": "Insight", "content": "Rate limiting is the real bottleneck.", "importance": 1.5})
    assert appended["thought"]["importance"] == 1.0, "importance is clamped to 0..1"
    assert appended["thought"]["role"] == "Memory" and appended["head_hash"] == appended["thought"]["hash"]
    found = post("/v1/search", {"chain_key": "py-client", "text": "rate limiting"})
    assert [t["content"] for t in found["thoughts"]] == ["Rate limiting is the real bottleneck."]
    ctx = post("/v1/recent-context", {"chain_key": "py-client"})
    assert "Rate limiting" in ctx["prompt"]
    head = post("/v1/head", {"chain_key": "py-client"})
    assert head["thought_count"] == 2 and head["integrity_ok"] is True
    assert head["storage_location"].endswith(".jsonl")
