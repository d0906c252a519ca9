// Real PouchDB 9 against /docs where PouchDB's own suite expects CouchDB's protocol (issue #28):
// attachments inline in allDocs and changes, an older revision read until compact(), latest,
// a new document put deleted, _local documents in bulkDocs, keys paged, replicated revisions
// read through _revisions.
// Usage: node protocol.js http://admin:TOKEN@127.0.0.1:PORT/docs/DB (a database that exists)
// Prints one JSON line; exits non-zero with the reason on any mismatch.
'use strict';

const PouchDB = require('pouchdb');
PouchDB.plugin(require('pouchdb-adapter-memory'));

function check(condition, message) {
  if (!condition) throw new Error(message);
}

const HELLO = Buffer.from('hello').toString('base64');

async function attachmentsInline(db) {
  await db.put({ _id: 'att', _attachments: { 'a.txt': { content_type: 'text/plain', data: HELLO } } });
  const all = await db.allDocs({ include_docs: true, attachments: true, keys: ['att'] });
  const inAll = all.rows[0].doc._attachments['a.txt'];
  check(inAll.data === HELLO && !inAll.stub, `allDocs attachment: ${JSON.stringify(inAll)}`);
  const changes = await db.changes({ include_docs: true, attachments: true });
  const row = changes.results.find((r) => r.id === 'att');
  const inChanges = row.doc._attachments['a.txt'];
  check(inChanges.data === HELLO && !inChanges.stub, `changes attachment: ${JSON.stringify(inChanges)}`);
}

async function olderRevisions(db) {
  const first = await db.put({ _id: 'old', n: 1 });
  const second = await db.put({ _id: 'old', _rev: first.rev, n: 2 });
  const older = await db.get('old', { rev: first.rev });
  check(older.n === 1, `older revision: ${JSON.stringify(older)}`);
  const latest = await db.get('old', { rev: first.rev, latest: true });
  check(latest._rev === second.rev, `latest: ${JSON.stringify(latest)}`);
  await db.compact();
  const gone = await db.get('old', { rev: first.rev }).then(() => null, (e) => e);
  check(gone && gone.status === 404, `after compact: ${JSON.stringify(gone)}`);
}

async function tombstonesAndLocals(db) {
  const put = await db.put({ _id: 'born-deleted', _deleted: true });
  check(put.ok && put.rev.startsWith('1-'), `put deleted: ${JSON.stringify(put)}`);
  const local = await db.put({ _id: '_local/godzilla' });
  await db.put({ _id: 'mothra' });
  const mothra = await db.get('mothra');
  const removed = await db.bulkDocs([
    { _id: 'mothra', _rev: mothra._rev, _deleted: true },
    { _id: '_local/godzilla', _rev: local.rev, _deleted: true },
  ]);
  check(removed.every((r) => r.ok), `bulk deletions: ${JSON.stringify(removed)}`);
  const missing = await db.get('_local/godzilla').then(() => null, (e) => e);
  check(missing && missing.status === 404, `local after deletion: ${JSON.stringify(missing)}`);
}

async function keysAndReplicatedRevisions(db) {
  await db.bulkDocs(['k1', 'k2', 'k3'].map((id) => ({ _id: id })));
  const paged = await db.allDocs({ keys: ['k3', 'k2', 'k1'], skip: 1, limit: 1 });
  check(paged.rows.length === 1 && paged.rows[0].id === 'k2', `keys paged: ${JSON.stringify(paged.rows)}`);
  const answer = await db.bulkDocs(
    [{ _id: 'rep', _rev: '1-x', _revisions: { start: 2, ids: ['b', 'a'] } }],
    { new_edits: false },
  );
  check(answer.length === 0, `new_edits=false: ${JSON.stringify(answer)}`);
  const rep = await db.get('rep');
  check(rep._rev === '2-b', `replicated revision: ${JSON.stringify(rep)}`);
}

async function main() {
  const db = new PouchDB(process.argv[2]);
  await attachmentsInline(db);
  await olderRevisions(db);
  await tombstonesAndLocals(db);
  await keysAndReplicatedRevisions(db);
  console.log(JSON.stringify({ ok: true }));
}

main().catch((e) => {
  console.error(JSON.stringify(e), e && e.stack ? e.stack : e);
  process.exit(1);
});
