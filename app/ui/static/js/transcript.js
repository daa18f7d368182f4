// The transcript column: every stored message in seq order, as the message listing gives it, each saying
// what became of it in the model view (sent as which model message, left out and why, or summarised away).

import { messageCard, renderContent } from "./content.js";
import { el, fill, storedAnchor, when } from "./dom.js";
import { changeBadges, joined, modelAnchor } from "./model-view.js";

export class Transcript {
  constructor(list) {
    this.list = list;
    this.stored = new Map();
    this.fates = new Map();
    this.placeholder = null;
    this.newest = null;
  }

  message(id) {
    return this.stored.get(id);
  }

  get size() {
    return this.stored.size;
  }

  /** The seq of the newest message shown (messages arrive in seq order), 0 before the first. */
  get lastSeq() {
    return this.newest?.seq ?? 0;
  }

  /** Says the session has no messages yet, until the first one arrives. */
  showEmpty() {
    this.placeholder = el("li", { class: "empty", text: "No messages yet." });
    this.list.append(this.placeholder);
  }

  append(message) {
    this.placeholder?.remove();
    this.placeholder = null;
    const anchor = storedAnchor(message.id);
    const fateSlot = el("div", { class: "fate" });
    this.stored.set(message.id, message);
    this.newest = message;
    this.fates.set(message.id, fateSlot);
    const metadata = Object.keys(message.metadata).length
      ? el(
          "details",
          { class: "metadata" },
          el("summary", { text: "Metadata" }),
          el("pre", { class: "text", text: JSON.stringify(message.metadata, null, 2) }),
        )
      : null;
    this.list.append(
      messageCard(
        anchor,
        message.role,
        [
          el("span", { class: "seq", text: `#${message.seq}` }),
          el("span", { class: "role", text: message.role }),
          el("span", { class: "kind", text: message.kind }),
          el("code", { class: "id", text: message.id }),
          when(message.createdAt),
        ],
        el("div", { class: "content" }, renderContent(message.content)),
        metadata,
        fateSlot,
      ),
    );
  }

  /** Writes each message's fate from the model view (see `readProjection`). */
  annotate(reading) {
    const boundary = reading.boundaryId ? this.stored.get(reading.boundaryId) : undefined;
    for (const [id, slot] of this.fates) {
      fill(slot, fate(this.stored.get(id), reading, boundary));
    }
  }
}

function fate(message, reading, boundary) {
  const reasons = reading.reasons.get(message.id) ?? [];
  if (reading.hidden.has(message.id)) {
    return [
      el("strong", { class: "badge badge-hidden", text: "not sent" }),
      ` to the model${reasons.length ? `: ${reasons.join("; ")}` : ""}`,
    ];
  }
  const indexes = reading.sentAs.get(message.id);
  if (!indexes) {
    const summarised = boundary && message.seq < boundary.seq;
    return [
      el("span", {
        class: "muted",
        text: summarised ? "Not in the model view: the compaction summary stands for it." : "Not in the model view.",
      }),
    ];
  }
  const sent = indexes.map((index) => reading.messages[index]);
  const changed = {
    compacted: sent.some((projected) => projected.metadata.compacted),
    truncated: reading.truncated.has(message.id),
    repaired: reading.repairedBy.has(message.id),
  };
  return [
    "Sent as ",
    joined(indexes.map((index) => el("a", { href: `#${modelAnchor(index)}`, text: `model #${index + 1}` }))),
    " ",
    changeBadges(changed),
    reasons.length ? el("span", { class: "reason", text: ` ${reasons.join("; ")}` }) : null,
  ];
}
