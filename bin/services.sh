#!/usr/bin/env bash
# Makes sure MariaDB/MySQL (127.0.0.1:3306) and Redis (127.0.0.1:6379) answer,
# starting the local Debian services when they are installed but down.
# Shared by `npm start`, `npm test` and .ci/run. Honors DB_HOST/DB_PORT and
# REDIS_HOST/REDIS_PORT; a remote service is only waited for, never started.
set -euo pipefail

DB_HOST=${DB_HOST:-127.0.0.1}
DB_PORT=${DB_PORT:-3306}
REDIS_HOST=${REDIS_HOST:-127.0.0.1}
REDIS_PORT=${REDIS_PORT:-6379}

is_local() { [[ "$1" == "127.0.0.1" || "$1" == "localhost" || "$1" == "::1" ]]; }

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

wait_for() {
  local name=$1 host=$2 port=$3
  for _ in $(seq 1 60); do
    if port_open "$host" "$port"; then return 0; fi
    sleep 0.5
  done
  echo "services: $name did not answer on $host:$port" >&2
  return 1
}

if ! port_open "$DB_HOST" "$DB_PORT"; then
  if is_local "$DB_HOST" && command -v mariadbd >/dev/null 2>&1; then
    echo "services: starting MariaDB"
    if command -v start-stop-daemon >/dev/null 2>&1; then
      start-stop-daemon --start --oknodo --background --exec "$(command -v mariadbd)"
    else
      (mariadbd >/dev/null 2>&1 &)
    fi
  elif is_local "$DB_HOST" && command -v mysqld >/dev/null 2>&1; then
    echo "services: starting MySQL"
    (mysqld >/dev/null 2>&1 &)
  else
    echo "services: no MySQL/MariaDB on $DB_HOST:$DB_PORT and none installed to start" >&2
  fi
fi

if ! port_open "$REDIS_HOST" "$REDIS_PORT"; then
  if is_local "$REDIS_HOST" && command -v redis-server >/dev/null 2>&1; then
    echo "services: starting Redis"
    redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no >/dev/null
  else
    echo "services: no Redis on $REDIS_HOST:$REDIS_PORT and none installed to start" >&2
  fi
fi

wait_for MySQL "$DB_HOST" "$DB_PORT"
wait_for Redis "$REDIS_HOST" "$REDIS_PORT"
