// The model column: what the model view sends (GET /sessions/{id}/projection?view=model), each message linked
// to the stored messages it came from (sourceMessageIds), and what the view left out, cut, stubbed or repaired
// marked with the reason its diagnostics give. Nothing is decided here: the page only lays the answer out.

import { messageCard, renderContent } from "./content.js";
import { el, fill, storedAnchor } from "./dom.js";

export const modelAnchor = (index) => `model-${index + 1}`;

/** The projection, indexed by stored message id: where each went, and why it changed or stayed out. */
export function readProjection(projection) {
  const diagnostics = projection.diagnostics;
  const sentAs = new Map();
  projection.messages.forEach((message, index) => {
    for (const id of message.sourceMessageIds) sentAs.set(id, [...(sentAs.get(id) ?? []), index]);
  });
  const repairedBy = new Map();
  for (const repair of diagnostics.repairs) {
    for (const id of repair.messageIds) repairedBy.set(id, [...(repairedBy.get(id) ?? []), repair]);
  }
  return {
    messages: projection.messages,
    hidden: new Set(diagnostics.hiddenMessageIds),
    truncated: new Set(diagnostics.truncatedMessageIds),
    reasons: new Map(Object.entries(diagnostics.reasons)),
    injectedNotes: diagnostics.injectedNotes,
    boundaryId: diagnostics.appliedCompactBoundaryId,
    sentAs,
    repairedBy,
  };
}

/** Badges for what a model message's sources went through: stubbed, cut, repaired. */
export function changeBadges({ compacted, truncated, repaired }) {
  return [
    compacted ? el("strong", { class: "badge badge-stubbed", text: "stubbed" }) : null,
    truncated && !compacted ? el("strong", { class: "badge badge-cut", text: "cut" }) : null,
    repaired ? el("strong", { class: "badge badge-repaired", text: "repaired" }) : null,
  ];
}

export function storedLink(id) {
  return el("a", { href: `#${storedAnchor(id)}` }, el("code", { text: id }));
}

/**
 * Lays the model view out in `list`, with a marker for each left-out stored message placed before the first
 * model message that comes from a later one (`transcript` knows the stored messages' seq and kind).
 */
export function renderModelView(list, notes, reading, transcript) {
  const waiting = [...reading.hidden]
    .map((id) => ({ id, seq: transcript.message(id)?.seq ?? Infinity }))
    .sort((a, b) => a.seq - b.seq);
  const items = [];
  reading.messages.forEach((message, index) => {
    const firstSeq = Math.min(...message.sourceMessageIds.map((id) => transcript.message(id)?.seq ?? Infinity));
    while (waiting.length && waiting[0].seq < firstSeq) items.push(hiddenMarker(waiting.shift().id, reading, transcript));
    items.push(modelCard(message, index, reading));
  });
  items.push(...waiting.map(({ id }) => hiddenMarker(id, reading, transcript)));
  fill(list, items.length ? items : el("li", { class: "empty", text: "The model view is empty." }));
  fill(notes, viewNotes(reading));
}

function modelCard(message, index, reading) {
  const anchor = modelAnchor(index);
  const sources = message.sourceMessageIds;
  const reasons = new Set([...message.metadata.notes, ...sources.flatMap((id) => reading.reasons.get(id) ?? [])]);
  const repairs = sources.flatMap((id) => reading.repairedBy.get(id) ?? []);
  for (const repair of repairs) if (!reasons.has(repair.detail)) reasons.add(`${repair.rule}: ${repair.detail}`);
  const changed = {
    compacted: message.metadata.compacted,
    truncated: message.metadata.truncated || sources.some((id) => reading.truncated.has(id)),
    repaired: repairs.length > 0,
  };
  return messageCard(
    anchor,
    message.role,
    [
      el("span", { class: "seq", text: `model #${index + 1}` }),
      el("span", { class: "role", text: message.role }),
      el("span", { class: "kind", text: message.semanticType }),
      changeBadges(changed),
    ],
    el("div", { class: "content" }, renderContent(message.content)),
    el("p", { class: "sources" }, "From ", joined(sources.map(storedLink))),
    reasons.size ? el("ul", { class: "reasons" }, [...reasons].map((reason) => el("li", { text: reason }))) : null,
  );
}

function hiddenMarker(id, reading, transcript) {
  const stored = transcript.message(id);
  const reasons = reading.reasons.get(id) ?? [];
  return el(
    "li",
    { class: "marker", id: `model-hidden-${storedAnchor(id)}` },
    el("strong", { class: "badge badge-hidden", text: "not sent" }),
    " ",
    storedLink(id),
    stored ? el("span", { class: "muted", text: ` #${stored.seq} ${stored.kind}` }) : null,
    reasons.length ? el("span", { class: "reason", text: `: ${reasons.join("; ")}` }) : null,
  );
}

function viewNotes(reading) {
  const notes = [];
  if (reading.boundaryId) {
    notes.push(el("li", {}, "Starts at the compaction ", storedLink(reading.boundaryId), ": its summary, then what followed."));
  }
  for (const note of reading.injectedNotes) notes.push(el("li", { text: note }));
  return notes.length ? [el("ul", { class: "view-notes" }, notes)] : [];
}

export function joined(nodes, separator = ", ") {
  return nodes.flatMap((node, index) => (index ? [separator, node] : [node]));
}
