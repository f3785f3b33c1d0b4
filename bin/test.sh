#!/usr/bin/env bash
# `npm test`: the whole test suite against the real MySQL and Redis.
# Extra arguments go to Japa, e.g. `npm test -- --files tests/unit/money.spec.ts`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
export NODE_ENV=test

bash bin/services.sh
node ace.js db:create
node ace.js test "$@"
