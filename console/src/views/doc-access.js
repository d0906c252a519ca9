// A document's channels now and who may read it: its `_sync` metadata as Sync Gateway's admin
// API gives it (`_raw`), and the database's users whose channels (given, through roles, or
// granted by documents) reach one of them (or `*`).
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { get } from "../api.js";

/** The channels a document's `_sync.channels` holds now (a removed channel keeps a record). */
const current = (sync) => Object.entries(sync?.channels ?? {}).filter(([, removed]) => !removed).map(([c]) => c);

export function DocAccess({ db, doc }) {
  const [access, setAccess] = useState(null);
  const [error, setError] = useState("");
  useEffect(() => {
    const base = `/docs/_admin/${encodeURIComponent(db)}`;
    (async () => {
      const raw = await get(`${base}/_raw/${encodeURIComponent(doc)}`);
      const channels = current(raw._sync);
      const names = await get(`${base}/_user/`);
      const users = await Promise.all(names.map((n) => get(`${base}/_user/${encodeURIComponent(n)}`)));
      const readers = users
        .filter((u) => (u.all_channels ?? []).some((c) => c === "*" || channels.includes(c)))
        .map((u) => u.name);
      return { channels, readers };
    })().then(setAccess).catch((e) => setError(e.message));
  }, [db, doc]);
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!access) return null;
  return html`<dl class="facts doc-access">
    <dt>Channels now</dt><dd id="doc-channels">${access.channels.join(", ") || "none"}</dd>
    <dt>Who may read it</dt><dd id="doc-readers">${access.readers.join(", ") || "the administrator only"}</dd>
  </dl>`;
}
