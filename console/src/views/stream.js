// One stream's events: type, version, position, time, actor, the payload folded, the metadata;
// the stream's chain checked by the server; the stream as it was at a time.
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { get } from "../api.js";
import { when } from "../format.js";
import { Proofs } from "./proofs.js";
import { StateAt } from "./state.js";

export function Stream({ context, category, streamKey: key, position }) {
  const name = `${context}/${category}/${key}`;
  // The time asked for belongs to this stream: another stream's page starts at its head. The
  // field's text as typed is kept beside it, so a re-render before the field's change (the
  // chain's answer arriving) does not put the old time back into it.
  const [asked, setAsked] = useState({ name, at: "", typed: "" });
  const mine = asked.name === name ? asked : { name, at: "", typed: "" };
  const at = mine.at;
  const setAt = (value) => setAsked({ name, at: value, typed: value.replace("Z", "") });
  const [events, setEvents] = useState([]);
  const [chain, setChain] = useState(null);
  const [proven, setProven] = useState({});
  const [error, setError] = useState("");
  useEffect(() => {
    const path = `/v1/streams/${[context, category, key].map(encodeURIComponent).join("/")}`;
    const all = [];
    const load = async (after) => {
      const page = await get(path, { after, limit: 1000, at: at || undefined });
      all.push(...page.events);
      if (page.events.length === 1000) return load(page.next_after);
      return all;
    };
    let stale = false;
    load(0).then((e) => {
      if (stale) return;
      setEvents(e);
      setError("");
      if (position) requestAnimationFrame(() => document.getElementById(`position-${position}`)?.scrollIntoView({ block: "center" }));
    }).catch((e) => { if (!stale) { setEvents([]); setError(e.message); } });
    return () => { stale = true; };
  }, [name, at]);
  useEffect(() => {
    get("/v1/audit/verify", { stream: name }).then(setChain).catch((e) => setChain({ ok: false, error: e.message }));
  }, [name]);
  return html`<section>
    <h2>Stream <code>${name}</code></h2>
    <p class="chain" aria-live="polite">${chain === null ? "Checking the chain…"
      : chain.ok ? html`<span class="ok">Chain verified</span>: ${chain.report.events} events`
      : html`<span class="bad">Chain broken</span>: ${JSON.stringify(chain.report?.broken ?? chain.error)}`}</p>
    <div class="filters">
      <label for="at">As it was at (UTC)</label>
      <input id="at" type="datetime-local" step="1" value=${mine.typed}
        onInput=${(e) => setAsked({ ...mine, typed: e.target.value })} onChange=${(e) => setAt(e.target.value ? e.target.value + "Z" : "")} />
      ${at && html`<button onClick=${() => setAt("")}>Now</button>`}
    </div>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${!at && html`<${Proofs} name=${name} events=${events} onProven=${setProven} />`}
    ${!at && html`<${StateAt} context=${context} category=${category} streamKey=${key} events=${events} />`}
    <table class="events">
      <thead><tr><th>Version</th><th>Position</th><th>Type</th><th>Recorded</th><th>Actor</th><th>Signed tree</th><th>Payload and metadata</th></tr></thead>
      <tbody>${events.map((e) => html`<tr class=${e.position === position ? "focus" : ""} id=${"position-" + e.position}>
        <td class="num">${e.version}</td><td class="num">${e.position}</td><td>${e.event_type}</td>
        <td>${when(e.recorded_at)}</td><td>${e.metadata?.actor ?? "—"}</td>
        <td class="proven">${proven[e.position] === true ? "✓ proven" : proven[e.position] === false ? "✗ not proven" : proven[e.position] === null ? "not signed yet" : ""}</td>
        <td><details><summary>${summary(e.payload)}</summary>
          <pre>${JSON.stringify(e.payload, null, 2)}</pre>
          <pre class="meta">${JSON.stringify({ ...e.metadata, hash: e.hash, prev_hash: e.prev_hash }, null, 2)}</pre>
        </details></td></tr>`)}</tbody>
    </table>
    <p class="count">${events.length} event${events.length === 1 ? "" : "s"}</p>
  </section>`;
}

/** A payload's first line: its keys, cut short. */
function summary(payload) {
  const text = payload && typeof payload === "object" ? Object.keys(payload).join(", ") : String(payload);
  return text.length > 80 ? text.slice(0, 77) + "…" : text || "(empty)";
}
