// Streams: browse by context and category, search by key prefix, page through them.
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { get } from "../api.js";

/** Opens the stream of the event at `position`, that event marked. */
async function goTo(position, setError) {
  const page = await get("/v1/events", { after: position - 1, limit: 1 });
  const event = page.events[0];
  if (!event || event.position !== position) {
    setError(`no event at position ${position}`);
    return;
  }
  const s = event.stream;
  location.hash = `#/stream/${[s.context, s.category, s.key].map(encodeURIComponent).join("/")}?position=${position}`;
}
import { when } from "../format.js";

const CONTEXTS = ["pads", "atlas", "docs", "records", "resources"];

export function Streams() {
  const [prefix, setPrefix] = useState("");
  // The field's text as typed, kept in state: a re-render between a keystroke and the field's
  // change (an earlier search answering) must not put the old prefix back into it.
  const [typed, setTyped] = useState("");
  const [pages, setPages] = useState([null]);
  const [page, setPage] = useState({ streams: [], next_after: null });
  const [error, setError] = useState("");
  const after = pages[pages.length - 1];
  useEffect(() => {
    let stale = false; // an answer to an earlier search that arrives late is dropped
    get("/v1/streams", { prefix, after, limit: 50 })
      .then((p) => { if (!stale) { setPage(p); setError(""); } })
      .catch((e) => { if (!stale) setError(e.message); });
    return () => { stale = true; };
  }, [prefix, after]);
  const search = (value) => { setTyped(value); setPrefix(value); setPages([null]); };
  return html`<section>
    <h2>Streams</h2>
    <div class="filters" role="group" aria-label="Context">
      <button class=${prefix === "" ? "on" : ""} onClick=${() => search("")}>all</button>
      ${CONTEXTS.map((c) => html`<button class=${prefix.startsWith(c + "/") ? "on" : ""}
        onClick=${() => search(c + "/")}>${c}</button>`)}
      <label for="prefix">Name starts with</label>
      <input id="prefix" value=${typed} placeholder="context/category/key"
        onInput=${(e) => setTyped(e.target.value)} onChange=${(e) => search(e.target.value)} />
    </div>
    <form class="filters" onSubmit=${(e) => { e.preventDefault(); goTo(Number(e.target.position.value), setError).catch((err) => setError(err.message)); }}>
      <label for="position">Go to position</label>
      <input id="position" name="position" type="number" min="1" required />
      <button type="submit">Go</button>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <table class="streams">
      <thead><tr><th>Stream</th><th>Version</th><th>Last event</th></tr></thead>
      <tbody>
        ${page.streams.map((s) => html`<tr>
          <td><a href=${"#/stream/" + s.stream.split("/").map(encodeURIComponent).join("/")}>${s.stream}</a></td>
          <td class="num">${s.version}</td><td>${when(s.last_recorded_at)}</td></tr>`)}
      </tbody>
    </table>
    <p class="count">${page.streams.length} stream${page.streams.length === 1 ? "" : "s"} on this page</p>
    <div class="pager">
      <button disabled=${pages.length === 1} onClick=${() => setPages(pages.slice(0, -1))}>Previous</button>
      <button disabled=${page.streams.length < 50} onClick=${() => setPages([...pages, page.next_after])}>Next</button>
    </div>
  </section>`;
}
