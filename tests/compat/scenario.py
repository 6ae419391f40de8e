"""The MentisDB 0.10 compatibility scenario: one fixed sequence of REST and
legacy-MCP requests, run against a daemon to record (the reference 0.10.10,
`record_0_10.py`) or to compare (ours, `tests/python/test_compat_0_10.py`).

Each step is a dict:
- `name`: unique, used in reports and in `known_differences.json`;
- `method`, `path`, optional `body` (strings may hold `${var}`);
- `port`: `rest` (default) or `mcp` (the legacy `/tools/*` endpoints);
- `save`: `{var: "a.b.0.c"}` paths into the reply to reuse later;
- `values`: reply paths whose values must be equal, after volatile values
  (UUIDs, hashes, times) are normalized. Without it only the status and the
  reply's field names (every field the reference sends must be in ours) are
  compared: ranking scores and rendered text are ours to improve.

Statuses and field names are compared for every step.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

CHAIN = "compat"
AGENT_KEY = list(range(1, 33))  # 32 bytes: an Ed25519 public key as a byte array

STEPS: list[dict[str, Any]] = [
    {"name": "health", "method": "GET", "path": "/health"},
    {"name": "bootstrap", "method": "POST", "path": "/v1/bootstrap",
     "body": {"chain_key": CHAIN, "agent_id": "boot", "content": "Compat chain bootstrap"}, "values": ["bootstrapped"]},
    {"name": "append-decision", "method": "POST", "path": "/v1/thoughts",
     "body": {"chain_key": CHAIN, "agent_id": "planner", "thought_type": "Decision", "content": "Use a canary before the global rollout",
              "importance": 0.9, "tags": ["deploy", "canary"], "concepts": ["rollout"]},
     "save": {"decision_id": "thought.id"}, "values": ["thought.index", "thought.thought_type", "thought.content", "thought.tags", "thought.agent_id"]},
    {"name": "append-fact", "method": "POST", "path": "/v1/thoughts",
     "body": {"chain_key": CHAIN, "agent_id": "planner", "thought_type": "FactLearned", "content": "The API rate limit is 100 requests per minute",
              "confidence": 0.8, "tags": ["api"]},
     "save": {"fact_id": "thought.id"}, "values": ["thought.index", "thought.thought_type", "thought.confidence"]},
    {"name": "append-correction", "method": "POST", "path": "/v1/thoughts",
     "body": {"chain_key": CHAIN, "agent_id": "reviewer", "thought_type": "Correction", "content": "The API rate limit is 300 requests per minute",
              "relations": [{"kind": "Supersedes", "target_id": "${fact_id}"}]},
     "values": ["thought.index", "thought.relations.0.kind"]},
    {"name": "append-lowercase-type", "method": "POST", "path": "/v1/thoughts",
     "body": {"chain_key": CHAIN, "agent_id": "planner", "thought_type": "lesson-learned", "content": "Rate limits change: read them from the API"},
     "values": ["thought.thought_type"]},
    {"name": "append-goal", "method": "POST", "path": "/v1/thoughts",
     "body": {"chain_key": CHAIN, "agent_id": "planner", "thought_type": "Goal", "content": "Finish the rollout by Friday", "entity_type": "milestone"},
     "values": ["thought.thought_type", "thought.entity_type"]},
    {"name": "append-bad-type", "method": "POST", "path": "/v1/thoughts",
     "body": {"chain_key": CHAIN, "agent_id": "planner", "thought_type": "NoSuchType", "content": "x"}},
    {"name": "append-empty-content", "method": "POST", "path": "/v1/thoughts",
     "body": {"chain_key": CHAIN, "agent_id": "planner", "thought_type": "Idea", "content": ""}},
    {"name": "search-text", "method": "POST", "path": "/v1/search",
     "body": {"chain_key": CHAIN, "text": "rate limit"}, "values": ["thoughts.#", "thoughts.0.content"]},
    {"name": "search-include-invalidated", "method": "POST", "path": "/v1/search",
     "body": {"chain_key": CHAIN, "text": "rate limit", "include_invalidated": True}, "values": ["thoughts.#"]},
    {"name": "search-types", "method": "POST", "path": "/v1/search",
     "body": {"chain_key": CHAIN, "thought_types": ["Decision"], "limit": 5}, "values": ["thoughts.#", "thoughts.0.content"]},
    {"name": "search-unknown-chain", "method": "POST", "path": "/v1/search", "body": {"chain_key": "no-such-chain", "text": "x"}},
    {"name": "lexical-search", "method": "POST", "path": "/v1/lexical-search",
     "body": {"chain_key": CHAIN, "text": "canary rollout", "limit": 5}, "values": ["total", "results.0.thought.content"]},
    {"name": "ranked-search", "method": "POST", "path": "/v1/ranked-search",
     "body": {"chain_key": CHAIN, "text": "what is the rate limit", "limit": 3}},
    {"name": "ranked-search-offset", "method": "POST", "path": "/v1/ranked-search",
     "body": {"chain_key": CHAIN, "text": "rollout", "limit": 1, "offset": 1}},
    {"name": "federated-search", "method": "POST", "path": "/v1/federated-search",
     "body": {"chain_keys": [CHAIN], "text": "canary", "limit": 3}},
    {"name": "context-bundles", "method": "POST", "path": "/v1/context-bundles",
     "body": {"chain_key": CHAIN, "text": "rate limit", "limit": 2}},
    {"name": "summary-candidates", "method": "POST", "path": "/v1/summary-candidates", "body": {"chain_key": CHAIN}},
    {"name": "recent-context", "method": "POST", "path": "/v1/recent-context", "body": {"chain_key": CHAIN, "last_n": 2}},
    {"name": "memory-markdown", "method": "POST", "path": "/v1/memory-markdown", "body": {"chain_key": CHAIN}},
    {"name": "get-thought-index", "method": "POST", "path": "/v1/thought",
     "body": {"chain_key": CHAIN, "thought_index": 1}, "values": ["thought.content", "thought.index"]},
    {"name": "get-thought-id", "method": "POST", "path": "/v1/thought",
     "body": {"chain_key": CHAIN, "thought_id": "${decision_id}"}, "values": ["thought.content"]},
    {"name": "get-thought-missing", "method": "POST", "path": "/v1/thought", "body": {"chain_key": CHAIN, "thought_index": 999}},
    {"name": "genesis", "method": "POST", "path": "/v1/thoughts/genesis", "body": {"chain_key": CHAIN}, "values": ["thought.content"]},
    {"name": "traverse", "method": "POST", "path": "/v1/thoughts/traverse",
     "body": {"chain_key": CHAIN, "anchor_boundary": "genesis", "direction": "forward", "chunk_size": 2}, "values": ["thoughts.#"]},
    {"name": "head", "method": "POST", "path": "/v1/head", "body": {"chain_key": CHAIN}, "values": ["thought_count"]},
    {"name": "head-unknown-chain", "method": "POST", "path": "/v1/head", "body": {"chain_key": "no-such-chain"}},
    {"name": "list-chains", "method": "GET", "path": "/v1/chains"},
    {"name": "list-agents", "method": "POST", "path": "/v1/agents", "body": {"chain_key": CHAIN}},
    {"name": "get-agent", "method": "POST", "path": "/v1/agent", "body": {"chain_key": CHAIN, "agent_id": "planner"}, "values": ["agent_id"]},
    {"name": "get-agent-missing", "method": "POST", "path": "/v1/agent", "body": {"chain_key": CHAIN, "agent_id": "nobody"}},
    {"name": "agent-registry", "method": "POST", "path": "/v1/agent-registry", "body": {"chain_key": CHAIN}},
    {"name": "upsert-agent", "method": "POST", "path": "/v1/agents/upsert",
     "body": {"chain_key": CHAIN, "agent_id": "ops", "display_name": "Ops Bot", "agent_owner": "team-a"}, "values": ["agent_id", "display_name", "owner"]},
    {"name": "set-description", "method": "POST", "path": "/v1/agents/description",
     "body": {"chain_key": CHAIN, "agent_id": "ops", "description": "Runs deploys"}, "values": ["description"]},
    {"name": "add-alias", "method": "POST", "path": "/v1/agents/aliases", "body": {"chain_key": CHAIN, "agent_id": "ops", "alias": "deployer"}, "values": ["aliases"]},
    {"name": "add-key", "method": "POST", "path": "/v1/agents/keys",
     "body": {"chain_key": CHAIN, "agent_id": "ops", "key_id": "k1", "algorithm": "ed25519", "public_key_bytes": AGENT_KEY}},
    {"name": "revoke-key", "method": "POST", "path": "/v1/agents/keys/revoke", "body": {"chain_key": CHAIN, "agent_id": "ops", "key_id": "k1"}},
    {"name": "disable-agent", "method": "POST", "path": "/v1/agents/disable", "body": {"chain_key": CHAIN, "agent_id": "ops"}, "values": ["status"]},
    {"name": "entity-types", "method": "POST", "path": "/v1/entity-types", "body": {"chain_key": CHAIN}},
    {"name": "entity-type-upsert", "method": "POST", "path": "/v1/entity-types/upsert", "body": {"chain_key": CHAIN, "entity_type": "service"}},
    {"name": "skill-upload", "method": "POST", "path": "/v1/skills/upload",
     "body": {"chain_key": CHAIN, "agent_id": "planner", "skill_id": "deploy-safely", "content": "---\nname: Deploy safely\ndescription: Canary first\ntags: [ops]\n---\n# Deploy safely\nUse a canary.\n"},
     "values": ["skill.skill_id", "skill.status"]},
    {"name": "skill-list", "method": "GET", "path": "/v1/skills"},
    {"name": "skill-manifest", "method": "GET", "path": "/v1/skills/manifest"},
    {"name": "skill-search", "method": "POST", "path": "/v1/skills/search", "body": {"text": "canary"}, "values": ["skills.#"]},
    {"name": "skill-read", "method": "POST", "path": "/v1/skills/read", "body": {"skill_id": "deploy-safely"}, "values": ["skill_id"]},
    {"name": "skill-versions", "method": "POST", "path": "/v1/skills/versions", "body": {"skill_id": "deploy-safely"}, "values": ["versions.#"]},
    {"name": "skill-deprecate", "method": "POST", "path": "/v1/skills/deprecate",
     "body": {"chain_key": CHAIN, "skill_id": "deploy-safely", "agent_id": "planner", "reason": "superseded"}, "values": ["skill.status"]},
    {"name": "skill-delete", "method": "POST", "path": "/v1/skills/delete", "body": {"chain_key": CHAIN, "skill_id": "deploy-safely"}, "values": ["skill.skill_id"]},
    {"name": "skill-read-deleted", "method": "POST", "path": "/v1/skills/read", "body": {"skill_id": "deploy-safely"}},
    {"name": "branch", "method": "POST", "path": "/v1/chains/branch",
     "body": {"source_chain_key": CHAIN, "branch_thought_id": "${decision_id}", "branch_chain_key": "compat-branch"},
     "values": ["branch_chain_key", "source_chain_key", "branch_thought_id"]},
    {"name": "branch-genesis", "method": "POST", "path": "/v1/thoughts/genesis", "body": {"chain_key": "compat-branch"},
     "values": ["thought.content", "thought.thought_type", "thought.agent_id", "thought.relations.0.kind"]},
    {"name": "branch-again", "method": "POST", "path": "/v1/chains/branch",
     "body": {"source_chain_key": CHAIN, "branch_thought_id": "${decision_id}", "branch_chain_key": "compat-branch"}},
    {"name": "scratch-append", "method": "POST", "path": "/v1/thoughts",
     "body": {"chain_key": "compat-scratch", "agent_id": "planer", "thought_type": "Idea", "content": "Try blue-green deploys"}},
    {"name": "merge", "method": "POST", "path": "/v1/chains/merge",
     "body": {"source_chain_key": "compat-scratch", "target_chain_key": CHAIN}, "values": ["thoughts_copied", "agents_remapped", "source_deleted"]},
    {"name": "import-markdown", "method": "POST", "path": "/v1/import-markdown",
     "body": {"chain_key": "compat-import", "markdown": "# MEMORY\n\n## Knowledge\n\n- [#0] Insight: Use WAL mode (agent sqlite-expert; importance 0.80; tags db)\n- [#1] FactLearned: The limit is 100/min\n"},
     "values": ["imported", "count"]},
    {"name": "webhooks-list", "method": "GET", "path": "/v1/webhooks"},
    {"name": "webhook-register-loopback", "method": "POST", "path": "/v1/webhooks", "body": {"url": "http://127.0.0.1:9/hook"}},
    {"name": "vectors-rebuild", "method": "POST", "path": "/v1/vectors/rebuild", "body": {"chain_key": CHAIN}},
    {"name": "admin-flush", "method": "POST", "path": "/v1/admin/flush", "body": {}},
    {"name": "extract-memories-unconfigured", "method": "POST", "path": "/v1/extract-memories", "body": {"chain_key": CHAIN, "text": "I like tea."}},
    {"name": "legacy-tools-list", "method": "POST", "path": "/tools/list", "port": "mcp", "body": {}},
    {"name": "legacy-tools-execute", "method": "POST", "path": "/tools/execute", "port": "mcp",
     "body": {"tool": "mentisdb_head", "parameters": {"chain_key": CHAIN}}, "values": ["result.success"]},
    {"name": "legacy-thoughtchain-alias", "method": "POST", "path": "/tools/execute", "port": "mcp",
     "body": {"tool": "thoughtchain_head", "parameters": {"chain_key": CHAIN}}, "values": ["result.success"]},
]

_VAR = re.compile(r"\$\{(\w+)\}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HASH = re.compile(r"\b[0-9a-f]{64}\b")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


def substitute(value: Any, saved: dict[str, Any]) -> Any:
    if isinstance(value, str):
        whole = _VAR.fullmatch(value)
        if whole:
            return saved.get(whole.group(1))
        return _VAR.sub(lambda m: str(saved.get(m.group(1))), value)
    if isinstance(value, list):
        return [substitute(v, saved) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, saved) for k, v in value.items()}
    return value


def lookup(reply: Any, path: str) -> Any:
    """`a.b.0.c`; a final `#` is the length of the list there."""
    cur = reply
    for part in path.split("."):
        if part == "#":
            return len(cur) if isinstance(cur, list) else None
        if isinstance(cur, list):
            cur = cur[int(part)] if part.isdigit() and int(part) < len(cur) else None
        elif isinstance(cur, dict):
            cur = cur.get(part)
        else:
            return None
    return cur


def normalize(value: Any) -> Any:
    if isinstance(value, str):
        return _TIME.sub("<time>", _HASH.sub("<hash>", _UUID.sub("<uuid>", value)))
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    return value


def field_names(value: Any, prefix: str = "") -> set[str]:
    """Every field path of a reply (lists by their first element)."""
    names: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            names.add(prefix + k)
            names |= field_names(v, prefix + k + ".")
    elif isinstance(value, list) and value:
        names |= field_names(value[0], prefix + "[].")
    return names


def request(base: str, step: dict[str, Any], saved: dict[str, Any]) -> tuple[int, Any]:
    body = substitute(step.get("body"), saved)
    data = None if body is None or step["method"] == "GET" else json.dumps(body).encode()
    req = urllib.request.Request(base + step["path"], data=data, method=step["method"], headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    try:
        reply = json.loads(text) if text else None
    except json.JSONDecodeError:
        reply = {"<text>": text[:200]}
    return status, reply


def run(rest: str, mcp: str) -> list[dict[str, Any]]:
    """Runs every step; returns `{name, status, reply}` per step."""
    saved: dict[str, Any] = {}
    out = []
    for step in STEPS:
        base = mcp if step.get("port") == "mcp" else rest
        status, reply = request(base, step, saved)
        for var, path in step.get("save", {}).items():
            saved[var] = lookup(reply, path)
        out.append({"name": step["name"], "status": status, "reply": reply})
    return out


def compare(recorded: dict[str, Any], ours: dict[str, Any], step: dict[str, Any]) -> list[str]:
    """What differs between the reference's exchange and ours (empty: the same)."""
    problems = []
    if recorded["status"] != ours["status"]:
        problems.append(f"status {ours['status']}, reference {recorded['status']}")
    if 200 <= recorded["status"] < 300 and recorded["status"] == ours["status"]:
        missing = sorted(field_names(recorded["reply"]) - field_names(ours["reply"]))
        if missing:
            problems.append(f"fields missing: {', '.join(missing[:12])}")
        for path in step.get("values", []):
            want, got = normalize(lookup(recorded["reply"], path)), normalize(lookup(ours["reply"], path))
            if want != got:
                problems.append(f"{path} = {json.dumps(got)[:120]}, reference {json.dumps(want)[:120]}")
    return problems
