// Starts the built mentisdbd (CARGO_TARGET_DIR/debug, or MENTISDBD) on free
// loopback ports with a temporary data directory and an API token, and
// calls its REST API. Shared by the browser test and the bench.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
export const MENTISDBD = process.env.MENTISDBD ?? join(process.env.CARGO_TARGET_DIR ?? join(REPO, "target"), "debug", "mentisdbd");

/** Spawns mentisdbd on `dir` and REST `port` (0: any); resolves when it listens. */
async function spawnDaemon(dir, port, token, args, stderr) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MENTISDB_")));
  const tokenArgs = token ? ["--api-token", token] : [];
  const child = spawn(MENTISDBD, ["--dir", dir, "--bind-host", "127.0.0.1", "--rest-port", String(port), "--mcp-port", "0", "--verbose", "false", ...tokenArgs, ...args],
    { env, stdio: ["ignore", "pipe", "pipe"] });
  child.stderr.on("data", (d) => stderr.push(d.toString()));
  const line = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (l) => l.startsWith("mentisdbd listening ") && resolve(l));
    child.once("exit", (code) => reject(new Error(`mentisdbd exited ${code}: ${stderr.join("")}`)));
    child.once("error", (e) => reject(new Error(`cannot start ${MENTISDBD} (build it: cargo build -p mentisdb-native --bin mentisdbd): ${e.message}`)));
  });
  return { child, rest: line.match(/rest=(\S+)/)[1], mcp: line.match(/mcp=(\S+)/)[1] };
}

async function terminate(child, signal = "SIGTERM") {
  child.kill(signal);
  await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)));
}

/**
 * A running daemon: `url` (REST), `mcpUrl`, `token` (`null`: a daemon
 * without tokens, the default), `call(path, body)`, `restart()`
 * (SIGKILL, then the same directory and port: a crash, as its clients see
 * it; `pause()` and `resume()` are its two halves), `stop()`. SIGKILL because a graceful stop waits for open event
 * streams to end, and the page keeps one open.
 */
export async function startDaemon({ token = "explorer-test-token", args = [] } = {}) {
  const dir = await mkdtemp(join(tmpdir(), "mentisdb-explorer-"));
  const stderr = [];
  let { child, rest, mcp } = await spawnDaemon(dir, 0, token, args, stderr);
  const url = `http://${rest}`;
  const mcpUrl = `http://${mcp}`;
  async function call(path, body, method = "POST") {
    const response = await fetch(url + path, {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text);
  }
  async function pause() {
    await terminate(child, "SIGKILL");
  }
  async function resume() {
    ({ child } = await spawnDaemon(dir, Number(rest.split(":").pop()), token, args, stderr));
  }
  async function restart() {
    await pause();
    await resume();
  }
  async function stop() {
    await terminate(child);
    await rm(dir, { recursive: true, force: true });
  }
  return { url, mcpUrl, token, dir, call, restart, pause, resume, stop, stderr };
}
