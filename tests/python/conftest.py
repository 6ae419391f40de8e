"""Shared fixtures: the real `mentisdbd` binary on free loopback ports.

MENTISDBD_BIN names the binary (default: $CARGO_TARGET_DIR/debug/mentisdbd);
MENTISDB_SPEC_DIR names the spec directory (default: ../shared/spec next to
the repository). With MENTISDB_PY_PG_URL (an admin URL of a PostgreSQL server,
set by scripts/stages/25-postgres.sh) every daemon stores its data in a fresh
database of its own on that server instead of its data directory.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import tempfile
import threading
import itertools
import time
import urllib.parse

import pytest
import requests

REPO = pathlib.Path(__file__).resolve().parents[2]


def daemon_binary() -> str:
    explicit = os.environ.get("MENTISDBD_BIN")
    if explicit:
        return explicit
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    path = target / "debug" / "mentisdbd"
    if not path.exists():
        raise RuntimeError(f"{path} not found: build it with `cargo build -p mentisdb-native --bin mentisdbd` or set MENTISDBD_BIN")
    return str(path)


def spec_dir() -> pathlib.Path:
    explicit = os.environ.get("MENTISDB_SPEC_DIR")
    path = pathlib.Path(explicit) if explicit else REPO / "docs" / "spec"
    if not (path / "MENTISDB_REST.md").exists():
        raise RuntimeError(f"spec not found at {path}; set MENTISDB_SPEC_DIR")
    return path


_databases = itertools.count()


def fresh_database(admin_url: str) -> str:
    """Creates an empty database on the server of `admin_url` (with the
    server's `createdb`, from MENTISDB_PG_BIN or PATH); returns its URL."""
    u = urllib.parse.urlsplit(admin_url)
    name = f"mentisdb_py_{os.getpid()}_{next(_databases)}"
    createdb = os.path.join(os.environ.get("MENTISDB_PG_BIN", ""), "createdb") if os.environ.get("MENTISDB_PG_BIN") else "createdb"
    subprocess.run([createdb, "-h", u.hostname, "-p", str(u.port), "-U", u.username, name], check=True)
    return urllib.parse.urlunsplit((u.scheme, u.netloc, "/" + name, "", ""))


def clean_env(data_dir: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MENTISDB_")}
    env.update({"MENTISDB_DIR": data_dir, "MENTISDB_REST_PORT": "0", "MENTISDB_MCP_PORT": "0", "MENTISDB_VERBOSE": "false"})
    if os.environ.get("MENTISDB_PY_PG_URL"):
        env["MENTISDB_STORAGE_URL"] = fresh_database(os.environ["MENTISDB_PY_PG_URL"])
    return env


class Daemon:
    """A `mentisdbd` process; `rest` and `mcp` are base URLs."""

    def __init__(self, data_dir: str, *args: str):
        self.data_dir = data_dir
        self.proc = subprocess.Popen(
            [daemon_binary(), *args], env=clean_env(data_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.stderr_lines: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        line = self.proc.stdout.readline()
        self.startup_line = line
        m = re.match(r"mentisdbd listening rest=(\S+) mcp=(\S+)", line)
        if not m:
            self.stop()
            raise RuntimeError(f"unexpected startup line {line!r}; stderr: {''.join(self.stderr_lines)}")
        self.rest = f"http://{m.group(1)}"
        self.mcp = f"http://{m.group(2)}"
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def post(self, path: str, body) -> requests.Response:
        return requests.post(self.rest + path, json=body, timeout=30)

    def ok(self, path: str, body) -> dict:
        r = self.post(path, body)
        assert r.status_code == 200, f"{path} {body}: {r.status_code} {r.text}"
        return r.json()

    def stop(self, kill: bool = False) -> None:
        if self.proc.poll() is None:
            self.proc.kill() if kill else self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def data_dir():
    with tempfile.TemporaryDirectory(prefix="mentisdb-py-") as d:
        yield d


@pytest.fixture
def daemon(data_dir):
    d = Daemon(data_dir)
    yield d
    d.stop()


def spec_tool_names() -> list[str]:
    """The tool list at the top of MENTISDB_MCP.md."""
    text = (spec_dir() / "MENTISDB_MCP.md").read_text()
    head = text.split("## Purpose")[0]
    return re.findall(r"^- `(mentisdb_[a-z_]+)`", head, flags=re.M)
