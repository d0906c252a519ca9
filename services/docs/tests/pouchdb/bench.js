// Real PouchDB 9 pushes N documents to Palimpsest's /docs, then a fresh PouchDB pulls them back.
// Usage: node bench.js http://admin:TOKEN@127.0.0.1:PORT/docs/DB N
// Prints one JSON line {docs, push_ms, pull_ms, push_wait_ms, pull_wait_ms}; exits non-zero with
// the reason on a mismatch. A `*_wait_ms` is the time at least one request to the server was in
// flight (sent, its body not yet read): what is left of the way's time is the client's own work,
// the same whichever server answers. Driven by services/docs/benches/replication.rs.
'use strict';

const PouchDB = require('pouchdb');
PouchDB.plugin(require('pouchdb-adapter-memory'));
const NodeResponse = require('node-fetch').Response;

const [url, count] = [process.argv[2], Number(process.argv[3])];
if (!url || !(count > 0)) {
  console.error('usage: node bench.js DB_URL N');
  process.exit(2);
}

// The time, in ms, during which at least one request was in flight.
const flight = { open: 0, since: 0, ms: 0 };
function opened() {
  if (flight.open++ === 0) flight.since = performance.now();
}
function closed() {
  if (--flight.open === 0) flight.ms += performance.now() - flight.since;
}
function waited() {
  const ms = flight.ms;
  flight.ms = 0;
  return Math.round(ms);
}

// PouchDB's own fetch, timed until the answer's body has been read.
async function timedFetch(input, init) {
  opened();
  let response;
  try {
    response = await PouchDB.fetch(input, init);
  } catch (e) {
    closed();
    throw e;
  }
  const body = await response.arrayBuffer().finally(closed);
  return new NodeResponse(Buffer.from(body), { status: response.status, statusText: response.statusText, headers: response.headers, url: response.url });
}

async function main() {
  const local = new PouchDB('bench-source', { adapter: 'memory' });
  const docs = [];
  for (let i = 0; i < count; i++) {
    docs.push({ _id: `doc-${String(i).padStart(6, '0')}`, n: i, text: 'some body text of an ordinary length', tags: ['a', 'b'] });
  }
  for (let i = 0; i < docs.length; i += 1000) await local.bulkDocs(docs.slice(i, i + 1000));
  const remote = new PouchDB(url, { fetch: timedFetch });

  let started = Date.now();
  const push = await local.replicate.to(remote, { batch_size: 100 });
  const pushMs = Date.now() - started;
  const pushWaitMs = waited();
  if (!push.ok || push.docs_written !== count) throw new Error(`push wrote ${push.docs_written} of ${count}`);

  const fresh = new PouchDB('bench-target', { adapter: 'memory' });
  started = Date.now();
  const pull = await fresh.replicate.from(remote, { batch_size: 100 });
  const pullMs = Date.now() - started;
  const pullWaitMs = waited();
  if (!pull.ok || pull.docs_written !== count) throw new Error(`pull wrote ${pull.docs_written} of ${count}`);
  const info = await fresh.info();
  if (info.doc_count !== count) throw new Error(`pulled ${info.doc_count} of ${count}`);
  console.log(JSON.stringify({
    docs: count, push_ms: pushMs, pull_ms: pullMs, push_wait_ms: pushWaitMs, pull_wait_ms: pullWaitMs,
  }));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
