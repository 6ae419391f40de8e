"""Runs a real MentisDB 0.10.10 daemon for the recorder scripts
(record_0_10.py, make_0_10_fixture.py): free loopback ports, a temporary
HOME and data directory, HTTPS, dashboard and update checks off."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
import urllib.request
from typing import Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Reference:
    """A running reference daemon: `rest`, `mcp` (base URLs), `env` (what it
    was started with, for its CLI), `data` (its directory) and `tmp`."""

    def __init__(self, tmp: str, rest: str, mcp: str, env: dict[str, str]):
        self.tmp, self.rest, self.mcp, self.env = tmp, rest, mcp, env
        self.data = env["MENTISDB_DIR"]


@contextlib.contextmanager
def running(binary: str, tmp: str, extra_env: dict[str, str] | None = None) -> Iterator[Reference]:
    """Starts the daemon with HOME `tmp` and data directory `tmp`/data, waits
    for /health (60 s), yields, then stops it (SIGTERM: it flushes). `tmp`
    stays for the caller (e.g. to run the reference's CLI on the directory)."""
    if True:
        rest_port, mcp_port = free_port(), free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MENTISDB_", "OPENAI_", "LLM_"))}
        env.update({
            "HOME": tmp, "MENTISDB_DIR": f"{tmp}/data", "MENTISDB_BIND_HOST": "127.0.0.1",
            "MENTISDB_REST_PORT": str(rest_port), "MENTISDB_MCP_PORT": str(mcp_port),
            "MENTISDB_HTTPS_REST_PORT": "0", "MENTISDB_HTTPS_MCP_PORT": "0", "MENTISDB_DASHBOARD_PORT": "0",
            "MENTISDB_UPDATE_CHECK": "0", "MENTISDB_STARTUP_SOUND": "0", "MENTISDB_VERBOSE": "false",
            **(extra_env or {}),
        })
        proc = subprocess.Popen([binary, "--mode", "http", "--headless"], env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/stderr.log", "w"))
        reference = Reference(tmp, f"http://127.0.0.1:{rest_port}", f"http://127.0.0.1:{mcp_port}", env)
        try:
            deadline = time.time() + 60
            while True:
                try:
                    urllib.request.urlopen(reference.rest + "/health", timeout=2)
                    break
                except OSError:
                    if time.time() > deadline or proc.poll() is not None:
                        raise SystemExit(open(f"{tmp}/stderr.log").read()[-2000:] + "\nthe reference daemon did not answer /health within 60 s")
                    time.sleep(0.2)
            yield reference
        finally:
            proc.terminate()
            proc.wait(timeout=20)
