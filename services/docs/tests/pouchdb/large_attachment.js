// Real PouchDB 9 replicating a document with a 1.5 MB attachment through /docs: pushed (inline
// base64 in _bulk_docs, stored in the attachment folder), read back, pulled into a fresh
// database with the same bytes and digest; a second replication moves nothing.
// Usage: node large_attachment.js http://admin:TOKEN@127.0.0.1:PORT/docs/DB
'use strict';

const crypto = require('crypto');
const PouchDB = require('pouchdb');
PouchDB.plugin(require('pouchdb-adapter-memory'));

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function main() {
  const remote = new PouchDB(process.argv[2]);
  const local = new PouchDB('large-local', { adapter: 'memory' });
  const bytes = crypto.randomBytes(1536 * 1024);
  const digest = 'md5-' + crypto.createHash('md5').update(bytes).digest('base64');
  await local.put({
    _id: 'big',
    title: 'large attachment',
    _attachments: { 'big.bin': { content_type: 'application/octet-stream', data: bytes } },
  });
  const push = await local.replicate.to(remote);
  check(push.ok && push.docs_written === 1, `push wrote ${push.docs_written}`);
  const again = await local.replicate.to(remote);
  check(again.docs_written === 0 && again.docs_read === 0, `second push moved ${again.docs_read}`);
  const stub = (await remote.get('big'))._attachments['big.bin'];
  check(stub.digest === digest && stub.length === bytes.length, `remote stub ${JSON.stringify(stub)}`);
  const served = await remote.getAttachment('big', 'big.bin');
  check(Buffer.compare(served, bytes) === 0, 'remote attachment bytes');

  const fresh = new PouchDB('large-fresh', { adapter: 'memory' });
  const pull = await fresh.replicate.from(remote);
  check(pull.ok && pull.docs_written === 1, `pull wrote ${pull.docs_written}`);
  const pulled = await fresh.getAttachment('big', 'big.bin');
  check(Buffer.compare(pulled, bytes) === 0, 'pulled attachment bytes');
  const pulledStub = (await fresh.get('big'))._attachments['big.bin'];
  check(pulledStub.digest === digest, `pulled digest ${pulledStub.digest}`);
  const pullAgain = await fresh.replicate.from(remote);
  check(pullAgain.docs_written === 0, `second pull wrote ${pullAgain.docs_written}`);
  console.log(JSON.stringify({ bytes: bytes.length, pushed: push.docs_written, pulled: pull.docs_written }));
}

main().catch((e) => {
  console.error(JSON.stringify(e), e && e.stack ? e.stack : e);
  process.exit(1);
});
