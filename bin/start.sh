#!/usr/bin/env bash
# `npm start`: database created and migrated, demo merchant seeded (first run),
# then the gateway's processes: the web server and the background worker
# (queue:work: payment expiry and the schedules). Ctrl-C stops them both, and
# when either stops by itself the other is stopped too.
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
  # In-flight requests and jobs get 10 s to finish; whatever still runs then is killed.
  (
    for _ in $(seq 1 20); do sleep 0.5; done
    echo "gateway: still running 10 s after SIGTERM, killing" >&2
    kill -KILL "${pids[@]}" 2>/dev/null
  ) &
  local timer=$!
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  kill "$timer" 2>/dev/null || true
}
trap stop INT TERM EXIT

node --import @poppinss/ts-exec bin/server.ts &
pids+=($!)
node ace.js queue:work &
pids+=($!)

echo "gateway: web on https://localhost:$PORT (merchant API, /health, hosted payment page /pay/<uuid>)"
echo "gateway: worker running (queue:work: payment expiry and scheduled jobs)"
# Returns as soon as either process exits; the EXIT trap then stops the other.
wait -n "${pids[@]}"
