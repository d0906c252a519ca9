#!/usr/bin/env bash
# Runs PouchDB's own integration suite (the parts that talk to a server) against `/docs`.
#
# What it runs: mocha on 11 files of tests/integration (replication, basics, bulk_docs, all_docs,
# changes, attachments, revs_diff, get, conflicts, local_docs, bulk_get) with ADAPTERS=memory,
# only the describe blocks that use the server (`test.basics.js-http`,
# `suite2 test.replication.js-local-http`, `-http-http`, `-http-local`, `test.attachments.js-
# local:http`, ...: 881 tests, of which 17 pending; pouchdb-server 4.2.0 passes the other 864),
# with COUCH_HOST=http://admin:<admin token>@127.0.0.1:<port>/docs so that PouchDB may create and
# delete databases as the administrator.
#
# The checkout: pouchdb/pouchdb at commit 194c0754bb482824c3cb07d6432c7b95707d0a72 (9.0.0),
# after `npm install` and `npm run build-node`. Node 20.
#
# Our side, isolated from everything else on the machine: a private nats-server with JetStream on
# a free port, a fresh Postgres database, a temporary data directory and
# `palimpsest run --contexts docs` on a free port with a fresh admin token. All of it is removed
# on exit (processes killed, database dropped, directory deleted), whatever happens.
#
# Usage: run.sh POUCHDB_CHECKOUT
# Prints mocha's summary (summary.py: passing, pending, failing, each failing test with its error
# and the server's non-2xx answers during it), then the requests PouchDB made (by status, whether
# each carried COUCH_HOST's credentials, every 401/403; http-log.js records them), then the
# failures judged against EXPECTED_FAILURES below (each test expected to fail, with the reason).
# Exits 1 when a test fails that is not in that list (a listed test that passes is only named,
# to be taken off the list), 0 otherwise.
# Environment:
#   PALIMPSEST_BIN      the binary (default: $CARGO_TARGET_DIR/debug/palimpsest, built first
#                       with `cargo build -p palimpsest`; when set, nothing is built)
#   DATABASE_ADMIN_URL  default postgres://postgres@127.0.0.1:5432/postgres
#   NATS_SERVER_BIN     default: what deploy/local/services.sh nats-binary finds
#   TIMEOUT             mocha's per-test timeout in ms (default 5000, as bin/test-node.sh)
#   POUCHDB_SUITE_OUT   a directory to keep mocha's report (mocha.json), its console output, the
#                       request log and the server log in (default: removed with the rest)
set -euo pipefail

if [[ $# -ne 1 || ! -d "$1/tests/integration" ]]; then
    echo "usage: $0 POUCHDB_CHECKOUT (pouchdb/pouchdb after npm install and npm run build-node)" >&2
    exit 2
fi
pouchdb="$(cd "$1" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
admin_url="${DATABASE_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"

if [[ -n "${PALIMPSEST_BIN:-}" ]]; then
    bin="$PALIMPSEST_BIN"
else
    (cd "$root" && cargo build --quiet -p palimpsest --bin palimpsest)
    bin="${CARGO_TARGET_DIR:-$root/target}/debug/palimpsest"
fi
nats_bin="${NATS_SERVER_BIN:-$("$root/deploy/local/services.sh" nats-binary)}"

work="$(mktemp -d "${TMPDIR:-/tmp}/palimpsest-pouchdb-suite.XXXXXX")"
db="pouchsuite_$(date +%s)_$$"
pids=()
cleanup() {
    local status=$?
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    psql "$admin_url" -q -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 \
        || echo "pouchdb-suite: could not drop database $db" >&2
    if [[ -n "${POUCHDB_SUITE_OUT:-}" ]]; then
        mkdir -p "$POUCHDB_SUITE_OUT"
        cp -f "$work"/mocha.json "$work"/mocha.log "$work"/http.jsonl "$work"/server.log "$POUCHDB_SUITE_OUT"/ 2>/dev/null || true
    fi
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# NATS with JetStream, ours alone.
nats_port="$(free_port)"
mkdir -p "$work/nats"
mkdir -m 700 "$work/data" # holds the admin token
"$nats_bin" -a 127.0.0.1 -p "$nats_port" -js -sd "$work/nats" >"$work/nats.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do answers "$nats_port" && break; sleep 0.1; done
answers "$nats_port" || { echo "pouchdb-suite: nats-server did not start" >&2; cat "$work/nats.log" >&2; exit 1; }

# A fresh database, the docs context alone, a fresh admin token.
psql "$admin_url" -q -c "CREATE DATABASE \"$db\"" >/dev/null
token="$(python3 -c 'import secrets; print(secrets.token_hex(24))')"
port="$(free_port)"
DATABASE_URL="${admin_url%/*}/$db" NATS_URL="nats://127.0.0.1:$nats_port" \
    PALIMPSEST_ADMIN_TOKEN="$token" RUST_LOG="${RUST_LOG:-warn}" \
    "$bin" run --http "127.0.0.1:$port" --data-dir "$work/data" --contexts docs \
    >"$work/server.log" 2>&1 &
pids+=($!)
base="http://127.0.0.1:$port"
ready=0
for _ in $(seq 1 600); do
    if curl -sf "$base/readyz" >/dev/null && curl -sf "$base/docs/" >/dev/null; then ready=1; break; fi
    sleep 0.1
done
if [[ $ready != 1 ]]; then
    echo "pouchdb-suite: the server did not start" >&2
    tail -n 40 "$work/server.log" >&2
    exit 1
fi

# The tests expected to fail, one a line: mocha's full title, a tab, the reason. Any other
# failure fails this script.
EXPECTED_FAILURES="$(cat <<'LIST'
# None. On 2026-11-28 (after decision 0033), 864 passed, 0 failed, 17 pending at mocha's default
# 5 s on a quiet machine (load 1-4); the eight entries listed before, tests that write one document many
# times and timed out at load 11-12, took 0.6-1.5 s (`#3136 open revs` 0.9-1.4 s, `#3961` 0.6-1.1 s,
# `#2543` 0.9 s, `total_rows * 100` 1.5 s). Under heavy load they may need TIMEOUT=20000.
LIST
)"

files=()
for f in replication basics bulk_docs all_docs changes attachments revs_diff get conflicts local_docs bulk_get; do
    files+=("tests/integration/test.$f.js")
done
# The describe blocks with a server side: `-http`, `-local-http`, `-http-http`, `-http-local`,
# `- local:http`, `- http:http`, `- http:local` after the file's name.
grep='test\.[a-z_]+\.js- ?((local|http)[-:])?http'

echo "pouchdb-suite: PouchDB $(git -C "$pouchdb" rev-parse HEAD 2>/dev/null || echo '(not a git checkout)') against $bin on $base/docs"
mocha_status=0
(
    cd "$pouchdb"
    COUCH_HOST="http://admin:$token@127.0.0.1:$port/docs" ADAPTERS=memory \
        POUCHDB_SUITE_HTTP_LOG="$work/http.jsonl" exec \
        ./node_modules/.bin/mocha --exit --timeout "${TIMEOUT:-5000}" \
        --reporter json --reporter-option "output=$work/mocha.json" \
        --require ./tests/integration/node.setup.js --require "$here/http-log.js" \
        --grep "$grep" "${files[@]}"
) >"$work/mocha.log" 2>&1 &
pids+=($!) # so that an interrupted run stops mocha too
wait "${pids[-1]}" || mocha_status=$?
unset 'pids[-1]'
if [[ ! -s "$work/mocha.json" ]]; then
    echo "pouchdb-suite: mocha wrote no report (status $mocha_status); its last lines:" >&2
    tail -n 40 "$work/mocha.log" >&2
    exit 1
fi
echo "pouchdb-suite: mocha exited with status $mocha_status"
printf '%s\n' "$EXPECTED_FAILURES" >"$work/expected.tsv"
python3 "$here/summary.py" "$work/mocha.json" "$work/http.jsonl" "$work/expected.tsv"
