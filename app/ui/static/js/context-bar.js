// The context bar: the sections the model view sends (GET /sessions/{id}/context), drawn against the window
// with the compaction threshold marked. Numbers stand beside the colours, so nothing is said by colour alone.

import { count, el, fill } from "./dom.js";

const SECTIONS = [
  ["system", "System"],
  ["summary", "Summary"],
  ["messages", "Messages"],
  ["toolResults", "Tool results"],
  ["reasoning", "Reasoning"],
];

export function renderContextBar(slot, report) {
  const window = report.window.tokens;
  const scale = Math.max(window ?? 0, report.totalTokens, report.estimatedTokens, 1);
  const share = (tokens) => `${Math.min(100, (tokens / scale) * 100)}%`;
  const summary = window
    ? `${count(report.totalTokens)} of ${count(window)} tokens (${percent(report.totalTokens / window)})`
    : `${count(report.totalTokens)} tokens; no window known, so compaction is never proposed`;

  const bar = el("div", { class: "context-bar", role: "img", "aria-label": summary });
  for (const [key] of SECTIONS) {
    const tokens = report.sections[key];
    if (!tokens) continue;
    const segment = el("span", { class: `segment section-${key}` });
    segment.style.width = share(tokens);
    bar.append(segment);
  }
  if (report.thresholdTokens) {
    const mark = el("span", { class: "threshold" });
    mark.style.left = share(report.thresholdTokens);
    bar.append(mark);
  }

  fill(
    slot,
    el("p", { class: "context-summary" }, el("strong", { text: summary }), report.compactionDue ? due() : null),
    bar,
    el(
      "ul",
      { class: "legend" },
      SECTIONS.map(([key, label]) =>
        el(
          "li",
          {},
          el("span", { class: `swatch section-${key}`, "aria-hidden": "true" }),
          `${label} ${count(report.sections[key])}`,
        ),
      ),
      report.thresholdTokens
        ? el("li", {}, el("span", { class: "swatch threshold-swatch", "aria-hidden": "true" }), `Compaction at ${count(report.thresholdTokens)}`)
        : null,
    ),
    el("p", { class: "note" }, details(report)),
  );
}

function due() {
  return el("strong", { class: "badge badge-hidden", text: "compaction due" });
}

function details(report) {
  const sections = `The sections are estimates of what the model view sends (${count(report.estimatedTokens)} tokens)`;
  const counted =
    report.basis === "usage"
      ? `the count is the provider's usage on ${report.usage.messageId} plus ${count(report.tokensAfterUsage)} estimated after it`
      : "the count is that estimate";
  const source = report.window.tokens ? ` The window comes from the ${report.window.source.replaceAll("_", " ")}.` : "";
  return `${sections}; ${counted}.${source} ${report.reason}.`;
}

function percent(fraction) {
  return `${(fraction * 100).toFixed(fraction < 0.1 ? 1 : 0)}%`;
}
