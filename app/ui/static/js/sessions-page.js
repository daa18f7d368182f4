// The sessions list (/ui): the tenant's sessions, newest first, a page at a time, and the message search
// where the service has it.

import { api, keyButton } from "./api.js";
import { count, el, modelName, sessionPath, showError, when } from "./dom.js";
import { optionalEndpoints } from "./features.js";
import { renderHit, search } from "./search.js";

const list = document.getElementById("session-list");
const more = document.getElementById("load-more");
let cursor = null;

async function loadSessions() {
  const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : "";
  const page = await api(`/sessions${query}`);
  list.append(...page.sessions.map(sessionItem));
  cursor = page.nextCursor;
  more.hidden = !page.hasMore;
  if (!list.children.length) list.append(el("li", { class: "empty", text: "No sessions yet." }));
}

function sessionItem(session) {
  return el(
    "li",
    { class: "session" },
    el("a", { href: sessionPath(session.id), class: "session-title", text: session.title || session.id }),
    el(
      "p",
      { class: "facts" },
      el("code", { text: session.id }),
      ` · ${count(session.messageCount)} messages`,
      session.model ? ` · ${modelName(session.model)}` : "",
      " · updated ",
      when(session.updatedAt),
    ),
  );
}

async function enableSearch() {
  const form = document.getElementById("search-form");
  const note = document.getElementById("search-note");
  const results = document.getElementById("search-results");
  const moreHits = document.getElementById("search-more");
  if (!(await optionalEndpoints()).search) {
    note.textContent = "Search needs a service with GET /search; this one does not have it yet.";
    return;
  }
  for (const control of form.elements) control.disabled = false;
  note.textContent = "";
  let next = null;
  const show = async (query, reset) => {
    const answer = await search(query, reset ? null : next);
    if (reset) results.replaceChildren();
    results.append(...answer.hits.map(renderHit));
    next = answer.hasMore ? answer.nextCursor : null;
    moreHits.hidden = next === null;
    results.hidden = false;
    note.textContent = results.children.length ? `${count(results.children.length)} shown` : "Nothing found.";
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    show(form.q.value.trim(), true).catch(showError);
  });
  moreHits.addEventListener("click", () => show(form.q.value.trim(), false).catch(showError));
}

more.addEventListener("click", () => loadSessions().catch(showError));
keyButton();
enableSearch();
loadSessions().catch(showError);
