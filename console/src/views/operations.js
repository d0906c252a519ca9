// The pipeline, live: the log's head and what is on disk, the relay, each read model's
// checkpoint and lag (stopped ones with the event that stopped them), and a chart of the append
// rate and of the largest lag, from /v1/operations polled every two seconds.
import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { get } from "../api.js";
import { when } from "../format.js";

const EVERY_MS = 2000;
const KEEP = 150;

export function Operations() {
  const [now, setNow] = useState(null);
  const [error, setError] = useState("");
  const series = useRef({ t: [], rate: [], lag: [], last: null });
  const chart = useRef(null);
  const box = useRef(null);
  useEffect(() => {
    let stopped = false;
    const poll = async () => {
      try {
        const ops = await get("/v1/operations");
        if (stopped) return;
        record(series.current, ops);
        setNow(ops);
        setError("");
        draw(chart, box.current, series.current);
      } catch (e) {
        if (!stopped) setError(e.message);
      }
    };
    poll();
    const timer = setInterval(poll, EVERY_MS);
    return () => { stopped = true; clearInterval(timer); chart.current?.destroy(); chart.current = null; };
  }, []);
  const relay = now?.relay;
  return html`<section>
    <h2>Operations</h2>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${now && html`<dl class="facts">
      <dt>Log head</dt><dd class="num" id="head">${now.head}</dd>
      <dt>On disk</dt><dd class="num">${now.durable}</dd>
      <dt>Relay here</dt><dd>${relay ? describeRelay(relay, now.head) : "not run by this process"}</dd>
      ${now.relay_positions.map((r) => html`<dt>JetStream ${r.stream}</dt>
        <dd class="relay-position">published ${r.position} of ${now.head} (${r.behind} behind), ${when(r.updated_at)}</dd>`)}
      ${now.relay_positions.length === 0 && html`<dt>JetStream</dt><dd>no relay has published yet</dd>`}
    </dl>`}
    <div ref=${box} class="chart" aria-label="Append rate and largest lag over time"></div>
    <table class="read-models">
      <thead><tr><th>Read model</th><th>Checkpoint</th><th>Lag (events)</th><th>Moved</th><th>State</th></tr></thead>
      <tbody>${(now?.read_models ?? []).map((m) => html`<tr class=${m.stalled ? "stalled" : ""}>
        <td>${m.name}</td><td class="num">${m.position}</td><td class="num">${m.lag}</td>
        <td>${when(m.updated_at)}</td>
        <td>${m.stalled ? html`<span class="bad">stopped</span> at ${m.stalled.position} (${m.stalled.event_type} of ${m.stalled.stream}): ${m.stalled.error}` : "running"}</td>
      </tr>`)}</tbody>
    </table>
  </section>`;
}

function describeRelay(relay, head) {
  if (relay.Publishing) return `publishing: ${relay.Publishing.published} of ${head}`;
  if (relay === "Starting") return "starting";
  return JSON.stringify(relay);
}

/** Adds one poll to the series: events appended per second since the last, the largest lag. */
function record(s, ops) {
  const t = Date.now() / 1000;
  const rate = s.last ? Math.max(0, (ops.head - s.last.head) / (t - s.last.t)) : 0;
  s.last = { t, head: ops.head };
  s.t.push(t);
  s.rate.push(rate);
  s.lag.push(Math.max(0, ...ops.read_models.map((m) => m.lag)));
  for (const k of ["t", "rate", "lag"]) if (s[k].length > KEEP) s[k].shift();
}

function draw(chart, el, s) {
  if (!el) return;
  const data = [s.t, s.rate, s.lag];
  if (chart.current) {
    chart.current.setData(data);
    return;
  }
  chart.current = new uPlot({
    width: Math.min(1100, el.clientWidth || 900),
    height: 220,
    series: [{}, { label: "appended / s", stroke: "#1f6feb" }, { label: "largest lag", stroke: "#d1242f", scale: "lag" }],
    axes: [{}, { label: "events / s" }, { side: 1, scale: "lag", label: "events" }],
  }, data, el);
}
