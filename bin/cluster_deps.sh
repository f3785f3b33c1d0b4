#!/usr/bin/env bash
# What `npm run cluster` and the cluster fault suite need besides MariaDB and
# Redis (Galera 4 ships with Debian's mariadb-server; Sentinel is redis-server):
# HAProxy, the database writer's and the web processes' load balancer.
# Installs it through apt-get (with sudo when not root) when it is missing;
# when that is not possible, fails at once with the command to run. Shared
# by `npm run cluster`, `npm run test:cluster-faults` and CI (.ci/run).
set -euo pipefail

PACKAGES=()
command -v haproxy >/dev/null 2>&1 || [[ -x /usr/sbin/haproxy ]] || PACKAGES+=(haproxy)
[[ -f /usr/lib/galera/libgalera_smm.so ]] || PACKAGES+=(galera-4)
[[ ${#PACKAGES[@]} -eq 0 ]] && exit 0

SUDO=""
if [[ "$(id -u)" -ne 0 ]]; then SUDO="sudo"; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "cluster: missing ${PACKAGES[*]}, and no apt-get to install them (not Debian)." >&2
  exit 1
fi
if [[ -n "$SUDO" ]] && ! command -v sudo >/dev/null 2>&1; then
  echo "cluster: missing ${PACKAGES[*]}; not root and sudo not found. Install with:" >&2
  echo "  apt-get install -y ${PACKAGES[*]}" >&2
  exit 1
fi
echo "cluster: installing ${PACKAGES[*]} (apt-get)"
# Without a terminal, sudo must not wait for a password nobody can type.
if [[ -n "$SUDO" && ! -t 0 ]]; then SUDO="sudo -n"; fi
$SUDO apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "${PACKAGES[@]}"
