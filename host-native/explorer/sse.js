// Server-Sent Events over fetch(): EventSource cannot send an
// Authorization header, so the stream is read with a ReadableStream and
// parsed here (the WHATWG event-stream format).

/**
 * Feeds text chunks; calls `onEvent({event, data, id})` for each complete
 * event. Comment lines (":") are keep-alives and ignored. `lastEventId`
 * holds the last `id:` seen, for `Last-Event-ID` on reconnect.
 */
export class SseParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buffer = "";
    this.lastEventId = null;
    this.reset();
  }

  reset() {
    this.event = "";
    this.data = [];
    this.id = null;
  }

  push(chunk) {
    this.buffer += chunk;
    let nl;
    while ((nl = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, nl);
      const sep = this.buffer.startsWith("\r\n", nl) ? 2 : 1;
      // A lone "\r" at the end may be the first half of "\r\n": wait.
      if (sep === 1 && this.buffer[nl] === "\r" && nl === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(nl + sep);
      this.line(line);
    }
  }

  line(line) {
    if (line === "") {
      if (this.id !== null) this.lastEventId = this.id;
      if (this.data.length) {
        this.onEvent({ event: this.event || "message", data: this.data.join("\n"), id: this.id ?? this.lastEventId });
      }
      this.reset();
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "event") this.event = value;
    else if (name === "data") this.data.push(value);
    else if (name === "id" && !value.includes("\0")) this.id = value;
  }
}

/**
 * Subscribes to `url` with `headers` until `signal` aborts; reconnects
 * after a dropped stream (1 s, then up to 15 s), sending `Last-Event-ID`.
 * Calls `onEvent` per event and `onState(text)` when the connection changes.
 * A 401, 403 or 404 stops it (`onState` gets the status).
 */
export async function subscribe(url, headers, { onEvent, onState, signal }) {
  let lastEventId = null;
  let delay = 1000;
  while (!signal.aborted) {
    try {
      const h = { ...headers, Accept: "text/event-stream" };
      if (lastEventId !== null) h["Last-Event-ID"] = lastEventId;
      const response = await fetch(url, { headers: h, signal, cache: "no-store" });
      if (response.status === 401 || response.status === 403 || response.status === 404) {
        const why = response.status === 404 ? "this daemon has no event stream" : "event stream refused";
        onState({ live: false, status: response.status, text: `live updates off: ${why} (${response.status})` });
        return;
      }
      if (!response.ok || !response.body) throw new Error(`event stream answered ${response.status}`);
      onState({ live: true, text: "live" });
      delay = 1000;
      const parser = new SseParser((e) => {
        lastEventId = e.id ?? lastEventId;
        onEvent(e);
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.push(value);
      }
      onState({ live: false, text: "event stream closed; reconnecting" });
    } catch (e) {
      if (signal.aborted) return;
      onState({ live: false, text: `event stream unavailable (${e.message}); retrying` });
    }
    await new Promise((resolve) => {
      const t = setTimeout(resolve, delay);
      signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
    });
    delay = Math.min(delay * 2, 15_000);
  }
}
