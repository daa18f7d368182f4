// Building the page: elements from plain values, with text always set as text (stored messages are shown,
// never interpreted), and the few number and time formats the pages share.

export function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") element.className = value;
    else if (name === "text") element.textContent = value;
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  element.append(...nodes(children));
  return element;
}

/** Replaces what `parent` holds; like `el`, it takes nested lists and skips null, undefined and false. */
export function fill(parent, ...children) {
  parent.replaceChildren(...nodes(children));
}

const nodes = (children) =>
  children.flat(Infinity).filter((child) => child !== null && child !== undefined && child !== false);

const numbers = new Intl.NumberFormat("en");
export const count = (value) => numbers.format(value);

const times = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "medium" });

export function when(iso) {
  return el("time", { datetime: iso, title: iso }, times.format(new Date(iso)));
}

/** The id a stored message's card has, and the fragment that leads to it (ids may hold any printable character). */
export const storedAnchor = (messageId) => `stored-${encodeURIComponent(messageId)}`;

export const sessionPath = (sessionId) => `/ui/sessions/${encodeURIComponent(sessionId)}`;
export const apiSessionPath = (sessionId) => `/sessions/${encodeURIComponent(sessionId)}`;

/** Shows an error where the page keeps them (one `role=alert` paragraph), or clears it. */
export function showError(error) {
  const slot = document.getElementById("page-error");
  slot.textContent = error ? error.message : "";
  slot.hidden = !error;
}

// A model reference as text: a "provider/modelId" string as it is, opencode's {providerID, modelID} object
// joined the same way.
export function modelName(reference) {
  if (reference && typeof reference === "object") return `${reference.providerID}/${reference.modelID}`;
  return reference || "";
}
