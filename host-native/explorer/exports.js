// Exports: a chain (or one agent's thoughts) as Markdown, and the chain file.

import { getBlob, post } from "./api.js";
import { attempt, download, status } from "./dom.js";

/** Downloads `MEMORY-<chain>[-<agent>].md` from POST /v1/memory-markdown. */
export async function exportMarkdown(chainKey, agentId) {
  const body = { chain_key: chainKey };
  if (agentId) body.agent_ids = [agentId];
  const r = await attempt("Markdown export", () => post("/v1/memory-markdown", body));
  if (!r) return;
  const name = `MEMORY-${chainKey}${agentId ? `-${agentId}` : ""}.md`.replace(/[^\w.-]+/g, "_");
  download(name, new Blob([r.markdown], { type: "text/markdown;charset=utf-8" }));
  status(`Exported ${name}.`);
}

/** Downloads `<chain>.mdb` from GET /v1/chains/{key}/export. */
export async function exportChainFile(chainKey) {
  const blob = await attempt("Chain export", () => getBlob(`/v1/chains/${encodeURIComponent(chainKey)}/export`));
  if (!blob) return;
  const name = `${chainKey}.mdb`.replace(/[^\w.-]+/g, "_");
  download(name, blob);
  status(`Downloaded ${name} (${blob.size} bytes).`);
}
