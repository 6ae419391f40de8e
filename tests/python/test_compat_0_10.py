"""MentisDB 0.10 compatibility: the scenario of tests/compat/scenario.py,
replayed against our daemon and compared with what a real 0.10.10 daemon
answered (tests/compat/recorded-0.10.10.json, made by
tests/compat/record_0_10.py).

Every step must have the reference's status and every field the reference
sent, and the values the step names. A step that differs on purpose or is
not done yet is listed, with the reason, in
tests/compat/known_differences.json; a listed step that now matches fails
too, so the list only ever holds real differences.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

COMPAT = pathlib.Path(__file__).resolve().parents[1] / "compat"
sys.path.insert(0, str(COMPAT))
import scenario  # noqa: E402

RECORDING = json.loads((COMPAT / "recorded-0.10.10.json").read_text())
KNOWN = json.loads((COMPAT / "known_differences.json").read_text())


def our_tools(mcp: str) -> dict[str, list[str]]:
    async def listed():
        async with streamable_http_client(mcp + "/mcp") as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return (await session.list_tools()).tools

    return {t.name: sorted((t.inputSchema or {}).get("properties", {}).keys()) for t in asyncio.run(listed())}


def check(found: dict[str, list[str]], known: dict[str, str], what: str) -> None:
    unexpected = {k: v for k, v in found.items() if k not in known}
    stale = sorted(k for k in known if k not in found)
    report = [f"{what} {k}: {'; '.join(v)}" for k, v in sorted(unexpected.items())]
    report += [f"{what} {k} now matches the reference: remove it from known_differences.json" for k in stale]
    assert not report, "\n".join(report)


def test_every_exchange_matches_the_recorded_reference(daemon):
    ours = {e["name"]: e for e in scenario.run(daemon.rest, daemon.mcp)}
    steps = {s["name"]: s for s in scenario.STEPS}
    assert [e["name"] for e in RECORDING["exchanges"]] == list(steps), "re-record: the scenario changed (tests/compat/record_0_10.py)"
    found = {}
    for recorded in RECORDING["exchanges"]:
        problems = scenario.compare(recorded, ours[recorded["name"]], steps[recorded["name"]])
        if problems:
            found[recorded["name"]] = problems
    check(found, KNOWN["exchanges"], "step")


def test_every_reference_tool_is_served_with_its_arguments(daemon):
    ours = our_tools(daemon.mcp)
    found = {}
    for name, props in RECORDING["tools"].items():
        if name not in ours:
            found[name] = ["not served"]
        elif missing := sorted(set(props) - set(ours[name])):
            found[name] = [f"arguments missing: {', '.join(missing)}"]
    check(found, KNOWN["tools"], "tool")
