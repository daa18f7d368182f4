// Every call to the service goes through here. With auth on, the key is asked for once, kept in this tab's
// sessionStorage (gone when the tab closes) and sent as `Authorization: Bearer`; it never goes into a URL,
// so it cannot end up in history, logs or a Referer. Problem+json answers become errors that say why.

import { el } from "./dom.js";

const KEY_NAME = "projector.apiKey";

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `The service answered ${status}.`);
    this.status = status;
    this.problem = problem;
  }
}

const storedKey = () => sessionStorage.getItem(KEY_NAME);

export function headers(accept = "application/json") {
  const key = storedKey();
  return key ? { accept, authorization: `Bearer ${key}` } : { accept };
}

/** GET (or, with `body`, POST) a JSON endpoint; a 401 asks for the key and tries again with it. */
export async function api(path, { body } = {}) {
  for (;;) {
    const sentKey = storedKey();
    const init = { headers: headers() };
    if (body !== undefined) {
      init.method = "POST";
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    if (response.status === 401) {
      await askForKey({ rejected: sentKey !== null });
      continue;
    }
    if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
    return response.json();
  }
}

let pendingKey = null;

/** One prompt for every request that met the 401 together; cancelling it fails them with a clear error. */
function askForKey({ rejected }) {
  pendingKey ??= promptForKey(rejected).finally(() => {
    pendingKey = null;
  });
  return pendingKey;
}

function promptForKey(rejected) {
  const input = el("input", {
    id: "api-key",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    "aria-describedby": "api-key-help",
  });
  const form = el(
    "form",
    { method: "dialog" },
    el("h2", { id: "api-key-title", text: "API key" }),
    rejected ? el("p", { class: "error", text: "The service did not accept that key." }) : null,
    el("label", { for: "api-key", text: "Key" }),
    input,
    el("p", {
      id: "api-key-help",
      class: "note",
      text: "Kept in this tab only (sessionStorage) and sent as a bearer header, never in a URL.",
    }),
    el("div", { class: "actions" }, el("button", { type: "submit", text: "Use this key" })),
  );
  const dialog = el("dialog", { class: "key-dialog", "aria-labelledby": "api-key-title" }, form);
  document.body.append(dialog);
  dialog.showModal();
  return new Promise((resolve, reject) => {
    let given = false;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const key = input.value.trim();
      if (!key) return;
      sessionStorage.setItem(KEY_NAME, key);
      given = true;
      dialog.close();
    });
    dialog.addEventListener("close", () => {
      dialog.remove();
      keyButton();
      if (given) resolve();
      else reject(new ApiError(401, { detail: "This service needs an API key; reload the page to enter one." }));
    });
  });
}

/** The header's "Forget API key" button, shown while this tab holds a key. */
export function keyButton() {
  const button = document.getElementById("forget-key");
  button.hidden = storedKey() === null;
  button.onclick = () => {
    sessionStorage.removeItem(KEY_NAME);
    location.reload();
  };
}
