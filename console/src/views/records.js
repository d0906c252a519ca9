// A records class's rows as the records API lists them to the administrator (`listDocs`): each
// row's key, `v`, whether it is a zombie or a `del` row, and its `data` opened by the server
// (the page asks with `no-store`; nothing it shows is kept by the browser).
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { ApiError, session } from "../api.js";

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

export function Records() {
  const [org, setOrg] = useState("");
  const [cl, setCl] = useState("");
  const [listing, setListing] = useState(null);
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
        <td><pre>${JSON.stringify(r.data, null, 2)}</pre></td></tr>`)}</tbody></table>`}
  </section>`;
}
