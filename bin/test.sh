#!/usr/bin/env bash
# `npm test`: the whole test suite against the real MySQL and Redis.
# Extra arguments go to Japa, e.g. `npm test -- --files tests/unit/money.spec.ts`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
export NODE_ENV=test

# Whether this run includes suite $1 (and, with file filters, a file whose
# path contains $2): not when the arguments name suites without it, or filter
# by files none of which matches.
includes_suite() {
  local suite=$1 pattern=$2
  shift 2
  local suites=() files=() expect=""
  for arg in "$@"; do
    if [[ -n "$expect" ]]; then
      [[ "$expect" == files ]] && files+=("$arg")
      expect=""
      continue
    fi
    case "$arg" in
      --files=*) files+=("${arg#--files=}") ;;
      --files) expect=files ;;
      --tags | --groups | --tests | --reporters | --timeout | --retries) expect=other ;;
      -*) ;;
      *) suites+=("$arg") ;;
    esac
  done
  if [[ ${#suites[@]} -gt 0 && " ${suites[*]} " != *" $suite "* ]]; then return 1; fi
  if [[ ${#files[@]} -gt 0 && "${files[*]}" != *"$pattern"* ]]; then return 1; fi
  return 0
}

# Debian's Chromium and a Thai font: installed when missing, or a clear failure now
# rather than a browser that cannot start halfway through the run.
if includes_suite browser browser "$@"; then bash bin/browser_deps.sh; fi
# OpenSSH's sshd and Dovecot for the statement-fetch tests (they start their
# own servers): installed when missing; if they cannot be, those tests skip.
if includes_suite functional statement_fetch "$@"; then bash bin/bank_channel_deps.sh; fi

bash bin/services.sh
# The suite runs several test processes at once, each with its two pools (20
# connections each) and the gateway processes some tests start beside it: a
# local server's default of 151 connections is too few ("Too many
# connections", answered 503). Raised on the running local server, never
# lowered; a remote server is left as it is.
if [[ "${DB_HOST:-127.0.0.1}" == "127.0.0.1" || "${DB_HOST:-}" == "localhost" ]]; then
  client=$(command -v mariadb || command -v mysql || true)
  if [[ -n "$client" ]]; then
    MYSQL_PWD="${DB_PASSWORD:-}" "$client" -h "${DB_HOST:-127.0.0.1}" -P "${DB_PORT:-3306}" -u "${DB_USER:-root}" \
      -e 'SET GLOBAL max_connections = GREATEST(@@GLOBAL.max_connections, 600)' 2>/dev/null ||
      echo "test: could not raise max_connections (needs a user with SUPER); tests that start several gateways may be refused connections" >&2
  fi
fi
# Each test process creates its own database when missing (tests/bootstrap.ts).
node ace.js test "$@"
