// The routes the console reads: the server's own /v1 routes, with the admin token kept in the
// browser's session storage (never in a URL, gone with the tab).

const TOKEN = "palimpsest.admin-token";

export const session = {
  token: () => sessionStorage.getItem(TOKEN),
  keep: (token) => sessionStorage.setItem(TOKEN, token),
  forget: () => sessionStorage.removeItem(TOKEN),
};

/** An answer that was not a 2xx: its status and the server's message. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** GET `path` (with `params` as its query) as JSON, with the admin token. */
export async function get(path, params = {}) {
  const query = new URLSearchParams(
    Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ""),
  );
  const url = query.toString() ? `${path}?${query}` : path;
  const response = await fetch(url, {
    headers: { Authorization: `Bearer ${session.token() ?? ""}` },
    cache: "no-store",
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new ApiError(response.status, body.error ?? response.statusText);
  }
  return body;
}
