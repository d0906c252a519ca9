#!/usr/bin/env bash
# Installs what the example consumers need, once: `npm ci` in node/ (pinned by package-lock.json)
# unless its packages are there, and a venv in python/.venv from python/requirements.txt unless
# one was made from the same file (its copy in .venv/.requirements.txt). Quick when installed.
# Run by .ci/run and by tests/tests/consumers.rs before it starts the consumers.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

node="$here/node"
if [[ ! -f "$node/node_modules/nats/package.json" || ! -f "$node/node_modules/ajv/package.json" ]]; then
    (cd "$node" && npm ci --no-audit --no-fund --loglevel=error)
fi

python="$here/python"
venv="$python/.venv"
if [[ ! -x "$venv/bin/python" ]] || ! cmp -s "$python/requirements.txt" "$venv/.requirements.txt"; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$python/requirements.txt"
    cp "$python/requirements.txt" "$venv/.requirements.txt"
fi
