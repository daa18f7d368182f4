// Message content as a person reads it: a string, or AI SDK parts (text, reasoning, tool calls and results,
// media, approvals). Stored messages and model-view messages share these shapes, so both columns use this.
// Media is named, not loaded; very long text is shown in part, with a button for the rest.

import { count, el } from "./dom.js";

const SHOWN_CHARACTERS = 2000;

/** A message as a card in a column: a focusable article named by its header, which links can land on. */
export function messageCard(anchor, role, head, ...body) {
  return el(
    "li",
    {},
    el(
      "article",
      { class: `message role-${role}`, id: anchor, tabindex: "-1", "aria-labelledby": `${anchor}-h` },
      el("header", { class: "message-head", id: `${anchor}-h` }, head),
      body,
    ),
  );
}

export function renderContent(content) {
  if (typeof content === "string") return [textBlock(content)];
  return content.map(renderPart);
}

function renderPart(part) {
  switch (part.type) {
    case "text":
      return textBlock(part.text);
    case "reasoning":
      return el("details", { class: "part reasoning" }, el("summary", { text: "Reasoning" }), textBlock(part.text));
    case "tool-call":
      return toolBlock("Tool call", part, jsonBlock(part.input));
    case "tool-result":
      return toolBlock("Tool result", part, outputBlock(part.output), part.output?.type?.startsWith("error"));
    case "image":
      return el("p", { class: "part media", text: `[image${part.mediaType ? `: ${part.mediaType}` : ""}]` });
    case "file":
      return el("p", {
        class: "part media",
        text: `[file: ${[part.filename, part.mediaType].filter(Boolean).join(", ") || "unnamed"}]`,
      });
    default:
      return el("div", { class: "part other" }, el("p", { class: "part-label", text: part.type }), jsonBlock(part));
  }
}

function toolBlock(label, part, body, failed = false) {
  return el(
    "div",
    { class: `part tool${failed ? " failed" : ""}` },
    el(
      "p",
      { class: "part-label" },
      `${label} `,
      el("code", { text: part.toolName ?? "?" }),
      part.toolCallId ? el("span", { class: "muted", text: ` ${part.toolCallId}` }) : null,
      failed ? el("strong", { class: "badge badge-error", text: "error" }) : null,
    ),
    body,
  );
}

function outputBlock(output) {
  if (output === undefined || output === null) return null;
  switch (output.type) {
    case "text":
    case "error-text":
      return textBlock(output.value, "pre");
    case "content":
      return el("div", { class: "parts" }, (output.value ?? []).map((item) => renderPart(item)));
    default:
      return jsonBlock(output.value ?? output);
  }
}

function jsonBlock(value) {
  return textBlock(JSON.stringify(value, null, 2) ?? "", "pre");
}

/** Text as text; past SHOWN_CHARACTERS only the start, and a button that shows the rest. */
function textBlock(text, tag = "p") {
  const block = el(tag, { class: "text" });
  const value = String(text ?? "");
  if (value.length <= SHOWN_CHARACTERS) {
    block.textContent = value;
    return block;
  }
  block.textContent = value.slice(0, SHOWN_CHARACTERS);
  block.classList.add("long");
  const more = el("button", {
    type: "button",
    class: "link-button",
    text: `Show all ${count(value.length)} characters`,
    onclick: () => {
      block.textContent = value;
      more.remove();
    },
  });
  return el("div", {}, block, more);
}
