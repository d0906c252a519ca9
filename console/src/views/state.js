// A stream's state at a version, in its context's own terms: a slider over its history, the
// state folded by the server (`/v1/state`) at the version chosen, shown as a pad, a revision
// tree, or the folded state itself.
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { get } from "../api.js";
import { when } from "../format.js";
import { DocAccess } from "./doc-access.js";
import { Chat, PadText } from "./pad.js";
import { Revisions } from "./resource.js";
import { Section } from "./section.js";
import { RevTree } from "./revtree.js";

export function StateAt({ context, category, streamKey, events }) {
  const last = events.length;
  const [version, setVersion] = useState(last);
  const [folded, setFolded] = useState(null);
  const [error, setError] = useState("");
  useEffect(() => setVersion(last), [last]);
  useEffect(() => {
    if (version < 1) return;
    const path = `/v1/state/${[context, category, streamKey].map(encodeURIComponent).join("/")}`;
    let stale = false;
    get(path, { version })
      .then((s) => { if (!stale) { setFolded(s); setError(""); } })
      .catch((e) => { if (!stale) setError(e.message); });
    return () => { stale = true; };
  }, [context, category, streamKey, version]);
  if (last === 0) return null;
  const at = events[version - 1];
  const state = folded?.state;
  let view;
  if (!state) view = html`<p>This context keeps no state for this stream.</p>`;
  else if (context === "pads" && category === "pad") {
    view = html`<div class="pad"><${PadText} pad=${state} /><${Chat} events=${events} version=${version} /></div>`;
  } else if (context === "docs" && category === "document") {
    const first = events[0]?.payload ?? {};
    view = html`<div><${RevTree} doc=${state} />
      ${first.db && first.doc_id && html`<${DocAccess} db=${first.db} doc=${first.doc_id} />`}</div>`;
  } else if (context === "atlas" && category === "section") {
    view = html`<${Section} state=${state} />`;
  } else if (context === "resources" && category === "resource") {
    view = html`<${Revisions} events=${events} version=${version} state=${state} />`;
  } else view = html`<pre>${JSON.stringify(state, null, 2)}</pre>`;
  return html`<section class="state" aria-label="State at a version">
    <h3>As of version <span id="version">${version}</span> of ${last}${at ? `, ${when(at.recorded_at)}` : ""}</h3>
    <input type="range" min="1" max=${last} value=${version} aria-label="Version"
      onInput=${(e) => setVersion(Number(e.target.value))} />
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${folded && folded.version === version && view}
  </section>`;
}
