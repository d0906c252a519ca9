// Loaded into mocha with --require by run.sh: writes one JSON line per HTTP request the tests
// make to COUCH_HOST's host and port (method, path without the query string, the running test,
// how it was authenticated, the answer's status) to $POUCHDB_SUITE_HTTP_LOG. It only listens on
// Node's diagnostics channels; requests and answers pass untouched. The credentials themselves
// are never written: `auth` is "couch_host" (Basic with COUCH_HOST's user:password), "other"
// (some other Authorization header) or "none".
'use strict';
const dc = require('node:diagnostics_channel');
const fs = require('node:fs');

const out = process.env.POUCHDB_SUITE_HTTP_LOG;
const host = new URL(process.env.COUCH_HOST);
const expected = 'Basic ' + Buffer.from(
  decodeURIComponent(host.username) + ':' + decodeURIComponent(host.password)).toString('base64');
let current = '(outside a test)';
const fd = out ? fs.openSync(out, 'a') : null;
const pending = new Map(); // requests without an answer yet

// node-fetch hands its headers to http.request as arrays.
function header(request, name) {
  const v = request.getHeader(name);
  return Array.isArray(v) ? v.join(', ') : v;
}

function ours(request) {
  const h = header(request, 'host') || request.host || '';
  return h === host.host || h === `${host.hostname}:${host.port}`;
}

dc.subscribe('http.client.request.start', ({ request }) => {
  if (fd === null || !ours(request)) { return; }
  const a = header(request, 'authorization');
  pending.set(request, {
    test: current,
    method: request.method,
    path: String(request.path).split('?')[0],
    auth: a === undefined ? 'none' : (a === expected ? 'couch_host' : 'other'),
  });
});

dc.subscribe('http.client.response.finish', ({ request, response }) => {
  const entry = pending.get(request);
  if (!entry) { return; }
  pending.delete(request);
  entry.status = response.statusCode;
  fs.writeSync(fd, JSON.stringify(entry) + '\n');
});

// Requests never answered (aborted feeds, connection errors) are written with status null.
process.on('exit', () => {
  if (fd === null) { return; }
  for (const entry of pending.values()) {
    entry.status = null;
    fs.writeSync(fd, JSON.stringify(entry) + '\n');
  }
});

exports.mochaHooks = {
  beforeEach() { current = this.currentTest ? this.currentTest.fullTitle() : current; },
  afterEach() { current = '(between tests)'; },
};
