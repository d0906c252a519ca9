#!/usr/bin/env bash
# Validates events/asyncapi.yaml with @asyncapi/parser (pinned in package-lock.json; installed
# with `npm ci` on first run, scripts off). Part of `just test`; Node 20 and npm.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules/@asyncapi/parser ]; then
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
fi
node check.mjs ../asyncapi.yaml
