// The page's pure modules under Node: the SSE parser (chunks split
// anywhere, CRLF, comments, ids) and the LCS line diff.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SseParser } from "../sse.js";
import { diffLines } from "../diff.js";

const STREAM = ": keep-alive\r\n\r\nevent: ready\r\nid: c1\r\ndata: {\"chains\":{\"a\":1}}\r\n\r\n"
  + "event: thought\nid: c2\ndata: {\"chain_key\":\"a\",\ndata: \"n\":2}\n\n:\n\nevent: lagged\ndata: {\"missed\":3}\n\n";

function parse(chunks) {
  const events = [];
  const parser = new SseParser((e) => events.push(e));
  for (const c of chunks) parser.push(c);
  return { events, parser };
}

test("SSE events parse the same however the stream is cut", () => {
  const whole = parse([STREAM]);
  assert.deepEqual(whole.events, [
    { event: "ready", id: "c1", data: "{\"chains\":{\"a\":1}}" },
    { event: "thought", id: "c2", data: "{\"chain_key\":\"a\",\n\"n\":2}" },
    { event: "lagged", id: "c2", data: "{\"missed\":3}" },
  ]);
  assert.equal(whole.parser.lastEventId, "c2", "the cursor for Last-Event-ID: the last id seen");
  for (let cut = 1; cut < STREAM.length; cut++) {
    assert.deepEqual(parse([STREAM.slice(0, cut), STREAM.slice(cut)]).events, whole.events, `cut at ${cut}`);
  }
  assert.deepEqual(parse([...STREAM]).events, whole.events, "one character at a time");
});

test("an event is only delivered once its blank line arrives", () => {
  const { events } = parse(["event: thought\ndata: {}\n"]);
  assert.deepEqual(events, []);
});

test("the line diff keeps common lines and marks the rest", () => {
  assert.deepEqual(diffLines("a\nb\nc", "a\nx\nc\nd").map((e) => `${e.op}${e.text}:${e.a ?? ""}/${e.b ?? ""}`), [" a:1/1", "-b:2/", "+x:/2", " c:3/3", "+d:/4"]);
  assert.deepEqual(diffLines("same\ntext", "same\ntext").filter((e) => e.op !== " "), []);
  assert.deepEqual(diffLines("", "new").map((e) => e.op), ["-", "+"]);
  // Every old line appears once as kept or removed, every new one as kept or added, in order.
  const a = Array.from({ length: 200 }, (_, i) => `line ${i % 17}`).join("\n");
  const b = Array.from({ length: 180 }, (_, i) => `line ${(i * 7) % 19}`).join("\n");
  const d = diffLines(a, b);
  assert.deepEqual(d.filter((e) => e.op !== "+").map((e) => e.text), a.split("\n"));
  assert.deepEqual(d.filter((e) => e.op !== "-").map((e) => e.text), b.split("\n"));
});
