// The provider payload: POST /chat for the chosen provider and model, shown as the exact request body with
// the repairs its adapter made (each naming the stored messages it touched). /chat writes nothing, so a
// reader key may build it too.

import { count, el, fill } from "./dom.js";
import { joined, storedLink } from "./model-view.js";

export function renderPayload(slot, answer) {
  const repairs = answer.diagnostics.repairs;
  fill(
    slot,
    el(
      "p",
      {},
      el("strong", { text: `${answer.provider} · ${answer.model}` }),
      ` · ${count(answer.context.totalTokens)} tokens in context`,
    ),
    el("h3", { text: repairs.length ? `Repairs (${repairs.length})` : "No repairs were needed" }),
    repairs.length
      ? el(
          "ul",
          { class: "reasons" },
          repairs.map((repair) =>
            el(
              "li",
              {},
              el("strong", { text: repair.rule }),
              `: ${repair.detail}`,
              repair.messageIds.length ? [" (", joined(repair.messageIds.map(storedLink)), ")"] : null,
            ),
          ),
        )
      : null,
    el("h3", { text: "Request body" }),
    el("pre", { class: "text payload-json", tabindex: "0", text: JSON.stringify(answer.payload, null, 2) }),
  );
}
