// Real PouchDB 9 pushes N documents to Palimpsest's /docs, then a fresh PouchDB pulls them back.
// Usage: node bench.js http://admin:TOKEN@127.0.0.1:PORT/docs/DB N
// Prints one JSON line {docs, push_ms, pull_ms}; exits non-zero with the reason on a mismatch.
// Driven by services/docs/benches/docs.rs (the figure is documents per second; no target).
'use strict';

const PouchDB = require('pouchdb');
PouchDB.plugin(require('pouchdb-adapter-memory'));

const [url, count] = [process.argv[2], Number(process.argv[3])];
if (!url || !(count > 0)) {
  console.error('usage: node bench.js DB_URL N');
  process.exit(2);
}

async function main() {
  const local = new PouchDB('bench-source', { adapter: 'memory' });
  const docs = [];
  for (let i = 0; i < count; i++) {
    docs.push({ _id: `doc-${String(i).padStart(6, '0')}`, n: i, text: 'some body text of an ordinary length', tags: ['a', 'b'] });
  }
  for (let i = 0; i < docs.length; i += 1000) await local.bulkDocs(docs.slice(i, i + 1000));
  const remote = new PouchDB(url);

  let started = Date.now();
  const push = await local.replicate.to(remote, { batch_size: 100 });
  const pushMs = Date.now() - started;
  if (!push.ok || push.docs_written !== count) throw new Error(`push wrote ${push.docs_written} of ${count}`);

  const fresh = new PouchDB('bench-target', { adapter: 'memory' });
  started = Date.now();
  const pull = await fresh.replicate.from(remote, { batch_size: 100 });
  const pullMs = Date.now() - started;
  if (!pull.ok || pull.docs_written !== count) throw new Error(`pull wrote ${pull.docs_written} of ${count}`);
  const info = await fresh.info();
  if (info.doc_count !== count) throw new Error(`pulled ${info.doc_count} of ${count}`);
  console.log(JSON.stringify({ docs: count, push_ms: pushMs, pull_ms: pullMs }));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
