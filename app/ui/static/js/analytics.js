// The session's figures (GET /sessions/{id}/analytics): turns and how long answers took, tool calls and their
// failures, tokens, cost per model with the catalog that priced it, compactions and prunes. Each figure is a
// term and its value, so a screen reader reads them in pairs.

import { count, el, fill } from "./dom.js";

const dollars = new Intl.NumberFormat("en", { style: "currency", currency: "USD", maximumSignificantDigits: 3 });
const seconds = new Intl.NumberFormat("en", { maximumFractionDigits: 1 });

export function renderAnalytics(slot, report) {
  const figures = [
    ["Turns", turns(report.turns)],
    ["Messages", count(report.messages)],
    ["Tool calls", tools(report.toolCalls)],
    ["Tokens", tokens(report.tokens)],
    ["Cost", cost(report.cost)],
    ["Upkeep", upkeep(report)],
  ];
  const models = report.models.filter((model) => model.model && model.tokens.responses);
  fill(
    slot,
    el("dl", { class: "figures" }, figures.map(([term, value]) => [el("dt", { text: term }), el("dd", {}, value)])),
    models.length
      ? el(
          "ul",
          { class: "per-model", "aria-label": "Per model" },
          models.map((model) =>
            el(
              "li",
              {},
              el("code", { text: model.model }),
              ` · ${plural(model.tokens.responses, "answer")} · ${count(model.tokens.totalTokens)} tokens · `,
              cost(model.cost),
            ),
          ),
        )
      : null,
  );
}

function turns(figures) {
  if (!figures.turns) return "none yet";
  const median = figures.p50Seconds === null ? "" : `; median answer after ${seconds.format(figures.p50Seconds)} s`;
  return `${count(figures.turns)} (${count(figures.answered)} answered${median})`;
}

function tools(calls) {
  if (!calls.length) return "none";
  return calls
    .map(({ tool, calls: made, errors }) => `${tool} ${count(made)}${errors ? ` (${count(errors)} failed)` : ""}`)
    .join(", ");
}

function tokens(figures) {
  return (
    `${count(figures.inputTokens)} in · ${count(figures.outputTokens)} out · ` +
    `${count(figures.cacheReadTokens)} cache read · ${count(figures.cacheWriteTokens)} cache written`
  );
}

function cost(figures) {
  const catalog = figures.catalog ? ` (${figures.catalog})` : "";
  if (figures.usd) return `${dollars.format(figures.usd.total)}${catalog}`;
  const unpriced = plural(figures.unpricedMessageIds.length, "answer");
  return `unknown: ${unpriced} the catalog cannot price; the rest ${dollars.format(figures.pricedUsd.total)}${catalog}`;
}

function upkeep(report) {
  const { passes, results } = report.prunes;
  return (
    `${plural(report.compactions, "compaction")} · ` +
    `${plural(passes, "pruning pass", "pruning passes")} (${plural(results, "result")} cleared)`
  );
}

const plural = (number, one, many = `${one}s`) => `${count(number)} ${number === 1 ? one : many}`;
