// The login form: the admin token, checked against /v1/head, then kept in the session.
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { get, session } from "../api.js";

export function Login({ onIn }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState("");
  const submit = async (e) => {
    e.preventDefault();
    session.keep(token.trim());
    try {
      await get("/v1/head");
      onIn();
    } catch (err) {
      session.forget();
      setError(err.status === 401 ? "That token is not the admin token." : err.message);
    }
  };
  return html`<main class="login">
    <h1>Palimpsest console</h1>
    <form onSubmit=${submit}>
      <label for="token">Admin token</label>
      <input id="token" name="token" type="password" autocomplete="current-password" required
        value=${token} onInput=${(e) => setToken(e.target.value)} />
      <button type="submit">Log in</button>
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </form>
    <p class="hint">The token is kept in this tab's session only, never in the address.</p>
  </main>`;
}
