# Palimpsest. `just run` brings everything up on one machine; `just test` is what CI runs.
set shell := ["bash", "-euo", "pipefail", "-c"]

export NATS_SERVER_BIN := `bash deploy/local/services.sh nats-binary 2>/dev/null || true`

# List the recipes.
default:
    @just --list

# Start local Postgres and NATS (JetStream) if none answer.
services:
    bash deploy/local/services.sh up

# Everything in one process on 127.0.0.1:8080 (the console at /console/): HTTP, relay, projectors.
run *ARGS: services console
    cargo run --release -p palimpsest -- run {{ARGS}}

# Build the web console (console/dist, served at /console/); needs Node.js 20 and npm.
console:
    @command -v npm >/dev/null || { echo "the console needs Node.js 20 and npm (https://nodejs.org); /console/ says so until it is built" >&2; exit 1; }
    cd console && ([ -d node_modules ] || npm ci --no-audit --no-fund) && npm run build

# Format, lint and every test, against real Postgres and NATS.
test: services
    cargo fmt --all --check
    cargo clippy --workspace --all-targets -- -D warnings
    cargo test --workspace
    bash events/asyncapi-check/run.sh
    bash tests/schemathesis/run.sh

# Fuzz every context's OpenAPI document with schemathesis against the real binary (fresh database).
fuzz: services
    bash tests/schemathesis/run.sh

# Benchmarks: the log (appends, latency, replay), atlas bbox reads, pads appendText/getText, resources revisions,
# docs _bulk_docs/_changes, PouchDB replicating beside pouchdb-server, a 200 MB attachment up and down (process growth against the 50 MB target),
# the latency one client feels: each context's write acknowledged and readable, beside the log's own append.
bench: services
    cargo bench -p palimpsest-log --bench log
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres cargo bench -p palimpsest-atlas --bench bbox
    cargo bench -p palimpsest-pads --bench pads
    cargo bench -p palimpsest-resources --bench resources
    cargo bench -p palimpsest-records --bench records
    cargo bench -p palimpsest-docs --bench docs
    cargo bench -p palimpsest-docs --bench replication
    cargo bench -p palimpsest-docs --bench attachments
    cargo bench -p palimpsest-e2e --bench latency
    cargo build --release -p palimpsest --bin palimpsest
    cargo bench -p palimpsest-e2e --bench projector_source
    cargo bench -p palimpsest-e2e --bench capacity

# The fault matrix against the real binary (private Postgres cluster and nats-servers): kill -9
# of run/serve/relay/project, NATS restart, Postgres immediate stop, NATS leader loss. Prints a
# table; non-zero on any loss. `just chaos kill-relay leader-loss` runs only those cases.
chaos *CASES:
    cargo build -p palimpsest --bin palimpsest
    cargo run -p palimpsest-e2e --bin chaos -- {{CASES}}

# A real topology on loopback (private clusters): the log's Postgres and its streaming replica, the
# read models' Postgres and its replica, three NATS nodes (R3), two relays, three projectors sharing
# the partitions of stream_heads (one fed by JetStream), two serves behind HAProxy; HTTP load on
# every context, each write read back through the other serve; kill -9 in turn of a serve, a
# projector holding partitions, the active relay and the stream's NATS leader. Prints a table;
# non-zero on any loss, duplicate, read-your-writes violation, takeover over 5 s or rebuild that
# differs. `just topology kill-relay` runs only that case.
topology *CASES:
    cargo build -p palimpsest --bin palimpsest
    cargo run -p palimpsest-e2e --bin topology -- {{CASES}}

# Stop the local Postgres/NATS this project started (not the machine's own).
stop:
    bash deploy/local/services.sh down
