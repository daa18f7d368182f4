// Search over the tenant's messages, for a service that has GET /search?q= (see features.js): it answers
// `{hits: [{sessionId, messageId, seq, snippet}], nextCursor, hasMore}`. Each hit links to its message on the
// session page, which scrolls to it and marks it. A snippet's highlights (<mark> or <b>, as PostgreSQL's
// ts_headline writes them) become <mark> elements; the rest of the snippet stays text.

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
      el("code", { text: hit.sessionId }),
      ` #${hit.seq} `,
      el("code", { text: hit.messageId }),
    ),
    el("p", { class: "snippet" }, highlighted(hit.snippet ?? "")),
  );
}

function highlighted(snippet) {
  return snippet
    .split(/<\/?(?:mark|b)>/)
    .map((piece, index) => (index % 2 ? el("mark", { text: piece }) : piece))
    .filter((piece) => piece !== "");
}
