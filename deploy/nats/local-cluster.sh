#!/usr/bin/env bash
# Runs the three-node JetStream cluster of deploy/nats/cluster-node-{1,2,3}.conf on one machine,
# on loopback ports, for trying R3 and node loss by hand. The conf files are used as they are;
# only what must differ on one host is changed: addresses, ports and routes on the command line
# (nats-server lets these flags override the file), and the store directory in a copy of the
# file under .data/ (nats-server refuses -sd beside a store_dir in the file).
#
#   deploy/nats/local-cluster.sh up          start the nodes that are not running, wait for a leader
#   deploy/nats/local-cluster.sh down        stop every node (stores are kept)
#   deploy/nats/local-cluster.sh stop N      kill node N (1..3), as a crash would
#   deploy/nats/local-cluster.sh start N     start node N again on its store
#   deploy/nats/local-cluster.sh status      which nodes run, the meta leader
#   deploy/nats/local-cluster.sh urls        the NATS_URL for the binary
#   deploy/nats/local-cluster.sh clean       down, then remove the stores
#
# Node N: clients 127.0.0.1:$((CLIENT_BASE+N)), routes $((ROUTE_BASE+N)), monitoring
# $((HTTP_BASE+N)); defaults 4230/6230/8230 keep clear of the single server on 4222.
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE="deploy/nats"
DATA="$PWD/.data/nats-cluster"
CLIENT_BASE="${CLIENT_BASE:-4230}"
ROUTE_BASE="${ROUTE_BASE:-6230}"
HTTP_BASE="${HTTP_BASE:-8230}"
NODES=(1 2 3)

say() { echo "[nats-cluster] $*" >&2; }
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

binary() {
  if [ -n "${NATS_SERVER_BIN:-}" ] && [ -x "$NATS_SERVER_BIN" ]; then echo "$NATS_SERVER_BIN"; return; fi
  bash deploy/local/services.sh nats-binary
}

routes() {
  local out=() n
  for n in "${NODES[@]}"; do out+=("nats://127.0.0.1:$((ROUTE_BASE + n))"); done
  (IFS=,; echo "${out[*]}")
}

urls() {
  local out=() n
  for n in "${NODES[@]}"; do out+=("nats://127.0.0.1:$((CLIENT_BASE + n))"); done
  (IFS=,; echo "${out[*]}")
}

pid_of() { cat "$DATA/node-$1/pid" 2>/dev/null || true; }
running() { local p; p="$(pid_of "$1")"; [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

start_node() {
  local n="$1"
  if running "$n"; then return; fi
  mkdir -p "$DATA/node-$n"
  say "starting nats-$n on 127.0.0.1:$((CLIENT_BASE + n))"
  sed "s|^\( *store_dir:\).*|\1 \"$DATA/node-$n\"|" "$HERE/cluster-node-$n.conf" \
    > "$DATA/node-$n/server.conf"
  nohup setsid "$(binary)" -c "$DATA/node-$n/server.conf" \
    -a 127.0.0.1 -p "$((CLIENT_BASE + n))" -m "$((HTTP_BASE + n))" \
    --cluster "nats://127.0.0.1:$((ROUTE_BASE + n))" --routes "$(routes)" \
    -l "$DATA/node-$n/server.log" \
    >/dev/null 2>&1 &
  echo $! > "$DATA/node-$n/pid"
  for _ in $(seq 50); do answers "$((CLIENT_BASE + n))" && return; sleep 0.2; done
  say "nats-$n did not start; see $DATA/node-$n/server.log"; exit 1
}

stop_node() {
  local n="$1" p
  p="$(pid_of "$n")"
  if [ -n "$p" ]; then kill -KILL "$p" 2>/dev/null || true; rm -f "$DATA/node-$n/pid"; fi
}

# The meta leader as one running node's monitoring endpoint reports it (empty while electing).
meta_leader() {
  local n
  for n in "${NODES[@]}"; do
    running "$n" || continue
    python3 - "$((HTTP_BASE + n))" <<'EOF' && return
import json, sys, urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/jsz", timeout=2) as r:
    leader = (json.load(r).get("meta_cluster") or {}).get("leader")
if not leader:
    sys.exit(1)
print(leader)
EOF
  done
  return 1
}

case "${1:-up}" in
  up)
    for n in "${NODES[@]}"; do start_node "$n"; done
    for _ in $(seq 100); do
      if leader="$(meta_leader 2>/dev/null)"; then
        say "meta leader: $leader"
        echo "NATS_URL=$(urls) PALIMPSEST_NATS_REPLICAS=3"
        exit 0
      fi
      sleep 0.3
    done
    say "no JetStream meta leader after 30 s; see $DATA/node-*/server.log"; exit 1
    ;;
  down) for n in "${NODES[@]}"; do stop_node "$n"; done ;;
  stop) stop_node "${2:?node 1..3}" ;;
  start) start_node "${2:?node 1..3}" ;;
  status)
    for n in "${NODES[@]}"; do
      if running "$n"; then echo "nats-$n running (pid $(pid_of "$n"))"; else echo "nats-$n stopped"; fi
    done
    echo "meta leader: $(meta_leader 2>/dev/null || echo none)"
    ;;
  urls) urls ;;
  clean)
    for n in "${NODES[@]}"; do stop_node "$n"; done
    rm -rf "$DATA"
    ;;
  *) echo "usage: $0 up|down|stop N|start N|status|urls|clean" >&2; exit 2 ;;
esac
