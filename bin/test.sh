#!/usr/bin/env bash
# `npm test`: the whole test suite against the real MySQL and Redis.
# Extra arguments go to Japa, e.g. `npm test -- --files tests/unit/money.spec.ts`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
export NODE_ENV=test

# Whether this run includes the browser suite: not when the arguments name
# suites without `browser`, or filter by files none of which is a browser one.
includes_browser_suite() {
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
  if [[ ${#suites[@]} -gt 0 && " ${suites[*]} " != *" browser "* ]]; then return 1; fi
  if [[ ${#files[@]} -gt 0 && "${files[*]}" != *browser* ]]; then return 1; fi
  return 0
}

# Debian's Chromium and a Thai font: installed when missing, or a clear failure now
# rather than a browser that cannot start halfway through the run.
if includes_browser_suite "$@"; then bash bin/browser_deps.sh; fi

bash bin/services.sh
# Each test process creates its own database when missing (tests/bootstrap.ts).
node ace.js test "$@"
