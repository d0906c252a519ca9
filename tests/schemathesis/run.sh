#!/usr/bin/env bash
# Fuzzes every context's OpenAPI document with schemathesis against the real binary.
#
# Starts `palimpsest serve` and `palimpsest project` (no relay: nothing goes to NATS) on a free
# port against a fresh database and data directory, runs schemathesis with every check on each
# document listed in contexts.txt, and removes the processes, the database and the temporary
# directory whatever happens. Exits non-zero on any failure (a 5xx, a response that does not match
# its documented schema, ...).
#
# Credentials: a fresh admin token (docs' and records' bearer, resources' admin), a fresh pads API
# key, a resources user key in `<data dir>/resources-keys.json`, and an atlas user `fuzz` (editor
# and reviewer) the admin issues once the app runs; schemathesis.toml hands them
# to the OpenAPI security schemes each document declares, so operations run past their 401s.
# Fixtures: the records classes in records-schema.json; a docs database `fuzz` and a pad `fuzz`,
# which schemathesis.toml offers the fuzzer beside the names it draws.
#
# Usage: run.sh [DOCUMENT...] fuzzes only the named documents (as written in contexts.txt).
# Environment: DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
# SCHEMATHESIS_MAX_EXAMPLES (overrides every document's count in contexts.txt), SCHEMATHESIS_WORKERS (default 1: Python 3.11 can fail parsing in threads), SCHEMATHESIS_SEED (default fixed),
# SCHEMATHESIS_ARGS (more arguments for `st run`), CARGO_TARGET_DIR (default target/). The venv lives in $CARGO_TARGET_DIR/schemathesis-venv and is
# rebuilt when requirements.txt changes.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
admin_url="${DATABASE_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
seed="${SCHEMATHESIS_SEED:-20261123}"

# The pinned schemathesis, in a venv of our own.
venv="$target/schemathesis-venv"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [[ ! -x "$venv/bin/st" || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    echo "$want" > "$stamp"
fi

cargo build --quiet -p palimpsest
bin="$target/debug/palimpsest"

work="$(mktemp -d "${TMPDIR:-/tmp}/palimpsest-schemathesis.XXXXXX")"
db="palimpsest_schemathesis_$(date +%s)_$$"
db_url="${admin_url%/*}/$db"
pids=()
cleanup() {
    local status=$?
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    psql "$admin_url" -q -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 \
        || echo "schemathesis: could not drop database $db" >&2
    if [[ $status -ne 0 && -f "$work/serve.log" ]]; then
        echo "--- server log (errors) ---" >&2
        grep -E "ERROR|WARN" "$work/serve.log" | tail -n 40 >&2 || true
    fi
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT INT TERM

# Credentials for this run only (the server reads them from the environment, schemathesis.toml too).
secret() { python3 -c 'import secrets; print(secrets.token_hex(24))'; }
PALIMPSEST_ADMIN_TOKEN="$(secret)"
PALIMPSEST_PADS_APIKEY="$(secret)"
FUZZ_RESOURCES_KEY="$(secret)"
export PALIMPSEST_ADMIN_TOKEN PALIMPSEST_PADS_APIKEY FUZZ_RESOURCES_KEY
mkdir -p "$work/data"
printf '{"%s": {"user_id": 7}}\n' "$FUZZ_RESOURCES_KEY" > "$work/data/resources-keys.json"
export PALIMPSEST_RECORDS_SCHEMA="$here/records-schema.json"

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
export DATABASE_URL="$db_url" PALIMPSEST_DATA_DIR="$work/data" RUST_LOG="${RUST_LOG:-warn}"
"$bin" serve --http "127.0.0.1:$port" >"$work/serve.log" 2>&1 &
pids+=($!)
# The projector starts once `serve` has made the database and migrated the log.
for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
    sleep 0.1
done
"$bin" project >"$work/project.log" 2>&1 &
pids+=($!)

# Ready when HTTP answers and every context's read model exists (reads before that would fail).
# (`/v1/openapi.json` is the platform's own document, not a context's.)
contexts="$(grep -v '^#' "$here/contexts.txt" | grep -v '^/v1/' | sed -n 's|^/\([a-z]*\)/.*|\1|p' | sort -u)"
for _ in $(seq 1 300); do
    ready=1
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || ready=0
    for ctx in $contexts; do
        [[ "$(psql "$db_url" -tAc "SELECT to_regclass('$ctx.projection_checkpoint') IS NOT NULL" 2>/dev/null)" == t ]] || ready=0
    done
    [[ $ready == 1 ]] && break
    sleep 0.1
done
[[ $ready == 1 ]] || { echo "schemathesis: the app did not start" >&2; exit 1; }

# Fixtures the fuzzer is pointed at (schemathesis.toml): a docs database and a pad.
base="http://127.0.0.1:$port"
admin=(-H "Authorization: Bearer $PALIMPSEST_ADMIN_TOKEN" -H "Content-Type: application/json")
fixture() { curl -sf -o /dev/null "$@" || { echo "schemathesis: fixture failed: $*" >&2; exit 1; }; }
fixture "${admin[@]}" -X PUT "$base/docs/_admin/fuzz" -d '{}'
fixture "$base/pads/api/1.3.0/createPad?apikey=$PALIMPSEST_PADS_APIKEY&padID=fuzz&text=fuzz"
# An atlas user (editor and reviewer) whose token the fuzzer sends: the section workflow needs one.
FUZZ_ATLAS_TOKEN="$(curl -sf "${admin[@]}" -X PUT "$base/atlas/admin/users/fuzz" -d '{"roles": ["editor", "reviewer"]}' \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')" \
    || { echo "schemathesis: fixture failed: the atlas user" >&2; exit 1; }
export FUZZ_ATLAS_TOKEN

failed=0
cd "$work" # schemathesis keeps a cache in its working directory
while read -r document examples; do
    [[ -z "$document" || "$document" == \#* ]] && continue
    if [[ $# -gt 0 && " $* " != *" $document "* ]]; then continue; fi
    examples="${SCHEMATHESIS_MAX_EXAMPLES:-${examples:-100}}"
    echo "schemathesis: $document ($examples examples per operation and phase)"
    started=$SECONDS
    "$venv/bin/st" --config-file "$here/schemathesis.toml" run "http://127.0.0.1:$port$document" \
        --checks all \
        --max-examples "$examples" \
        --seed "$seed" \
        --generation-database none \
        --request-timeout 10 \
        --workers "${SCHEMATHESIS_WORKERS:-1}" \
        --no-color \
        --report junit --report-dir "$work/report" \
        ${SCHEMATHESIS_ARGS:-} \
        || failed=1
    echo "schemathesis: $document took $((SECONDS - started)) s"
done < "$here/contexts.txt"
exit "$failed"
