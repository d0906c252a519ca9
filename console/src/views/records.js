// A records class's rows as the records API lists them to the administrator (`listDocs`): each
// row's key, `v`, whether it is a zombie or a `del` row, and its `data` opened by the server
// (the page asks with `no-store`; nothing it shows is kept by the browser).
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, get, session } from "../api.js";

/** `POST /records/api/listDocs` as the administrator: the answer's `result`. */
async function listDocs(org, cl) {
  const response = await fetch("/records/api/listDocs", {
    method: "POST",
    cache: "no-store",
    headers: { Authorization: `Bearer ${session.token() ?? ""}`, "Content-Type": "application/json" },
    body: JSON.stringify({ org, cl }),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok || body.error) {
    throw new ApiError(response.status, body.error?.message ?? body.error ?? response.statusText);
  }
  return body.result ?? body;
}

/** What the listing's own column names mean. */
const MEANING = { del: "del (a deletion row)", x: "x (zombie)", v: "v (version)", pk: "pk" };

/** One document's history on a slider: `/records/history/…?version=` (data opened, no-store). */
function History({ org, cl, pk }) {
  const [versions, setVersions] = useState(0);
  const [version, setVersion] = useState(0);
  const [then, setThen] = useState(null);
  const [error, setError] = useState("");
  const path = `/records/history/${[org, cl, pk].map(encodeURIComponent).join("/")}`;
  useEffect(() => {
    let stale = false;
    get(path, { version: version || undefined })
      .then((h) => {
        if (stale) return;
        setThen(h);
        setVersions(h.versions);
        if (!version) setVersion(h.version);
        setError("");
      })
      .catch((e) => { if (!stale) setError(e.message); });
    return () => { stale = true; };
  }, [path, version]);
  return html`<div class="record-history">
    <h3>${pk}: version <span id="record-version">${then?.version ?? "…"}</span> of ${versions}</h3>
    ${versions > 0 && html`<input type="range" min="1" max=${versions} value=${version} aria-label="Record version"
      onInput=${(e) => setVersion(Number(e.target.value))} />`}
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${then && html`<p>${then.row ? `v ${then.row.v}, ${then.x ? "zombie" : "live"}` : "no row (purged)"}, ${then.del_rows} del row${then.del_rows === 1 ? "" : "s"}</p>
      <pre id="record-data">${JSON.stringify(then.row?.data ?? null, null, 2)}</pre>`}
  </div>`;
}

export function Records() {
  const [org, setOrg] = useState("");
  const [cl, setCl] = useState("");
  const [listing, setListing] = useState(null);
  const [open, setOpen] = useState(null);
  const [error, setError] = useState("");
  const list = (e) => {
    e.preventDefault();
    listDocs(org, cl).then((l) => { setListing(l); setError(""); }).catch((err) => { setListing(null); setError(err.message); });
  };
  const rows = listing?.rows ?? [];
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((k) => k !== "data");
  return html`<section>
    <h2>Records</h2>
    <form class="filters" onSubmit=${list}>
      <label for="records-org">Organisation</label>
      <input id="records-org" value=${org} required onInput=${(e) => setOrg(e.target.value)} />
      <label for="records-class">Class</label>
      <input id="records-class" value=${cl} required onInput=${(e) => setCl(e.target.value)} />
      <button type="submit">List rows</button>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${listing && html`<p class="count" id="records-count">${rows.length} row${rows.length === 1 ? "" : "s"}; next v ${listing.v}</p>
      <table class="records"><thead><tr>${columns.map((c) => html`<th>${MEANING[c] ?? c}</th>`)}<th>data</th></tr></thead>
      <tbody>${rows.map((r) => html`<tr>${columns.map((c) => html`<td>${JSON.stringify(r[c])}</td>`)}
        <td><pre>${JSON.stringify(r.data, null, 2)}</pre>
          <button onClick=${() => setOpen({ org, cl, pk: r.pk })}>History</button></td></tr>`)}</tbody></table>`}
    ${open && html`<${History} key=${open.pk} org=${open.org} cl=${open.cl} pk=${open.pk} />`}
  </section>`;
}
