// Real PouchDB 9 replicating through Palimpsest's /docs, one-shot both ways then live.
// Usage: node replicate.js http://admin:TOKEN@127.0.0.1:PORT/docs (databases are the
// administrator's: PouchDB sends the URL's credentials as HTTP Basic).
// Prints one JSON line of figures; exits non-zero with the reason on any mismatch.
'use strict';

const PouchDB = require('pouchdb');
PouchDB.plugin(require('pouchdb-adapter-memory'));

const base = process.argv[2];
if (!base) {
  console.error('usage: node replicate.js BASE_URL');
  process.exit(2);
}

// fetch() refuses a URL with credentials: they go in the Authorization header instead.
function fetchWithAuth(url) {
  const target = new URL(url);
  const headers = {};
  if (target.username) {
    const pair = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
    target.username = '';
    target.password = '';
  }
  return fetch(target, { headers });
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function contents(db) {
  const all = await db.allDocs({ include_docs: true, conflicts: true });
  const out = {};
  for (const row of all.rows) {
    const doc = Object.assign({}, row.doc);
    if (doc._conflicts) doc._conflicts = doc._conflicts.slice().sort();
    // PouchDB renumbers revpos of attachments it receives inline (it does against CouchDB too).
    for (const att of Object.values(doc._attachments || {})) delete att.revpos;
    out[row.id] = doc;
  }
  const changes = await db.changes({ style: 'all_docs' });
  for (const change of changes.results) {
    if (change.deleted) out[change.id] = { deleted: change.changes.map((c) => c.rev).sort() };
  }
  return out;
}

function same(a, b, what) {
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const left = JSON.stringify(sortDeep(a[key]));
    const right = JSON.stringify(sortDeep(b[key]));
    check(left === right, `${what} differ at ${key}:\n${left}\n${right}`);
  }
}

function sortDeep(value) {
  if (Array.isArray(value)) return value.map(sortDeep);
  if (value && typeof value === 'object') {
    const out = {};
    for (const key of Object.keys(value).sort()) out[key] = sortDeep(value[key]);
    return out;
  }
  return value;
}

async function until(what, test, ms = 15000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await test()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function main() {
  const figures = {};
  const local = new PouchDB('local-one', { adapter: 'memory' });
  const remote = new PouchDB(`${base}/replicated`);

  // A database with edits, a deletion, a conflict and a NUL inside a string and a key.
  await local.put({ _id: 'plain', n: 1, nested: { list: [1, 2.5, 'x'] } });
  const plain = await local.get('plain');
  await local.put(Object.assign(plain, { n: 2 }));
  const doomed = await local.put({ _id: 'doomed', v: true });
  await local.remove('doomed', doomed.rev);
  await local.put({ _id: 'nul', 'k\u0000ey': 'a\u0000b' });
  await local.bulkDocs(
    [
      { _id: 'conflicted', _rev: '1-aaa', v: 'root' },
      { _id: 'conflicted', _rev: '2-bbb', v: 'left', _revisions: { start: 2, ids: ['bbb', 'aaa'] } },
      { _id: 'conflicted', _rev: '2-ccc', v: 'right', _revisions: { start: 2, ids: ['ccc', 'aaa'] } },
    ],
    { new_edits: false },
  );
  await local.put({
    _id: 'with-att',
    title: 'attached',
    _attachments: { 'hello.txt': { content_type: 'text/plain', data: Buffer.from('hello world') } },
  });
  const withAtt = await local.get('with-att');
  await local.put(Object.assign(withAtt, { title: 'kept stub' }));
  for (let i = 0; i < 40; i++) await local.put({ _id: `bulk-${String(i).padStart(3, '0')}`, i });

  const push = await local.replicate.to(remote);
  check(push.ok, 'push failed');
  figures.push_written = push.docs_written;
  check(push.docs_written === push.docs_read && push.docs_written > 40, `push wrote ${push.docs_written}`);
  const again = await local.replicate.to(remote);
  check(again.docs_written === 0 && again.docs_read === 0, `second push moved ${again.docs_read}`);
  same(await contents(remote), await contents(local), 'remote and local after push');

  const info = await remote.info();
  check(info.doc_count === 44 && info.doc_del_count === 1, `remote counts ${JSON.stringify(info)}`);
  const conflicted = await remote.get('conflicted', { conflicts: true });
  check(conflicted._rev === '2-ccc' && conflicted._conflicts[0] === '2-bbb', 'remote winner');

  // Edits on the remote side: an update, a resolution, a new doc, a replicated branch.
  const plainRemote = await remote.get('plain');
  await remote.put(Object.assign(plainRemote, { n: 3, by: 'remote' }));
  await remote.remove('conflicted', '2-bbb');
  await remote.put({ _id: 'from-remote', ok: true });
  await remote.bulkDocs(
    [{ _id: 'nul', _rev: '9-zzz', v: 'branch', _revisions: { start: 9, ids: ['zzz', 'yyy'] } }],
    { new_edits: false },
  );

  const attRev = (await remote.get('with-att'))._rev;
  await remote.putAttachment('with-att', 'second.bin', attRev, Buffer.from([0, 1, 2, 255]), 'application/octet-stream');
  const text = await remote.getAttachment('with-att', 'hello.txt');
  check(text.toString() === 'hello world', 'remote attachment bytes');

  const fresh = new PouchDB('local-two', { adapter: 'memory' });
  const pull = await fresh.replicate.from(remote);
  check(pull.ok, 'pull failed');
  figures.pull_written = pull.docs_written;
  same(await contents(fresh), await contents(remote), 'fresh pull and remote');
  const pullAgain = await fresh.replicate.from(remote);
  check(pullAgain.docs_written === 0, `second pull wrote ${pullAgain.docs_written}`);

  const back = await local.replicate.from(remote);
  check(back.ok && back.docs_written === 5, `pull into the first local wrote ${back.docs_written}`);
  same(await contents(local), await contents(remote), 'first local and remote after pull');
  const second = await local.getAttachment('with-att', 'second.bin');
  check(Buffer.compare(second, Buffer.from([0, 1, 2, 255])) === 0, 'pulled attachment bytes');
  const nul = await local.get('nul', { conflicts: true });
  check(nul._conflicts && nul._conflicts.length === 1, 'nul conflict pulled');

  // Live sync both ways.
  const sync = local.sync(remote, { live: true, retry: true });
  await local.put({ _id: 'live-local', at: 1 });
  await until('live-local on the remote', async () => {
    try { await remote.get('live-local'); return true; } catch (e) { return false; }
  });
  await remote.put({ _id: 'live-remote', at: 2 });
  await until('live-remote locally', async () => {
    try { await local.get('live-remote'); return true; } catch (e) { return false; }
  });
  sync.cancel();
  figures.live = true;
  same(await contents(local), await contents(remote), 'local and remote after live sync');

  // Checkpoints are _local documents on the remote.
  const checkpoints = await fetchWithAuth(`${base}/replicated/_changes`).then((r) => r.json());
  check(!JSON.stringify(checkpoints).includes('_local'), '_local docs never show in _changes');

  await remote.destroy();
  console.log(JSON.stringify(figures));
}

main().catch((e) => {
  console.error(JSON.stringify(e), e && e.stack ? e.stack : e);
  process.exit(1);
});
