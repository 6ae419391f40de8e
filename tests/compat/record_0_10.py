#!/usr/bin/env python3
"""Records the compatibility scenario against a real MentisDB 0.10.10 daemon.

Usage: record_0_10.py MENTISDB_BIN [OUT]

MENTISDB_BIN is the reference binary, built with
`cargo install mentisdb --version 0.10.10 --locked --no-default-features
--features server,llm-extraction --root DIR` (then DIR/bin/mentisdb). OUT
defaults to recorded-0.10.10.json beside this script. The daemon runs on free
loopback ports with a temporary data directory and HOME; nothing else is
touched. `tests/python/test_compat_0_10.py` replays the scenario against our
daemon and compares it with this recording.
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import scenario  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tools(mcp: str) -> dict[str, list[str]]:
    req = urllib.request.Request(mcp + "/tools/list", data=b"{}", method="POST", headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        listed = json.loads(r.read())["tools"]
    out = {}
    for t in listed:
        params = t.get("parameters")
        if isinstance(params, list):  # the legacy listing: [{name, type, ...}]
            out[t["name"]] = sorted(p["name"] for p in params)
        else:
            schema = t.get("inputSchema") or t.get("input_schema") or params or {}
            out[t["name"]] = sorted((schema.get("properties") or {}).keys())
    return out


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) >= 2 else 2
    binary = sys.argv[1]
    out_path = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else HERE / "recorded-0.10.10.json"
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        rest_port, mcp_port = free_port(), free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MENTISDB_", "OPENAI_", "LLM_"))}
        env.update({
            "HOME": tmp, "MENTISDB_DIR": f"{tmp}/data", "MENTISDB_BIND_HOST": "127.0.0.1",
            "MENTISDB_REST_PORT": str(rest_port), "MENTISDB_MCP_PORT": str(mcp_port),
            "MENTISDB_HTTPS_REST_PORT": "0", "MENTISDB_HTTPS_MCP_PORT": "0", "MENTISDB_DASHBOARD_PORT": "0",
            "MENTISDB_UPDATE_CHECK": "0", "MENTISDB_STARTUP_SOUND": "0", "MENTISDB_VERBOSE": "false",
        })
        proc = subprocess.Popen([binary, "--mode", "http", "--headless"], env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/stderr.log", "w"))
        rest, mcp = f"http://127.0.0.1:{rest_port}", f"http://127.0.0.1:{mcp_port}"
        try:
            deadline = time.time() + 60
            while True:
                try:
                    urllib.request.urlopen(rest + "/health", timeout=2)
                    break
                except OSError:
                    if time.time() > deadline or proc.poll() is not None:
                        print(open(f"{tmp}/stderr.log").read()[-2000:], file=sys.stderr)
                        print("the reference daemon did not answer /health within 60 s", file=sys.stderr)
                        return 1
                    time.sleep(0.2)
            exchanges = scenario.run(rest, mcp)
            listed = tools(mcp)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    recording = {
        "reference": version or "mentisdb 0.10.10",
        "recorded_at": datetime.date.today().isoformat(),
        "command": "tests/compat/record_0_10.py " + " ".join(sys.argv[1:]),
        "tools": listed,
        "exchanges": exchanges,
    }
    out_path.write_text(json.dumps(recording, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(exchanges)} exchanges and {len(listed)} tools to {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
