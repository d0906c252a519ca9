// A file's (or property's) revisions as Deki keeps them: each with what it changed (the
// change mask, as badges), who and when, hidden ones marked, and whether the resource is in the
// archive (deleted) or wiped from it.
import { html } from "htm/preact";
import { when } from "../format.js";

/** Deki's change mask bits (`resrev_change_mask`). */
const MASK = [[1, "content"], [2, "name"], [4, "language"], [8, "meta"], [16, "delete flag"], [32, "parent"]];

export function Revisions({ events, version, state }) {
  const revisions = events
    .filter((e) => e.version <= version && e.event_type === "RevisionAdded")
    .map((e) => e.payload.data ?? e.payload);
  const hidden = new Set(state.hidden ?? []);
  const head = state.head;
  const where = state.wiped ? "wiped from the archive" : head?.deleted ? "in the archive (deleted)" : "live";
  return html`<div class="revisions">
    <p>Resource <strong>${head?.name ?? "?"}</strong>: <span class="where">${where}</span></p>
    <table class="resource-revisions">
      <thead><tr><th>Rev</th><th>Name</th><th>Changed</th><th>Type and size</th><th>By</th><th>When</th></tr></thead>
      <tbody>${revisions.map((r) => html`<tr class=${hidden.has(r.rev) ? "hidden-rev" : ""}>
        <td class="num">${r.rev}${hidden.has(r.rev) && html` <span class="badge">hidden</span>`}</td>
        <td>${r.name}</td>
        <td>${MASK.filter(([bit]) => r.change_mask & bit).map(([, label]) => html`<span class="badge mask">${label}</span> `)}</td>
        <td>${r.mimetype}, ${r.content?.size ?? "?"} bytes</td>
        <td>user ${r.user_id}</td><td>${when(r.timestamp)}</td></tr>`)}</tbody>
    </table>
  </div>`;
}
