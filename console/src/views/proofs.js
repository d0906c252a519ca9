// A stream's events proven in the log's signed tree, in the page: the latest signed head (its
// signature checked against the log's key), each event's inclusion proof checked against its
// root; and the same, saved as an audit bundle that `palimpsest audit check` reads.
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { get } from "../api.js";
import { canCheck, included, verifyHead } from "../proof.js";

/** The latest signed head once it covers `position` (the tree maker signs every 250 ms). */
async function headCovering(position) {
  for (let tries = 0; tries < 100; tries++) {
    const head = await get("/v1/log/head").catch(() => null);
    if (head && head.tree_size >= position) return head;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no signed head covers position ${position} yet: is the tree maker running?`);
}

/** Everything a bundle holds: the key, a head covering the events, a proof per event. */
async function provable(events) {
  const key = await get("/v1/log/key");
  const head = await headCovering(Math.max(...events.map((e) => e.position)));
  const proofs = await Promise.all(events.map((e) =>
    get("/v1/log/proof/inclusion", { position: e.position, tree_size: head.tree_size })));
  return { key, head, proofs };
}

export function Proofs({ name, events, onProven }) {
  const [said, setSaid] = useState("");
  const [busy, setBusy] = useState(false);
  const run = (what) => async () => {
    setBusy(true);
    try { setSaid(await what()); } catch (e) { setSaid(`Failed: ${e.message}`); } finally { setBusy(false); }
  };
  const check = run(async () => {
    const { key, head, proofs } = await provable(events);
    const signed = await verifyHead(head, key);
    const results = await Promise.all(events.map((e, i) => included(e, head, proofs[i])));
    onProven(Object.fromEntries(events.map((e, i) => [e.position, results[i]])));
    const good = results.filter((r) => r === true).length;
    return `Head of ${head.tree_size} events: signature ${signed ? "verified" : "DOES NOT VERIFY"}; ${good} of ${events.length} events proven in it.`;
  });
  const exportBundle = run(async () => {
    const { key, head, proofs } = await provable(events);
    const bundle = { format: "palimpsest-audit-bundle-v1", key, head, stream: name,
      events: events.map((event, i) => ({ event, proof: proofs[i] })) };
    const blob = new Blob([JSON.stringify(bundle, null, 2)], { type: "application/json" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = `bundle-${name.replaceAll("/", "_")}.json`;
    link.click();
    URL.revokeObjectURL(link.href);
    return `Bundle of ${events.length} events saved: check it with palimpsest audit check.`;
  });
  return html`<div class="proofs">
    <button disabled=${busy || !canCheck || events.length === 0} onClick=${check}>Check inclusion proofs</button>
    <button disabled=${busy || events.length === 0} onClick=${exportBundle}>Export bundle</button>
    ${!canCheck && html`<span>Checking in the page needs HTTPS (or localhost).</span>`}
    <span class="proof-result" aria-live="polite">${said}</span>
  </div>`;
}
