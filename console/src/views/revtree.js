// A document's revision tree as CouchDB keeps it (`_sync.history`): each revision under its
// parent, the winner and the conflicts (the other live leaves) marked, deleted ones struck.
import { html } from "htm/preact";

export function RevTree({ doc }) {
  const h = doc.history;
  const children = h.revs.map(() => []);
  const roots = [];
  h.parents.forEach((p, i) => (p < 0 ? roots : children[p]).push(i));
  const deleted = new Set(h.deleted);
  const kind = (i) => {
    if (h.revs[i] === doc.winner) return "winner";
    if (children[i].length > 0) return "";
    return deleted.has(i) ? "deleted" : "conflict";
  };
  const node = (i) => html`<li class=${["rev", kind(i), deleted.has(i) ? "gone" : ""].join(" ")} data-rev=${h.revs[i]}>
    <code>${h.revs[i]}</code>${kind(i) && html` <span class="badge">${kind(i)}</span>`}
    ${children[i].length > 0 && html`<ul>${children[i].map(node)}</ul>`}</li>`;
  return html`<div class="revtree" aria-label="Revision tree"><ul>${roots.map(node)}</ul></div>`;
}
