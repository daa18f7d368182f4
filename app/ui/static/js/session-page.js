// The session page (/ui/sessions/{id}): the stored messages and the model view side by side, the context bar,
// the session's analytics and the /chat payload for the chosen provider, kept current as messages arrive.

import { renderAnalytics } from "./analytics.js";
import { api, ApiError, keyButton } from "./api.js";
import { renderContextBar } from "./context-bar.js";
import { apiSessionPath, count, el, fill, modelName, showError } from "./dom.js";
import { optionalEndpoints } from "./features.js";
import { follow, messagesAfter, POLL_INTERVAL_MS } from "./live.js";
import { readProjection, renderModelView } from "./model-view.js";
import { renderPayload } from "./payload.js";
import { Transcript } from "./transcript.js";

const sessionId = decodeURIComponent(location.pathname.slice("/ui/sessions/".length));
const base = apiSessionPath(sessionId);
const transcript = new Transcript(document.getElementById("transcript"));
const targetForm = document.getElementById("target-form");
const payloadDetails = document.getElementById("payload-details");
const payloadSlot = document.getElementById("payload-body");
const MODES = {
  streaming: "Live: following the event stream.",
  polling: `Live: checking for new messages every ${POLL_INTERVAL_MS / 1000} seconds.`,
  offline: "Live: the service does not answer; trying again.",
  deleted: "This session was deleted: the page shows it as it was.",
};
let mode = "";
let arrived = 0;
let analyticsAvailable = false;

function target() {
  const form = new FormData(targetForm);
  return { provider: form.get("provider"), model: form.get("model").trim() || null };
}

function targetQuery() {
  const { provider, model } = target();
  return new URLSearchParams(model ? { provider, model } : { provider }).toString();
}

let generation = 0;

/** Reads the model view and the context again; an answer overtaken by a newer request is dropped. */
async function refreshViews() {
  const mine = ++generation;
  try {
    const [projection, context, analytics] = await Promise.all([
      api(`${base}/projection?view=model&${targetQuery()}`),
      api(`${base}/context?${targetQuery()}`),
      analyticsAvailable ? api(`${base}/analytics`) : null,
    ]);
    if (mine !== generation) return;
    if (analytics) {
      renderAnalytics(document.getElementById("analytics-body"), analytics);
      document.getElementById("analytics-panel").hidden = false;
    }
    const reading = readProjection(projection);
    renderModelView(document.getElementById("model-view"), document.getElementById("model-notes"), reading, transcript);
    transcript.annotate(reading);
    renderContextBar(document.getElementById("context-body"), context);
    showError(null);
    if (payloadDetails.open) await refreshPayload();
  } catch (error) {
    if (mine === generation) showError(error);
  }
}

let refreshTimer;
function scheduleRefresh() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refreshViews, 250);
}

async function refreshPayload() {
  const { provider, model } = target();
  payloadSlot.setAttribute("aria-busy", "true");
  try {
    renderPayload(payloadSlot, await api("/chat", { body: { sessionId, provider, model } }));
  } catch (error) {
    fill(payloadSlot, el("p", { class: "error", text: error.message }));
  } finally {
    payloadSlot.removeAttribute("aria-busy");
  }
}

function announce(next = mode) {
  mode = next;
  const news = arrived ? ` ${count(arrived)} new since the page opened.` : "";
  const status = document.getElementById("live-status");
  // Written only when it changes: a status region may be read out again on any rewrite.
  if (status.textContent !== MODES[mode] + news) status.textContent = MODES[mode] + news;
}

function showSession(session) {
  document.title = `${session.title || session.id} · Projector`;
  document.getElementById("session-title").textContent = session.title || session.id;
  fill(
    document.getElementById("session-facts"),
    el("code", { text: session.id }),
    session.model ? ` · ${modelName(session.model)}` : "",
    session.contextWindowTokens ? ` · window ${count(session.contextWindowTokens)}` : "",
  );
  const [provider, model] = splitModel(modelName(session.model));
  if (provider && targetForm.provider.querySelector(`option[value="${CSS.escape(provider)}"]`)) {
    targetForm.provider.value = provider;
  }
  if (model) targetForm.model.value = model;
}

/** `provider/modelId` as the service reads it: the provider is everything before the last slash. */
function splitModel(reference) {
  if (!reference) return [null, null];
  const slash = reference.lastIndexOf("/");
  return slash === -1 ? [null, reference] : [reference.slice(0, slash), reference.slice(slash + 1)];
}

function onMessage(message) {
  const column = document.getElementById("transcript");
  const atEnd = column.scrollHeight - column.scrollTop - column.clientHeight < 40;
  transcript.append(message);
  if (atEnd) column.scrollTop = column.scrollHeight;
  arrived += 1;
  announce();
  scheduleRefresh();
}

/** Scrolls to, focuses and marks a message card (links between the columns, and search hits, land here). */
function reveal(elementId) {
  const card = document.getElementById(elementId);
  if (!card) return false;
  document.querySelector(".selected")?.classList.remove("selected");
  card.classList.add("selected");
  card.scrollIntoView({ block: "center" });
  card.focus({ preventScroll: true });
  return true;
}

document.addEventListener("click", (event) => {
  const link = event.target.closest("a[href^='#']");
  if (!link) return;
  const elementId = link.getAttribute("href").slice(1);
  if (reveal(elementId)) {
    event.preventDefault();
    history.replaceState(null, "", `#${elementId}`);
  }
});

targetForm.addEventListener("submit", (event) => {
  event.preventDefault();
  refreshViews();
});

payloadDetails.addEventListener("toggle", () => {
  if (payloadDetails.open) refreshPayload();
});

async function main() {
  keyButton();
  const [session, endpoints] = await Promise.all([api(base), optionalEndpoints()]);
  analyticsAvailable = endpoints.analytics;
  showSession(session);
  let cursor = null;
  for await (const page of messagesAfter(sessionId, null)) {
    page.messages.forEach((message) => transcript.append(message));
    cursor = page.cursor;
  }
  if (!transcript.size) transcript.showEmpty();
  await refreshViews();
  reveal(location.hash.slice(1));
  follow(
    {
      sessionId,
      lastSeq: transcript.lastSeq,
      cursor,
      updatedAt: session.updatedAt,
      streamAvailable: endpoints.events,
    },
    { onMessage, onChange: scheduleRefresh, onMode: announce },
  );
}

main().catch((error) => {
  if (error instanceof ApiError && error.status === 404) {
    document.getElementById("session-title").textContent = "Session not found";
  }
  showError(error);
});
