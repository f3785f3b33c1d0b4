#!/usr/bin/env bash
# `npm start`: database created and migrated, demo merchant seeded (first run),
# then the gateway's processes in the foreground. Ctrl-C stops them all.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
export NODE_ENV=${NODE_ENV:-development}
export PORT=${PORT:-3333}

bash bin/services.sh
node ace.js db:create
node ace.js migration:run --force
node ace.js demo:seed --port "$PORT"

pids=()
stop() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait
}
trap stop INT TERM EXIT

node --import @poppinss/ts-exec bin/server.ts &
pids+=($!)

echo "gateway: web on https://localhost:$PORT (merchant API, /health)"
wait -n "${pids[@]}"
