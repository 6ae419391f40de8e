// Compile-time check of the generated TypeScript declarations
// (tsc --noEmit; run by scripts/stages/40-wasm.sh after packaging).
import init, {
  MentisDb, type SyncReport, type AppendResult, type ChainInfo, type Cursor, type GetThoughtResult, type HeadResult, type MentisDbError, type Thought,
} from "../pkg/mentisdb_wasm.js";

export async function example(): Promise<string> {
  await init();
  const db: MentisDb = await MentisDb.open("agent-memory");
  const other = await MentisDb.open("other", { defaultChainKey: "notes" });
  const meaning = await MentisDb.open("meaning", { embeddingModel: new Uint8Array(0) });
  const boot = await db.bootstrap({ content: "What this memory is for." });
  const ok: boolean = boot.bootstrapped;
  const appended: AppendResult = await db.append({ thought_type: "Decision", content: "Use IndexedDB.", tags: ["storage"] });
  const thought: Thought = appended.thought;
  const found: Thought[] = db.search({ text: "indexeddb", limit: 5 }).thoughts;
  const everything = db.search();
  const head: HeadResult = db.head();
  const prompt: string = db.recentContext({ last_n: 3 });
  const md: string = db.memoryMarkdown();
  const page = db.traverse({ anchor_boundary: "genesis", chunk_size: 10, time_window: { start: 0, delta: 60 } });
  const cursor: Cursor | null = page.next_cursor;
  const retro: AppendResult = await db.appendRetrospective({
    content: "Batch the fsyncs.", session_id: "s1", relations: [{ kind: "Corrects", target_index: 1 }],
  });
  const got: GetThoughtResult = db.getThought({ thought_index: retro.thought.index });
  const target: number | null | undefined = got.thought.relations[0]?.target_index;
  const chains: ChainInfo[] = db.listChains().chains;
  const bytes: Uint8Array = await db.exportChain();
  const imported = await other.importChain(bytes);
  await meaning.close();
  const anyTool = await db.call("mentisdb_list_agents", { chain_key: "agent-memory" });
  const synced: SyncReport = await db.sync("http://127.0.0.1:9472", "agent-memory", { verifierKey: "mentisdb-1a2b3c4d+01234567+AAAA", token: "t" });
  try {
    // @ts-expect-error content is required
    await db.append({ thought_type: "Decision" });
  } catch (e) {
    const err = e as MentisDbError;
    return `${err.kind}: ${err.message}`;
  }
  await db.close();
  return [
    ok, thought.hash, found.length, everything.thoughts.length, head.integrity_ok, prompt, md, page.has_more, cursor?.index,
    target, chains[0]?.storage_adapter, imported.chain_key, anyTool, synced.tree_size, synced.head_hash,
  ].join();
}
