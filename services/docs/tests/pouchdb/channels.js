// Real PouchDB 9 as a Sync Gateway user: pulls only its channels, pushes into them.
// Usage: node channels.js http://ann:pw@127.0.0.1:PORT/docs/chan
'use strict';

const PouchDB = require('pouchdb');
PouchDB.plugin(require('pouchdb-adapter-memory'));

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function main() {
  const remote = new PouchDB(process.argv[2]);
  const local = new PouchDB('as-ann', { adapter: 'memory' });
  const pull = await local.replicate.from(remote);
  check(pull.ok, 'pull failed');
  const ids = (await local.allDocs()).rows.map((r) => r.id).sort();
  check(JSON.stringify(ids) === JSON.stringify(['a1', 'a2']), `pulled ${JSON.stringify(ids)}`);
  await local.put({ _id: 'from-ann', channels: ['a'] });
  const push = await local.replicate.to(remote);
  check(push.ok && push.docs_written === 1, `push wrote ${push.docs_written}`);
  const again = await local.replicate.from(remote);
  check(again.docs_written === 0, `second pull wrote ${again.docs_written}`);
  console.log(JSON.stringify({ pulled: ids.length, pushed: push.docs_written }));
}

main().catch((e) => {
  console.error(JSON.stringify(e), e && e.stack ? e.stack : e);
  process.exit(1);
});
