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
import pathlib
import subprocess
import tempfile
import sys
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import reference_daemon  # noqa: E402
import scenario  # noqa: E402



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
    with tempfile.TemporaryDirectory() as tmp, reference_daemon.running(binary, tmp) as ref:
        exchanges = scenario.run(ref.rest, ref.mcp)
        listed = tools(ref.mcp)
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
