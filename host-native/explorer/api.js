// The one way the page talks to the daemon: the documented REST API, with
// the token the user pasted (kept in this tab's sessionStorage, sent as
// `Authorization: Bearer`, never put in a URL).

const TOKEN_KEY = "mentisdb.explorer.token";

/** The stored token, or "" when none was given. */
export function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? "";
}

/** Stores (or with "" forgets) the token for this tab. */
export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** The headers every API call carries. */
export function authHeaders() {
  const t = token();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

/** A failed call: the HTTP status and the daemon's `{"error"}` message. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }

  /** Whether the token is missing, unknown (401) or lacks scope (403). */
  get isAuth() {
    return this.status === 401 || this.status === 403;
  }
}

/** Listeners told about every 401/403 (the page shows the token box). */
const authListeners = new Set();
export function onAuthError(listener) {
  authListeners.add(listener);
}

async function check(response) {
  if (response.ok) return response;
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body?.error) message = body.error;
  } catch {
    // not JSON: keep the status line
  }
  const error = new ApiError(response.status, message);
  if (error.isAuth) for (const l of authListeners) l(error);
  throw error;
}

/** `POST path` with `body` as JSON; the reply's JSON. */
export async function post(path, body = {}) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...authHeaders() },
    body: JSON.stringify(body),
    cache: "no-store",
  });
  return (await check(response)).json();
}

/** `GET path` (with an optional query object); the reply's JSON. */
export async function get(path, query) {
  const qs = query ? `?${new URLSearchParams(query)}` : "";
  const response = await fetch(path + qs, { headers: authHeaders(), cache: "no-store" });
  return (await check(response)).json();
}

/** `GET path` as bytes (the chain export). */
export async function getBlob(path) {
  const response = await fetch(path, { headers: authHeaders(), cache: "no-store" });
  return (await check(response)).blob();
}

/** `DELETE path`; the reply's JSON. */
export async function del(path) {
  const response = await fetch(path, { method: "DELETE", headers: authHeaders(), cache: "no-store" });
  return (await check(response)).json();
}
