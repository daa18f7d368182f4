// Keeps a session page current: every stored message reaches `onMessage` once, in seq order, and `onChange`
// hears of what is not an append (an amended message, a compaction, a prune) so the views can be read again.
//
// Where the service has the event stream (GET /sessions/{id}/events: `event: message`, `id:` the seq, data
// the message as the listing gives it), the page reads it, resuming with Last-Event-ID after a drop; the
// other events (amended, compaction, prune, resync) and every reconnect, after which changes made meanwhile
// are not replayed, make the views be read again. Where it has none, or the stream is refused, it polls: one
// read of the session row per tick, and the messages after its cursor only when lastSeq has grown. A session
// deleted while the page is open (`event: deleted`, or the row gone while polling) ends the following: a
// session created again under its id is another conversation, which the page never mixes in. The stream is read with fetch, not the browser's
// EventSource, because EventSource cannot send an Authorization header and the key never goes in a URL.

import { api, headers } from "./api.js";
import { apiSessionPath } from "./dom.js";

export const POLL_INTERVAL_MS = 2000;
const STREAM_RETRY_MS = [1000, 2000, 5000];

const PAGE_SIZE = 500;

/**
 * Every stored message after `cursor` (null: from the first), a page at a time. Pages are as large as the
 * service's default maximum; where a smaller maximum is configured, its default page size is used instead.
 */
export async function* messagesAfter(sessionId, cursor) {
  let limit = PAGE_SIZE;
  for (;;) {
    const query = new URLSearchParams(limit ? { limit } : {});
    if (cursor) query.set("after", cursor);
    let page;
    try {
      page = await api(`${apiSessionPath(sessionId)}/messages?${query}`);
    } catch (error) {
      if (!(limit && error.status === 422 && error.problem?.field === "limit")) throw error;
      limit = null;
      continue;
    }
    cursor = page.nextCursor;
    yield { messages: page.messages, cursor };
    if (!page.hasMore) return;
  }
}

/**
 * Follows a session from `lastSeq` (with `cursor`, the listing's cursor at that point, and `updatedAt`, the
 * session row's) for as long as the page is open, or until the session is deleted. `onMode` hears
 * "streaming", "polling", "offline" or, last, "deleted".
 */
export function follow({ sessionId, lastSeq, cursor, updatedAt, streamAvailable }, { onMessage, onChange, onMode }) {
  const deliver = (message) => {
    if (message.seq <= lastSeq) return;
    lastSeq = message.seq;
    onMessage(message);
  };

  /** Reads the stream, reconnecting after a drop; "deleted" when the session is, false when the service
   * refuses the stream or keeps failing. */
  async function stream() {
    let lastEventId = String(lastSeq);
    let failures = 0;
    let connections = 0;
    while (failures <= STREAM_RETRY_MS.length) {
      try {
        const response = await fetch(`${apiSessionPath(sessionId)}/events`, {
          headers: { ...headers("text/event-stream"), "last-event-id": lastEventId },
        });
        if (!response.ok || !response.headers.get("content-type")?.startsWith("text/event-stream")) return false;
        onMode("streaming");
        if (connections++) onChange("reconnected");
        failures = 0;
        for await (const event of serverSentEvents(response.body)) {
          if (event.id !== undefined) lastEventId = event.id;
          if (event.type === "message") deliver(JSON.parse(event.data));
          else if (event.type === "deleted") return "deleted";
          else onChange(event.type);
        }
      } catch {
        failures += 1;
        onMode("offline");
      }
      // Also after a clean end (the server restarting, say): a pause, so a closing server is not hammered.
      await pause(STREAM_RETRY_MS[Math.min(failures, STREAM_RETRY_MS.length - 1)]);
    }
    return false;
  }

  async function poll() {
    onMode("polling");
    for (;;) {
      await pause(POLL_INTERVAL_MS);
      if (document.hidden) continue;
      try {
        const session = await api(apiSessionPath(sessionId));
        if (session.lastSeq > lastSeq) {
          for await (const page of messagesAfter(sessionId, cursor)) {
            cursor = page.cursor;
            page.messages.forEach(deliver);
          }
        } else if (session.updatedAt !== updatedAt) {
          onChange("amended");
        }
        updatedAt = session.updatedAt;
        onMode("polling");
      } catch (error) {
        if (error.status === 404) return;
        onMode("offline");
      }
    }
  }

  (async () => {
    const streamed = streamAvailable ? await stream() : false;
    if (streamed !== "deleted") await poll();
    onMode("deleted");
  })();
}

/** Parses a text/event-stream body into `{type, id, data}` events (comments, such as heartbeats, are skipped). */
export async function* serverSentEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let event = { type: "", id: undefined, data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const lines = buffer.split("\n");
    buffer = lines.pop();
    for (const raw of lines) {
      const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (line === "") {
        if (event.data.length) yield { type: event.type || "message", id: event.id, data: event.data.join("\n") };
        event = { type: "", id: undefined, data: [] };
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const text = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") event.data.push(text);
      else if (field === "event") event.type = text;
      else if (field === "id") event.id = text;
    }
  }
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
