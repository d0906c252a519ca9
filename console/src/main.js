// The console's shell: log in, then the views, chosen by the address's fragment so that the
// server serves one page (and no token ever sits in a URL).
import { html, render } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { session } from "./api.js";
import { Audit } from "./views/audit.js";
import { Login } from "./views/login.js";
import { AtlasMap } from "./views/map.js";
import { Operations } from "./views/operations.js";
import { Records } from "./views/records.js";
import { Stream } from "./views/stream.js";
import { Streams } from "./views/streams.js";
import "./style.css";

/** The view's path and its query (`#/stream/pads/pad/p1?position=12`). */
function route() {
  const [path, query = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const parts = path.split("/").map(decodeURIComponent);
  parts.query = new URLSearchParams(query);
  return parts;
}

function App() {
  const [signedIn, setSignedIn] = useState(Boolean(session.token()));
  const [parts, setParts] = useState(route());
  useEffect(() => {
    const moved = () => setParts(route());
    addEventListener("hashchange", moved);
    return () => removeEventListener("hashchange", moved);
  }, []);
  if (!signedIn) return html`<${Login} onIn=${() => setSignedIn(true)} />`;
  const [view, ...rest] = parts;
  const out = () => { session.forget(); setSignedIn(false); };
  return html`<div class="shell">
    <header>
      <strong>Palimpsest</strong>
      <nav aria-label="Views">
        <a href="#/streams" aria-current=${view === "streams" || view === "" ? "page" : undefined}>Streams</a>
        <a href="#/map" aria-current=${view === "map" ? "page" : undefined}>Atlas map</a>
        <a href="#/records" aria-current=${view === "records" ? "page" : undefined}>Records</a>
        <a href="#/operations" aria-current=${view === "operations" ? "page" : undefined}>Operations</a>
        <a href="#/audit" aria-current=${view === "audit" ? "page" : undefined}>Audit</a>
      </nav>
      <button class="out" onClick=${out}>Log out</button>
    </header>
    <main>${view === "operations" ? html`<${Operations} />`
      : view === "map" ? html`<${AtlasMap} />`
      : view === "audit" ? html`<${Audit} />`
      : view === "records" ? html`<${Records} />`
      : view === "stream" && rest.length >= 3 ? html`<${Stream} key=${rest.join("/")} context=${rest[0]} category=${rest[1]} streamKey=${rest.slice(2).join("/")} position=${Number(parts.query.get("position")) || null} />`
      : html`<${Streams} />`}</main>
  </div>`;
}

render(html`<${App} />`, document.getElementById("app"));
