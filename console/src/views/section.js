// An atlas section at a version: its commits and its submissions with their review.
import { html } from "htm/preact";
import { when } from "../format.js";

export function Section({ state }) {
  const commits = state.commits ?? [];
  const submissions = state.submissions ?? [];
  return html`<div class="section-state">
    <p><strong>${state.section?.title ?? state.title ?? ""}</strong></p>
    <h4>Commits</h4>
    <table class="commits"><thead><tr><th>Commit</th><th>Kind</th><th>By</th><th>When</th></tr></thead>
      <tbody>${commits.map((c) => html`<tr><td><code>${c.id}</code></td><td>${c.kind ?? ""}</td><td>${c.created_by ?? ""}</td><td>${when(c.created_at)}</td></tr>`)}</tbody></table>
    <h4>Submissions</h4>
    <table class="submissions"><thead><tr><th>Submission</th><th>Status</th><th>Submitted by</th><th>Reviewed by</th><th>Note</th></tr></thead>
      <tbody>${submissions.map((s) => html`<tr><td><code>${s.id}</code></td><td class="status">${s.status}</td><td>${s.submitted_by ?? ""}</td><td>${s.reviewed_by ?? ""}</td><td>${s.review_note ?? ""}</td></tr>`)}</tbody></table>
  </div>`;
}
