#!/usr/bin/env bash
# `npm start`: database created and migrated, demo merchant seeded (first run),
# then the gateway's processes: the web server and the background worker
# (queue:work: payment expiry and the schedules). SIGTERM, SIGINT (Ctrl-C) or
# SIGHUP stops them both, and when either stops by itself the other is
# stopped too.
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
  trap - INT TERM HUP EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  # The processes finish in-flight requests and jobs within SHUTDOWN_TIMEOUT_MS
  # (10 s) and exit by themselves; whatever still runs 2 s later is killed.
  (
    sleep $(( ${SHUTDOWN_TIMEOUT_MS:-10000} / 1000 + 2 ))
    echo "gateway: still running after SIGTERM, killing" >&2
    kill -KILL "${pids[@]}" 2>/dev/null
  ) &
  local timer=$!
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  kill "$timer" 2>/dev/null || true
}
trap stop INT TERM HUP EXIT

# The heap bounds production uses too, web and worker (docs/operations.md, "Memory").
source bin/heap_flags.sh
# shellcheck disable=SC2086 # each holds several flags
node $WEB_HEAP_FLAGS --import @poppinss/ts-exec bin/server.ts &
pids+=($!)
# shellcheck disable=SC2086
node $WORKER_HEAP_FLAGS ace.js queue:work &
pids+=($!)

echo "gateway: web on https://localhost:$PORT (merchant API, /health, hosted payment page /pay/<uuid>)"
echo "gateway: worker running (queue:work: payment expiry and scheduled jobs)"
echo "gateway: back-office on https://localhost:$PORT/admin"
echo "gateway:   first operator: npm run ace -- operator:create --email you@example.com --role admin"
echo "gateway:   (prints a one-time link: open it to choose the password and enrol an authenticator app)"

# Runs until either process exits, or until our parent does: npm dies of a
# SIGHUP without passing it on, and its children must not live on without it.
# The EXIT trap then stops the other processes.
parent=$PPID
while kill -0 "$parent" 2>/dev/null; do
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || { wait "$pid"; exit $?; }; done
  # A background sleep lets a signal's trap run at once instead of after it.
  sleep 1 &
  wait $! || true
done
