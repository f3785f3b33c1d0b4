#!/usr/bin/env bash
# What the browser suite needs: Debian's Chromium (never a downloaded browser)
# and a Thai font (fonts-thai-tlwg), so that the hosted payment page renders as
# customers see it. Installs them through apt-get (with sudo when not root)
# when they are missing; when that is not possible, fails at once with the
# command to run. Shared by `npm test` (bin/test.sh) and CI (.ci/run).
#
# CHROMIUM_PATH=/path/to/chromium uses another Chromium (the suite honours it
# too); the Thai font is still required.
set -euo pipefail

CHROMIUM=${CHROMIUM_PATH:-/usr/bin/chromium}
PACKAGES=()
if [[ ! -x "$CHROMIUM" ]]; then
  if [[ -n "${CHROMIUM_PATH:-}" ]]; then
    echo "browser suite: CHROMIUM_PATH=$CHROMIUM_PATH is not an executable file" >&2
    exit 1
  fi
  PACKAGES+=(chromium)
fi
if command -v dpkg-query >/dev/null 2>&1; then
  if ! dpkg-query -W -f='${Status}' fonts-thai-tlwg 2>/dev/null | grep -q 'install ok installed'; then
    PACKAGES+=(fonts-thai-tlwg)
  fi
elif ! fc-list ':lang=th' family 2>/dev/null | grep -q .; then
  # Not Debian: any Thai font fontconfig knows will do.
  PACKAGES+=(fonts-thai-tlwg)
fi
[[ ${#PACKAGES[@]} -eq 0 ]] && exit 0

SUDO=""
if [[ "$(id -u)" -ne 0 ]]; then SUDO="sudo"; fi
COMMAND="${SUDO:+$SUDO }apt-get update && ${SUDO:+$SUDO }env DEBIAN_FRONTEND=noninteractive apt-get install -y ${PACKAGES[*]}"

fail() {
  echo "browser suite: $1" >&2
  echo "browser suite: it needs ${PACKAGES[*]}; install with:" >&2
  echo "  $COMMAND" >&2
  echo "browser suite: or leave it out: npm test -- unit functional" >&2
  exit 1
}

if ! command -v apt-get >/dev/null 2>&1; then
  echo "browser suite: missing ${PACKAGES[*]}, and no apt-get to install them (not Debian)." >&2
  echo "browser suite: install Chromium and a Thai font, set CHROMIUM_PATH=/path/to/chromium," >&2
  echo "browser suite: or leave the suite out: npm test -- unit functional" >&2
  exit 1
fi
if [[ -n "$SUDO" ]] && ! command -v sudo >/dev/null 2>&1; then
  fail "not root and sudo not found"
fi

echo "browser suite: installing ${PACKAGES[*]} (apt-get)"
# Without a terminal, sudo must not wait for a password nobody can type.
if [[ -n "$SUDO" && ! -t 0 ]]; then SUDO="sudo -n"; fi
$SUDO apt-get update || fail "apt-get update failed"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "${PACKAGES[@]}" ||
  fail "apt-get install failed"
