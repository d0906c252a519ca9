// A pad's text as Etherpad shows it: each author's text on that author's colour, bold, italic,
// underline and strike-through as the attribute pool says; from the pad's state at a version.
import { html } from "htm/preact";

/** The runs of an Etherpad attribution string (`*0*1+5|1+1`): attribute numbers and lengths. */
export function runs(attribs) {
  const out = [];
  const op = /((?:\*[0-9a-z]+)*)(?:\|[0-9a-z]+)?([-+=])([0-9a-z]+)/g;
  for (const m of attribs.matchAll(op)) {
    const numbers = m[1].split("*").filter(Boolean).map((n) => parseInt(n, 36));
    out.push({ numbers, length: parseInt(m[3], 36) });
  }
  return out;
}

/** A light background for an author, the same for the same id. */
export function authorColour(id) {
  let hash = 0;
  for (const c of id) hash = (hash * 31 + c.codePointAt(0)) >>> 0;
  return `hsl(${hash % 360} 80% 86%)`;
}

/** The pad's text, from its `atext` and `pool` (the state's JSON). */
export function PadText({ pad }) {
  const attrib = pad.pool?.numToAttrib ?? {};
  const chars = [...pad.atext.text];
  const spans = [];
  let at = 0;
  for (const run of runs(pad.atext.attribs)) {
    const text = chars.slice(at, at + run.length).join("");
    at += run.length;
    const attrs = Object.fromEntries(run.numbers.map((n) => attrib[n] ?? ["?", ""]));
    if (attrs.lmkr) continue; // a line marker, not text
    const style = {
      background: attrs.author ? authorColour(attrs.author) : undefined,
      fontWeight: attrs.bold === "true" ? "bold" : undefined,
      fontStyle: attrs.italic === "true" ? "italic" : undefined,
      textDecoration: [attrs.underline === "true" && "underline", attrs.strikethrough === "true" && "line-through"]
        .filter(Boolean).join(" ") || undefined,
    };
    spans.push(html`<span style=${style} data-author=${attrs.author}>${text}</span>`);
  }
  return html`<div class="pad-text" aria-label="Pad text">${spans}</div>`;
}

/** The pad's chat up to `version`: the messages among the stream's events. */
export function Chat({ events, version }) {
  const messages = events.filter((e) => e.event_type === "ChatMessageAppended" && e.version <= version);
  return html`<aside class="chat" aria-label="Chat"><h3>Chat</h3>
    ${messages.length === 0 ? html`<p>No message yet.</p>` : html`<ul>${messages.map((e) =>
      html`<li><span class="who" style=${{ background: e.payload.author_id ? authorColour(e.payload.author_id) : undefined }}>
        ${e.payload.author_id ?? "anonymous"}</span> ${e.payload.text}</li>`)}</ul>`}
  </aside>`;
}
