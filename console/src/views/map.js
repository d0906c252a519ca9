// The published map as of a time T: every atlas geometry stream folded at T (`/v1/state?at=`),
// the live ones drawn with Leaflet on a blank canvas (no tiles: the console needs no internet),
// each linked to its stream's history.
import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import L from "leaflet";
import "leaflet/dist/leaflet.css";
import { ApiError, get } from "../api.js";

/** Every stream whose name starts with `prefix`, page after page. */
async function streams(prefix) {
  const all = [];
  let after;
  for (;;) {
    const page = await get("/v1/streams", { prefix, after, limit: 1000 });
    all.push(...page.streams.map((s) => s.stream));
    if (page.streams.length < 1000) return all;
    after = page.next_after;
  }
}

/** The geometries as of `at` (an RFC 3339 time, or now): those that existed then, not deleted. */
async function geometriesAt(at) {
  const names = await streams("atlas/geometry/");
  const folded = await Promise.all(names.map(async (name) => {
    try {
      const s = await get(`/v1/state/${name.split("/").map(encodeURIComponent).join("/")}`, { at: at || undefined });
      return s.state?.geometry ? { name, row: s.state.geometry } : null;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return null; // not there yet at T
      throw e;
    }
  }));
  return folded.filter((g) => g && !g.row.is_deleted);
}

export function AtlasMap() {
  const [at, setAt] = useState("");
  const [shown, setShown] = useState(null);
  const [error, setError] = useState("");
  const box = useRef(null);
  const map = useRef(null);
  useEffect(() => {
    map.current = L.map(box.current, { attributionControl: false, zoomAnimation: false, fadeAnimation: false, markerZoomAnimation: false }).setView([20, 105], 4);
    return () => map.current.remove();
  }, []);
  useEffect(() => {
    let gone = false;
    geometriesAt(at).then((geometries) => {
      if (gone) return;
      const layer = L.geoJSON({
        type: "FeatureCollection",
        features: geometries.map((g) => ({ type: "Feature", geometry: g.row.draw_geometry, properties: { id: g.row.id, name: g.name } })),
      }, { pointToLayer: (_, latlng) => L.circleMarker(latlng, { radius: 6 }) });
      map.current.eachLayer((l) => map.current.removeLayer(l));
      layer.addTo(map.current);
      if (geometries.length) map.current.fitBounds(layer.getBounds(), { maxZoom: 8, padding: [20, 20], animate: false });
      setShown(geometries);
      setError("");
    }).catch((e) => setError(e.message));
    return () => { gone = true; };
  }, [at]);
  return html`<section>
    <h2>Atlas map</h2>
    <div class="filters">
      <label for="map-at">As of (UTC)</label>
      <input id="map-at" type="datetime-local" step="1" onChange=${(e) => setAt(e.target.value ? e.target.value + "Z" : "")} />
      ${at && html`<button onClick=${() => { document.getElementById("map-at").value = ""; setAt(""); }}>Now</button>`}
    </div>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <div ref=${box} class="map" role="img" aria-label="The published geometries"></div>
    ${shown && html`<p class="count" id="geometry-count">${shown.length} geometr${shown.length === 1 ? "y" : "ies"} published</p>
      <ul class="geometries">${shown.map((g) => html`<li><a href=${"#/stream/" + g.name.split("/").map(encodeURIComponent).join("/")}>${g.row.id}</a> (${g.row.type ?? "?"})</li>`)}</ul>`}
  </section>`;
}
