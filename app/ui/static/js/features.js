// Endpoints that not every service has (the live event stream, search, analytics) are used only where this one
// has them. The OpenAPI document (open, like the pages) says which, so a page never guesses from a failed request.

export const EVENTS_PATH = "/sessions/{session_id}/events";
export const SEARCH_PATH = "/search";
export const ANALYTICS_PATH = "/sessions/{session_id}/analytics";

let documented = null;

export async function optionalEndpoints() {
  documented ??= fetch("/openapi.json", { headers: { accept: "application/json" } })
    .then((response) => (response.ok ? response.json() : { paths: {} }))
    .then((document) => new Set(Object.keys(document.paths ?? {})))
    .catch(() => new Set());
  const paths = await documented;
  return { events: paths.has(EVENTS_PATH), search: paths.has(SEARCH_PATH), analytics: paths.has(ANALYTICS_PATH) };
}
