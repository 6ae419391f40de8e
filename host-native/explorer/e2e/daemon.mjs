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

/** A running daemon: `url` (REST), `token`, `call(path, body)`, `stop()`. */
export async function startDaemon({ token = "explorer-test-token", args = [] } = {}) {
  const dir = await mkdtemp(join(tmpdir(), "mentisdb-explorer-"));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MENTISDB_")));
  const child = spawn(MENTISDBD, ["--dir", dir, "--bind-host", "127.0.0.1", "--rest-port", "0", "--mcp-port", "0", "--verbose", "false", "--api-token", token, ...args],
    { env, stdio: ["ignore", "pipe", "pipe"] });
  const stderr = [];
  child.stderr.on("data", (d) => stderr.push(d.toString()));
  const line = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (l) => l.startsWith("mentisdbd listening ") && resolve(l));
    child.once("exit", (code) => reject(new Error(`mentisdbd exited ${code}: ${stderr.join("")}`)));
  });
  const url = `http://${line.match(/rest=(\S+)/)[1]}`;
  async function call(path, body, method = "POST") {
    const response = await fetch(url + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text);
  }
  async function stop() {
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)));
    await rm(dir, { recursive: true, force: true });
  }
  return { url, token, dir, call, stop, stderr };
}
