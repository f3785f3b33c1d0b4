#!/usr/bin/env bash
# What the statement-fetch tests need (tests/functional/statement_fetch.spec.ts):
# Debian's OpenSSH server (sshd and its sftp-server) and Dovecot's IMAP
# server. The tests start their own instances on ports they choose; the
# packages' system services are never started (a policy-rc.d forbids it
# for the install, when the machine has none). Installs them through apt-get
# (with sudo when not root) when missing; when that is not possible, says
# how and carries on: the fetch tests are then skipped, with the reason.
# Run by `npm test` (bin/test.sh), and so by CI (.ci/run).
set -euo pipefail

PACKAGES=()
[[ -x /usr/sbin/sshd && -x /usr/lib/openssh/sftp-server ]] || PACKAGES+=(openssh-server)
[[ -x /usr/sbin/dovecot ]] || PACKAGES+=(dovecot-imapd)
[[ ${#PACKAGES[@]} -eq 0 ]] && exit 0

SUDO=""
if [[ "$(id -u)" -ne 0 ]]; then SUDO="sudo"; fi

skip() {
  echo "bank channels: $1" >&2
  echo "bank channels: the SFTP and IMAP fetch tests will be skipped; to run them install ${PACKAGES[*]}:" >&2
  echo "  ${SUDO:+$SUDO }apt-get update && ${SUDO:+$SUDO }env DEBIAN_FRONTEND=noninteractive apt-get install -y ${PACKAGES[*]}" >&2
  exit 0
}

command -v apt-get >/dev/null 2>&1 || skip "missing ${PACKAGES[*]}, and no apt-get to install them (not Debian)"
if [[ -n "$SUDO" ]] && ! command -v sudo >/dev/null 2>&1; then skip "not root and sudo not found"; fi
# Without a terminal, sudo must not wait for a password nobody can type.
if [[ -n "$SUDO" && ! -t 0 ]]; then SUDO="sudo -n"; fi

# The packages' services must not start: the tests run their own servers.
POLICY=/usr/sbin/policy-rc.d
ADDED_POLICY=""
if [[ ! -e "$POLICY" ]]; then
  if printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null && $SUDO chmod 755 "$POLICY"; then
    ADDED_POLICY=1
  fi
fi
cleanup() { if [[ -n "$ADDED_POLICY" ]]; then $SUDO rm -f "$POLICY"; fi; }
trap cleanup EXIT

echo "bank channels: installing ${PACKAGES[*]} (apt-get; their services are not started)"
$SUDO apt-get update || skip "apt-get update failed"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${PACKAGES[@]}" ||
  skip "apt-get install failed"
