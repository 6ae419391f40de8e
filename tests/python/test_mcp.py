"""The Python `mcp` SDK as a real client: streamable HTTP (at /mcp and /)
and stdio, each running the spec's workflow end to end."""

from __future__ import annotations

import asyncio
import os
import pathlib
import signal

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from conftest import clean_env, daemon_binary, spec_tool_names
from mcp_workflow import call, initialize_and_list, run_workflow


async def over_http(url: str, fn):
    async with streamable_http_client(url) as (read, write, _session_id):
        async with ClientSession(read, write) as session:
            return await fn(session)


def test_streamable_http_workflow_at_mcp(daemon):
    final = asyncio.run(over_http(daemon.mcp + "/mcp", lambda s: run_workflow(s, "project-alpha")))
    # One service: the MCP writes are visible over REST at once.
    head = daemon.ok("/v1/head", {"chain_key": "project-alpha"})
    assert head["head_hash"] == final["head_hash"] and head["thought_count"] == 6


def test_streamable_http_workflow_at_root(daemon):
    asyncio.run(over_http(daemon.mcp + "/", lambda s: run_workflow(s, "project-root")))


def test_rest_writes_are_visible_over_mcp(daemon):
    daemon.ok("/v1/thoughts", {"chain_key": "shared", "thought_type": "Decision", "content": "written over REST"})

    async def check(session):
        await session.initialize()
        head = await call(session, "mentisdb_head", {"chain_key": "shared"})
        assert head["latest_thought"]["content"] == "written over REST"

    asyncio.run(over_http(daemon.mcp + "/mcp", check))


def test_lists_every_spec_tool(daemon):
    async def names(session):
        await session.initialize()
        return {t.name for t in (await session.list_tools()).tools}

    served = asyncio.run(over_http(daemon.mcp + "/mcp", names))
    listed = spec_tool_names()
    assert len(listed) == 29, listed
    missing = sorted(set(listed) - served)
    assert not missing, f"tools in MENTISDB_MCP.md not served: {missing}"


def test_stdio_workflow(data_dir):
    params = StdioServerParameters(command=daemon_binary(), args=["--stdio"], env=clean_env(data_dir))

    async def run():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                return await run_workflow(session, "project-stdio")

    final = asyncio.run(run())
    assert final["thought_count"] == 6


def test_stdio_lists_the_same_tools_as_http(daemon, data_dir):
    params = StdioServerParameters(command=daemon_binary(), args=["--stdio"], env=clean_env(data_dir + "/stdio"))

    async def stdio_names():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                return await initialize_and_list(session)

    assert asyncio.run(stdio_names()) == asyncio.run(over_http(daemon.mcp + "/mcp", initialize_and_list))


def test_two_mode_stdio_servers_share_the_directory_daemon(data_dir):
    """`mentisdb --mode stdio` (MentisDB 0.10's subprocess mode) relays to the
    data directory's daemon, starting it when none runs: two agents' stdio
    servers on one directory both work and see each other's writes."""
    binary = str(pathlib.Path(daemon_binary()).with_name("mentisdb"))
    params = StdioServerParameters(command=binary, args=["--mode", "stdio"], env=clean_env(data_dir))

    async def run():
        async with stdio_client(params) as (read_a, write_a), stdio_client(params) as (read_b, write_b):
            async with ClientSession(read_a, write_a) as a, ClientSession(read_b, write_b) as b:
                await a.initialize()
                await b.initialize()
                await call(a, "mentisdb_append", {"chain_key": "shared", "agent_id": "a", "thought_type": "Finding", "content": "from agent a"})
                await call(b, "thoughtchain_append", {"chain_key": "shared", "agent_id": "b", "thought_type": "Finding", "content": "from agent b"})
                seen = [await call(s, "mentisdb_search", {"chain_key": "shared"}) for s in (a, b)]
                skill = await a.read_resource("mentisdb://skill/core")
                return seen, skill

    try:
        seen, skill = asyncio.run(run())
    finally:
        lock = pathlib.Path(data_dir) / "mentisdbd.lock"
        pid = next((int(line[4:]) for line in lock.read_text().splitlines() if line.startswith("pid=")), None) if lock.exists() else None
        if pid:
            os.kill(pid, signal.SIGTERM)
    for result in seen:
        assert [t["content"] for t in result["thoughts"]] == ["from agent a", "from agent b"]
    assert skill.contents[0].text.strip()
