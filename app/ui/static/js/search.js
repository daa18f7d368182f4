// Search over the tenant's messages (GET /search?q=, see features.js): it answers `{hits: [{sessionId,
// sessionTitle, messageId, seq, role, kind, snippet}], nextCursor, hasMore}`. Each hit links to its message
// on the session page, which scrolls to it and marks it. A snippet is escaped text with each hit in <mark>:
// the marks become <mark> elements and the text between them is unescaped and set as text, never parsed.

import { api } from "./api.js";
import { el, sessionPath, storedAnchor } from "./dom.js";

export async function search(query, cursor = null) {
  const parameters = new URLSearchParams({ q: query });
  if (cursor) parameters.set("cursor", cursor);
  return api(`/search?${parameters}`);
}

export function renderHit(hit) {
  return el(
    "li",
    {},
    el(
      "a",
      { href: `${sessionPath(hit.sessionId)}#${storedAnchor(hit.messageId)}` },
      hit.sessionTitle ? el("bdi", { text: hit.sessionTitle }) : el("code", { text: hit.sessionId }),
      ` #${hit.seq} `,
      el("code", { text: hit.messageId }),
    ),
    hit.kind ? el("span", { class: "muted", text: ` ${hit.kind}` }) : null,
    el("p", { class: "snippet" }, highlighted(hit.snippet ?? "")),
  );
}

function highlighted(snippet) {
  return snippet
    .split(/<\/?mark>/)
    .map(unescaped)
    .map((piece, index) => (index % 2 ? el("mark", { text: piece }) : piece))
    .filter((piece) => piece !== "");
}

const ENTITIES = { "&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#x27;": "'" };
const unescaped = (text) => text.replace(/&(?:lt|gt|amp|quot|#x27);/g, (entity) => ENTITIES[entity]);
