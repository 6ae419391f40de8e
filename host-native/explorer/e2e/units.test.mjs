// The page's pure modules under Node: the SSE parser (chunks split
// anywhere, CRLF, comments, ids), the LCS line diff, the overview chart's
// time buckets, the admin page's merge check, the front-matter reader, and
// the coordination view's fact groups, time-line layout and durations.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SseParser } from "../sse.js";
import { diffLines } from "../diff.js";
import { buckets, MAX_BARS, MAX_SERIES } from "../chart.js";
import { mergeProblem } from "../views-admin.js";
import { frontMatter } from "../markdown.js";
import { factGroups, holds, layout, MIN_SPAN } from "../fact-timeline.js";
import { duration, remainingMs } from "../views-coordination.js";

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

test("chart buckets: smallest step with at most MAX_BARS bars, every item counted once", () => {
  const now = Date.parse("2026-11-27T12:00:00Z");
  const items = [
    { at: now - 3 * 60_000, series: "Decision" }, { at: now - 3 * 60_000, series: "Insight" }, { at: now, series: "Decision" },
  ];
  const b = buckets(items, now);
  assert.equal(b.step, 60_000);
  assert.equal(b.bars.length, 12, "a short span: the last 12 minutes");
  assert.deepEqual(b.bars.map((x) => x.total).slice(-4), [2, 0, 0, 1]);
  assert.equal(b.bars.at(-1).from, now);
  assert.deepEqual(b.series, ["Decision", "Insight"]);
  const year = buckets([{ at: now - 300 * 86_400_000, series: "a" }, { at: now, series: "b" }], now);
  assert.ok(year.bars.length <= MAX_BARS && year.step === 30 * 86_400_000, `${year.step} ${year.bars.length}`);
  assert.equal(year.bars.reduce((n, x) => n + x.total, 0), 2);
  const many = buckets(Array.from({ length: 20 }, (_, i) => ({ at: now, series: `agent${i}` })), now);
  assert.equal(many.series.length, MAX_SERIES);
  assert.equal(many.series.at(-1), "other");
  assert.equal(many.bars.at(-1).counts.other, 20 - (MAX_SERIES - 1));
  assert.deepEqual(buckets([], now).bars, []);
});

test("a merge needs two different chains", () => {
  assert.match(mergeProblem("brain", "brain"), /cannot be merged into itself/);
  assert.match(mergeProblem("", "brain"), /Choose both/);
  assert.match(mergeProblem("brain", ""), /Choose both/);
  assert.equal(mergeProblem("old", "brain"), null);
});

test("front matter: keys and values, lists under a key, nothing without the fences", () => {
  const lines = "---\nname: deploy\ndescription: 'Ship it: now'\nallowed-tools:\n  - Bash\n  - Read\n---\n# Deploy".split("\n");
  assert.deepEqual(frontMatter(lines), { rows: [["name", "deploy"], ["description", "Ship it: now"], ["allowed-tools", "- Bash\n- Read"]], end: 7 });
  assert.equal(frontMatter(["# Title", "---", "a: b", "---"]), null);
  assert.equal(frontMatter(["---", "a: b"]), null, "no closing fence: not front matter");
});

const fact = (object, from, to = null, extra = {}) => ({ fact_id: object, subject: "cache", predicate: "backend", object, valid_from: from, valid_to: to, recorded_by: "ada", thought_index: 0, ...extra });

test("facts: grouped by subject and predicate without case, each group oldest first, the group changed last first", () => {
  const facts = [ // as the daemon answers: the latest valid_from first
    fact("SQLite", "2026-11-27T12:00:00Z"),
    fact("blue", "2026-11-27T11:00:00Z", null, { subject: "Logo", predicate: "colour" }),
    fact("Redis", "2026-11-27T10:00:00Z", "2026-11-27T12:00:00Z", { subject: "CACHE " }),
  ];
  const groups = factGroups(facts);
  assert.deepEqual(groups.map((g) => [g.subject, g.predicate, g.facts.map((f) => f.object)]), [["cache", "backend", ["Redis", "SQLite"]], ["Logo", "colour", ["blue"]]]);
  assert.deepEqual(factGroups([]), []);
});

test("facts: segments from valid_from to valid_to or the axis end, the one holding now current, overlaps on their own lane", () => {
  const now = Date.parse("2026-11-27T13:00:00Z");
  const redis = fact("Redis", "2026-11-27T10:00:00Z", "2026-11-27T12:00:00Z");
  const sqlite = fact("SQLite", "2026-11-27T12:00:00Z");
  const l = layout([redis, sqlite], now);
  assert.deepEqual([l.start, l.end, l.lanes], [Date.parse(redis.valid_from), now, 1]);
  assert.deepEqual(l.segments.map((s) => [s.fact.object, s.to - s.from, s.lane, s.current]), [["Redis", 2 * 3_600_000, 0, false], ["SQLite", 3_600_000, 0, true]]);
  assert.equal(holds(redis, Date.parse("2026-11-27T11:59:59Z")), true);
  assert.equal(holds(redis, Date.parse(redis.valid_to)), false, "valid_to is not included");
  // Two active values at once (a conflict): two lanes, both current.
  const conflict = layout([fact("a", "2026-11-27T10:00:00Z"), fact("b", "2026-11-27T11:00:00Z")], now);
  assert.deepEqual(conflict.segments.map((s) => [s.lane, s.current]), [[0, true], [1, true]]);
  assert.equal(conflict.lanes, 2);
  // A value from the future: not current; the axis reaches past its start.
  const later = layout([fact("next", "2026-11-27T15:00:00Z")], now);
  assert.deepEqual([later.segments[0].current, later.start, later.end], [false, Date.parse("2026-11-27T15:00:00Z"), Date.parse("2026-11-27T15:10:00Z")]);
  // Recorded just now: the axis spans MIN_SPAN from it, the value across it.
  const fresh = layout([fact("new", "2026-11-27T13:00:00Z")], now);
  assert.deepEqual([fresh.end - fresh.start, fresh.segments[0].to, fresh.segments[0].current], [MIN_SPAN, fresh.end, true]);
});

test("durations: hours, minutes and seconds; the time left of a claim", () => {
  assert.deepEqual([duration(0), duration(999), duration(12_000), duration(65_000), duration(3_723_000), duration(-5)], ["0s", "0s", "12s", "1m 05s", "1h 02m 03s", "0s"]);
  assert.equal(duration(400, Math.ceil), "1s", "time left rounds up: 0s only once ended");
  assert.equal(remainingMs("2026-11-27T13:00:10Z", Date.parse("2026-11-27T13:00:00Z")), 10_000);
});
