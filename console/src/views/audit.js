// Audit: the latest signed head with its signature checked in the page, and every stream's
// chain verified by the server one stream at a time, with a progress bar.
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { get } from "../api.js";
import { canCheck, verifyHead } from "../proof.js";

/** Every stream's name, page after page. */
async function everyStream() {
  const all = [];
  let after;
  for (;;) {
    const page = await get("/v1/streams", { after, limit: 1000 });
    all.push(...page.streams.map((s) => s.stream));
    if (page.streams.length < 1000) return all;
    after = page.next_after;
  }
}

export function Audit() {
  const [head, setHead] = useState(null);
  const [signed, setSigned] = useState(null);
  const [progress, setProgress] = useState(null);
  const [error, setError] = useState("");
  useEffect(() => {
    Promise.all([get("/v1/log/head"), get("/v1/log/key")])
      .then(async ([h, key]) => { setHead(h); if (canCheck) setSigned(await verifyHead(h, key)); })
      .catch((e) => setError(e.message));
  }, []);
  const verify = async () => {
    setError("");
    const names = await everyStream();
    const state = { done: 0, total: names.length, events: 0, broken: [] };
    setProgress({ ...state });
    for (const name of names) {
      const answer = await get("/v1/audit/verify", { stream: name });
      state.done += 1;
      state.events += answer.report.events;
      if (!answer.ok) state.broken.push({ name, at: answer.report.broken });
      setProgress({ ...state });
    }
  };
  return html`<section>
    <h2>Audit</h2>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${head && html`<dl class="facts">
      <dt>Latest signed head</dt><dd id="head-size">${head.tree_size} events</dd>
      <dt>Signed at</dt><dd>${new Date(head.timestamp).toISOString()}</dd>
      <dt>Root</dt><dd><code>${head.root_hash}</code></dd>
      <dt>Signature</dt><dd id="head-signature">${signed === null ? (canCheck ? "checking…" : "cannot be checked here (needs HTTPS)") : signed ? "verified with the log's key" : "DOES NOT VERIFY"}</dd>
    </dl>`}
    <button onClick=${() => verify().catch((e) => setError(e.message))} disabled=${progress && progress.done < progress.total}>Verify every chain</button>
    ${progress && html`<div class="verify">
      <progress id="verify-progress" max=${progress.total} value=${progress.done}>${progress.done} of ${progress.total}</progress>
      <span id="verify-result">${progress.done} of ${progress.total} streams, ${progress.events} events verified${
        progress.broken.length ? html`; <span class="bad">${progress.broken.length} broken</span>: ${progress.broken.map((b) => b.name).join(", ")}` : ""}</span>
    </div>`}
  </section>`;
}
