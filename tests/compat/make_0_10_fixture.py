#!/usr/bin/env python3
"""Writes a data directory and a `.mentis` backup archive with a real MentisDB
0.10.10, for `mentisdbd import-reference`'s 0.10 tests.

Usage: make_0_10_fixture.py MENTISDB_BIN [OUT]

MENTISDB_BIN is the reference binary (see record_0_10.py for how to build it).
OUT defaults to fixture-0.10.10/ beside this script; it receives `data/` (the
daemon's directory after a clean stop: chains, agent registries, entity types,
the skill registry, webhook registrations, bearer-tokens.json), `backup.mentis`
(made by `mentisdb backup` from that directory) and `expected.json` (what the
daemon answered: every chain's head and thoughts, the agents, skills and
webhooks, and the raw bearer tokens the CLI printed, so a test can check that
the same secrets work after the import).
"""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import reference_daemon  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent



def post(base: str, path: str, body: dict) -> dict:
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        raise SystemExit(f"POST {path} {body}: HTTP {e.code} {e.read().decode()[:300]}")


def get(base: str, path: str) -> dict:
    with urllib.request.urlopen(base + path, timeout=30) as r:
        return json.loads(r.read())


SKILL = """---
name: Release checklist
description: What to check before a release
tags: [release, ops]
---
# Release checklist

1. Run the tests.
2. Tag the release.
"""


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) >= 2 else 2
    binary = sys.argv[1]
    out = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else HERE / "fixture-0.10.10"
    expected: dict = {"reference": subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip() or "mentisdb 0.10.10"}
    with tempfile.TemporaryDirectory() as tmp:
        with reference_daemon.running(binary, tmp, {"MENTISDB_WEBHOOK_ALLOWED_CIDRS": "127.0.0.0/8"}) as ref:
            rest, env, data = ref.rest, ref.env, ref.data
            first = post(rest, "/v1/thoughts", {"chain_key": "team-notes", "agent_id": "planner", "thought_type": "Decision", "content": "Ship the release behind a canary", "tags": ["release"], "concepts": ["canary"], "importance": 0.9})
            post(rest, "/v1/agents/upsert", {"chain_key": "team-notes", "agent_id": "planner", "display_name": "Planner", "owner": "ops"})
            post(rest, "/v1/thoughts", {"chain_key": "team-notes", "agent_id": "planner", "thought_type": "FactLearned", "content": "Ada maintains the billing service", "entity_type": "person"})
            post(rest, "/v1/thoughts", {"chain_key": "team-notes", "agent_id": "reviewer", "thought_type": "Correction", "content": "The canary runs for two hours, not one", "refs": [0],
                                        "relations": [{"kind": "Corrects", "target_id": first["thought"]["id"]}]})
            post(rest, "/v1/thoughts", {"chain_key": "research", "agent_id": "scout", "thought_type": "Insight", "content": "Caching cut the p99 latency in half", "tags": ["perf"]})
            post(rest, "/v1/skills/upload", {"chain_key": "team-notes", "agent_id": "planner", "content": SKILL, "format": "markdown"})
            hook = post(rest, "/v1/webhooks", {"url": "http://127.0.0.1:9/hook", "chain_key_filter": "team-notes", "thought_type_filter": ["Decision"]})
            expected["chains"] = {}
            for key in ("team-notes", "research"):
                head = post(rest, "/v1/head", {"chain_key": key})
                thoughts = post(rest, "/v1/search", {"chain_key": key, "include_invalidated": True, "limit": 100})["thoughts"]
                expected["chains"][key] = {"thought_count": head["thought_count"], "head_hash": head.get("head_hash"),
                                            "contents": [t["content"] for t in thoughts], "entity_types": [t.get("entity_type") for t in thoughts]}
            expected["agents"] = post(rest, "/v1/agents", {"chain_key": "team-notes"})
            expected["skills"] = get(rest, "/v1/skills")
            expected["webhook"] = hook
        # The daemon has stopped (and flushed); its CLI works on the directory.
        tokens = {}
        for args in (["--global", "ops-admin"], ["--chain", "research", "research-bot"]):
            shown = subprocess.run([binary, "bearertoken", "create", *args, "--dir", data], env=env, capture_output=True, text=True)
            found = re.search(r"mentisdb_[0-9a-f]{96}", shown.stdout + shown.stderr)
            if not found:
                print(shown.stdout, shown.stderr, file=sys.stderr)
                return 1
            tokens[args[-1]] = found.group(0)
        subprocess.run([binary, "bearertoken", "create", "--global", "retired", "--dir", data], env=env, capture_output=True, check=True)
        subprocess.run([binary, "bearertoken", "revoke", "retired", "--dir", data], env=env, capture_output=True, check=True)
        expected["tokens"] = tokens
        archive = f"{tmp}/backup.mentis"
        made = subprocess.run([binary, "backup", "--dir", data, "--output", archive], env=env, capture_output=True, text=True)
        if made.returncode != 0:
            print(made.stdout, made.stderr, file=sys.stderr)
            return 1
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        shutil.copytree(data, out / "data", ignore=shutil.ignore_patterns("tls", "*.log"))
        shutil.copy(archive, out / "backup.mentis")
        (out / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
