"""The MCP spec's "Recommended Agent Workflow" and "Example Sequence", run
through a real `mcp.ClientSession`, checking the response fields the spec
names. Shared by the streamable-HTTP and stdio tests."""

from __future__ import annotations

import json

from mcp import ClientSession

from conftest import spec_tool_names

SKILL_MD = """---
name: deploy-checklist
description: Verify migrations before deploying
---
# Deploy checklist

1. Verify migration state explicitly before deployment.
"""


async def call(session: ClientSession, tool: str, args: dict) -> dict:
    """Calls a tool that must succeed; checks text and structured content agree."""
    result = await session.call_tool(tool, args)
    text = result.content[0].text if result.content else ""
    assert not result.isError, f"{tool} {args} failed: {text}"
    parsed = json.loads(text)
    if result.structuredContent is not None:
        assert result.structuredContent == parsed, f"{tool}: structured content differs from text content"
    return parsed


async def call_error(session: ClientSession, tool: str, args: dict) -> str:
    result = await session.call_tool(tool, args)
    assert result.isError, f"{tool} {args} should fail"
    return result.content[0].text


def has(obj: dict, *fields: str) -> None:
    missing = [f for f in fields if f not in obj]
    assert not missing, f"missing {missing} in {obj}"


THOUGHT_FIELDS = ("index", "id", "agent_id", "timestamp", "thought_type", "role", "content", "importance", "tags", "concepts", "refs", "hash", "prev_hash")


async def initialize_and_list(session: ClientSession) -> set[str]:
    init = await session.initialize()
    assert init.serverInfo.name == "mentisdb"
    assert init.instructions and "mentisdb_skill_md" in init.instructions
    assert init.capabilities.tools is not None
    tools = (await session.list_tools()).tools
    names = {t.name for t in tools}
    assert len(names) == len(tools), "tool names are unique"
    for t in tools:
        assert t.inputSchema.get("type") == "object", t.name
        assert t.description, t.name
    # The core tools every build serves (the skill tools are checked by
    # test_lists_every_spec_tool against the spec's full list).
    core = {n for n in spec_tool_names() if "skill" not in n}
    assert core <= names, f"missing tools: {sorted(core - names)}"
    return names


async def run_workflow(session: ClientSession, chain: str) -> dict:
    names = await initialize_and_list(session)

    # 1. Shared daemon: list chains first.
    chains = await call(session, "mentisdb_list_chains", {})
    has(chains, "default_chain_key", "chain_keys", "chains")

    # 2. Bootstrap once (Example Sequence, "First run").
    boot = await call(session, "mentisdb_bootstrap", {
        "chain_key": chain,
        "content": "Memory for Project Alpha. Preserve architecture decisions, user preferences, constraints, mistakes, and deployment lessons.",
        "importance": 1.0, "tags": ["bootstrap"], "concepts": ["project-alpha", "semantic-memory"],
    })
    assert boot["bootstrapped"] is True and boot["thought_count"] == 1 and boot["head_hash"]
    again = await call(session, "mentisdb_bootstrap", {"chain_key": chain, "content": "second bootstrap"})
    assert again["bootstrapped"] is False and again["thought_count"] == 1

    # 3. Discover agents.
    agents = await call(session, "mentisdb_list_agents", {"chain_key": chain})
    has(agents, "chain_key", "agents")
    registry = await call(session, "mentisdb_list_agent_registry", {"chain_key": chain})
    has(registry, "chain_key", "agents")

    # 4. Better metadata before active use.
    up = await call(session, "mentisdb_upsert_agent", {"chain_key": chain, "agent_id": "astro", "display_name": "Astro", "agent_owner": "ops-team"})
    has(up["agent"], "agent_id", "display_name", "agent_owner", "status", "public_keys", "aliases")
    desc = await call(session, "mentisdb_set_agent_description", {"chain_key": chain, "agent_id": "astro", "description": "Deployment agent"})
    assert desc["agent"]["description"] == "Deployment agent"
    alias = await call(session, "mentisdb_add_agent_alias", {"chain_key": chain, "agent_id": "astro", "alias": "astro-bot"})
    assert "astro-bot" in alias["agent"]["aliases"]
    got = await call(session, "mentisdb_get_agent", {"chain_key": chain, "agent_id": "astro"})
    has(got["agent"], "agent_id", "display_name", "agent_owner", "description", "aliases", "status", "public_keys",
        "thought_count", "first_seen_index", "last_seen_index", "first_seen_at", "last_seen_at")

    # 5. Session start: recent context (Example Sequence step 2) or markdown.
    ctx = await call(session, "mentisdb_recent_context", {"chain_key": chain, "last_n": 12})
    assert "Project Alpha" in ctx["prompt"]
    md = await call(session, "mentisdb_memory_markdown", {"chain_key": chain})
    assert isinstance(md["markdown"], str) and "Project Alpha" in md["markdown"]

    # 6. Tip and origin.
    head = await call(session, "mentisdb_head", {"chain_key": chain})
    has(head, "chain_key", "thought_count", "head_hash", "latest_thought", "integrity_ok", "storage_location")
    genesis = await call(session, "mentisdb_get_genesis_thought", {"chain_key": chain})
    assert genesis["thought"]["index"] == 0
    has(genesis["thought"], *THOUGHT_FIELDS)

    # 10. During work (Example Sequence step 4): a plan and a mistake.
    plan = await call(session, "mentisdb_append", {
        "chain_key": chain, "agent_id": "astro", "thought_type": "Plan", "role": "Memory", "importance": 0.82,
        "tags": ["deployment", "rollout"], "concepts": ["staged-rollout"],
        "content": "Use a staged deployment with a canary instance before global rollout.",
    })
    has(plan["thought"], *THOUGHT_FIELDS)
    assert plan["head_hash"] == plan["thought"]["hash"]
    mistake = await call(session, "mentisdb_append", {
        "chain_key": chain, "agent_id": "astro", "thought_type": "Mistake", "role": "Memory", "importance": 0.91,
        "tags": ["deployment", "incident"],
        "content": "Assumed the production environment already had the required migration.",
    })
    assert mistake["thought"]["prev_hash"] == plan["thought"]["hash"]
    constraint = await call(session, "mentisdb_append", {
        "chain_key": chain, "thought_type": "Constraint", "importance": 0.95,
        "content": "Every deployment must pass the migration check.", "tags": ["deployment"],
    })

    # 7. Before acting (Example Sequence step 3): search.
    found = await call(session, "mentisdb_search", {
        "chain_key": chain, "thought_types": ["Constraint", "Decision", "Mistake", "Correction"], "text": "deployment", "limit": 10,
    })
    contents = [t["content"] for t in found["thoughts"]]
    assert constraint["thought"]["content"] in contents, contents

    # 8. Ordered replay from the head (Example Sequence step 3).
    trav = await call(session, "mentisdb_traverse_thoughts", {
        "chain_key": chain, "anchor_boundary": "head", "direction": "backward", "chunk_size": 5, "thought_types": ["Constraint", "Decision"],
    })
    has(trav, "chain_key", "direction", "include_anchor", "chunk_size", "anchor", "thoughts", "has_more", "next_cursor", "previous_cursor")
    assert trav["direction"] == "backward" and trav["chunk_size"] == 5
    assert all(t["thought_type"] in ("Constraint", "Decision") for t in trav["thoughts"])

    # 11. Later: search for the mistake, use its index as a ref (step 5).
    hits = await call(session, "mentisdb_search", {"chain_key": chain, "thought_types": ["Mistake"], "text": "migration"})
    mistake_index = hits["thoughts"][-1]["index"]
    assert mistake_index == mistake["thought"]["index"]
    lesson = await call(session, "mentisdb_append_retrospective", {
        "chain_key": chain, "thought_type": "LessonLearned", "importance": 0.95, "confidence": 0.97,
        "tags": ["deployment", "lesson"], "concepts": ["migration-checklist"], "refs": [mistake_index],
        "content": "Before deployment, explicitly verify migration state instead of assuming environment parity.",
    })
    assert lesson["thought"]["role"] == "Retrospective" and lesson["thought"]["refs"] == [mistake_index]
    by_id = await call(session, "mentisdb_get_thought", {"chain_key": chain, "thought_id": lesson["thought"]["id"]})
    assert by_id["thought"]["hash"] == lesson["thought"]["hash"]

    # 9 and 12. Skills, when this build serves them.
    if {"mentisdb_skill_md", "mentisdb_upload_skill", "mentisdb_search_skill", "mentisdb_read_skill"} <= names:
        skill_md = await call(session, "mentisdb_skill_md", {})
        assert skill_md["markdown"].strip()
        uploaded = await call(session, "mentisdb_upload_skill", {"chain_key": chain, "agent_id": "astro", "format": "markdown", "content": SKILL_MD})
        skill_id = uploaded["skill"]["skill_id"]
        search = await call(session, "mentisdb_search_skill", {"chain_key": chain, "text": "migration"})
        assert any(s["skill_id"] == skill_id for s in search["skills"])
        read = await call(session, "mentisdb_read_skill", {"chain_key": chain, "skill_id": skill_id})
        has(read, "skill_id", "version_id", "format", "content", "status", "safety_warnings")

    # 13. End of session (Example Sequence step 6).
    await call(session, "mentisdb_append", {
        "chain_key": chain, "thought_type": "Summary", "role": "Checkpoint", "importance": 0.9, "tags": ["session-summary"],
        "content": "We identified deployment migration drift, adopted a staged rollout plan, and added a migration verification checklist.",
    })

    # Tool failures are isError results with a readable message.
    err = await call_error(session, "mentisdb_append", {"chain_key": chain, "thought_type": "Insigth", "content": "x"})
    assert "unknown thought_type" in err

    final = await call(session, "mentisdb_head", {"chain_key": chain})
    assert final["thought_count"] == 6 and final["integrity_ok"] is True
    assert final["latest_thought"]["role"] == "Checkpoint"

    # 14. Two agents, one chain: a claim with a fencing token decides who deploys
    # (on a chain of its own, so the counts above stay the spec's).
    chain = chain + "-coordination"
    if "mentisdb_claim" in names:
        mine = await call(session, "mentisdb_claim", {"chain_key": chain, "key": "deploy", "holder": "astro", "ttl_ms": 60000})
        assert mine["ok"] is True and mine["claim"]["fencing_token"] >= 1
        theirs = await call(session, "mentisdb_claim", {"chain_key": chain, "key": "deploy", "holder": "other-agent"})
        assert theirs["ok"] is False and theirs["held_by"] == "astro"
        token = mine["claim"]["fencing_token"]
        await call(session, "mentisdb_append", {"chain_key": chain, "agent_id": "astro", "thought_type": "ActionTaken",
                                                "content": "Canary deployed.", "fencing": {"key": "deploy", "token": token}})
        stale = await call_error(session, "mentisdb_append", {"chain_key": chain, "agent_id": "other-agent", "thought_type": "ActionTaken",
                                                               "content": "Also deployed?", "fencing": {"key": "deploy", "token": token + 1}})
        assert "holds it with token" in stale
        released = await call(session, "mentisdb_release_claim", {"chain_key": chain, "key": "deploy", "holder": "astro"})
        assert released["ok"] is True

    # 15. The deploy waits on a review; the first decision wins. A fact says
    # where it went, and presence says who is doing what.
    if "mentisdb_request_review" in names:
        review = await call(session, "mentisdb_request_review", {"chain_key": chain, "subject": "Promote the canary",
                                                                  "claim_key": "deploy", "reviewers": ["other-agent"], "agent_id": "astro"})
        queue = await call(session, "mentisdb_list_reviews", {"chain_key": chain, "reviewer": "other-agent"})
        assert [r["review_id"] for r in queue["reviews"]] == [review["review_id"]]
        decided = await call(session, "mentisdb_decide_review", {"chain_key": chain, "review_id": review["review_id"],
                                                                 "decision": "approved", "agent_id": "other-agent"})
        assert decided["ok"] is True and decided["review"]["status"] == "approved"
        again = await call(session, "mentisdb_decide_review", {"chain_key": chain, "review_id": review["review_id"],
                                                               "decision": "rejected", "agent_id": "other-agent"})
        assert again["ok"] is False and again["reason"] == "already_decided" and again["decision"] == "approved"
        fact = await call(session, "mentisdb_record_fact", {"chain_key": chain, "subject": "production", "predicate": "runs", "object": "canary build"})
        assert fact["fact"]["valid_to"] is None
        await call(session, "mentisdb_heartbeat", {"chain_key": chain, "agent_id": "astro", "tool": "python-mcp", "current_action": "promoting"})
        present = await call(session, "mentisdb_list_presence", {"chain_key": chain})
        assert present["agents"][0]["agent_id"] == "astro" and present["agents"][0]["current_action"] == "promoting"
    return final
