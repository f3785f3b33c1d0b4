#!/usr/bin/env bash
# Restores a backup made by gateway-backup.sh into an EMPTY data directory.
#
#   gateway-restore.sh <backup directory> [data directory]
#
# The server on this host must be stopped (systemctl stop mariadb). Move the
# old data directory aside first (mv /var/lib/mysql /var/lib/mysql.broken);
# this script never deletes one. Steps:
#   1. sha256sum -c SHA256SUMS      (a corrupt copy stops here)
#   2. mariadb-backup --copy-back   (the backup directory is left intact)
#   3. chown to RESTORE_OWNER (mysql)
#   4. with --galera-info in the backup: grastate.dat with the backup's
#      cluster UUID and seqno, safe_to_bootstrap: 1, so that this node can
#      start a new cluster from it (galera_new_cluster) and the other nodes
#      join it by state transfer (SST).
#
# Settings (environment):
#   RESTORE_DEFAULTS_FILE  server option file, passed as --defaults-file
#                          (unset: the system's /etc/mysql/my.cnf); its
#                          datadir is used when no data directory is given
#   RESTORE_OWNER          owner of the restored files (mysql)
set -euo pipefail

backup=${1:?usage: gateway-restore.sh <backup directory> [data directory]}
backup=$(cd "$backup" && pwd)
RESTORE_OWNER=${RESTORE_OWNER:-mysql}
options=()
if [[ -n ${RESTORE_DEFAULTS_FILE:-} ]]; then options+=("--defaults-file=$RESTORE_DEFAULTS_FILE"); fi

log() { printf '%s gateway-restore: %s\n' "$(date -u +%FT%TZ)" "$*" >&2; }
now_ms() { date +%s%3N; }

if [[ $backup == *.partial || ! -f $backup/SHA256SUMS ]]; then
  log "$backup is not a complete backup (no SHA256SUMS, or still .partial)"
  exit 2
fi

datadir=${2:-$(my_print_defaults "${options[@]}" mysqld | sed -n 's/^--datadir=//p' | tail -n1)}
datadir=${datadir:-/var/lib/mysql}
if [[ -d $datadir && -n $(ls -A "$datadir") ]]; then
  log "$datadir is not empty: stop the server and move it aside first"
  exit 2
fi
mkdir -p "$datadir"
# InnoDB's files go where the option file says, which may be outside datadir.
for option in innodb_data_home_dir innodb_log_group_home_dir; do
  dir=$(my_print_defaults "${options[@]}" mysqld | sed -n "s/^--${option//_/[-_]}=//p" | tail -n1)
  if [[ -n $dir && $dir != "$datadir" && -d $dir && -n $(ls -A "$dir") ]]; then
    log "$option $dir is not empty: stop the server and move it aside first"
    exit 2
  fi
done

start=$(now_ms)
(cd "$backup" && sha256sum --quiet -c SHA256SUMS)
verify_ms=$(( $(now_ms) - start ))
log "checksums match (${verify_ms} ms)"

start=$(now_ms)
mariadb-backup "${options[@]}" --copy-back --target-dir="$backup" --datadir="$datadir" 2>"$datadir.restore.log" \
  || { log "copy-back failed, see $datadir.restore.log"; exit 1; }
copy_ms=$(( $(now_ms) - start ))
# Not part of a data directory; mariadb-backup copies its own bookkeeping.
rm -f "$datadir/SHA256SUMS" "$datadir/BACKUP_INFO" "$datadir"/*.backup.log "$datadir"/*.prepare.log

if [[ -f $backup/xtrabackup_galera_info ]]; then
  # "uuid:seqno" (10.11 may append the GTID domain after a space).
  # The file has no final newline: read then returns 1 although it has read the line.
  IFS=": " read -r uuid seqno _ < "$backup/xtrabackup_galera_info" || true
  if [[ ! $uuid =~ ^[0-9a-f-]{36}$ || ! $seqno =~ ^-?[0-9]+$ ]]; then
    log "cannot read xtrabackup_galera_info: $(cat "$backup/xtrabackup_galera_info")"
    exit 1
  fi
  cat > "$datadir/grastate.dat" <<STATE
# GALERA saved state
version: 2.1
uuid:    $uuid
seqno:   $seqno
safe_to_bootstrap: 1
STATE
  log "grastate.dat: uuid $uuid seqno $seqno (bootstrap this node with galera_new_cluster)"
fi

if [[ -f $backup/xtrabackup_binlog_info ]]; then
  # Point-in-time recovery replays the old binary logs from here (docs/operations.md).
  log "binary log position of the backup (file, position, GTID): $(tr '\t' ' ' < "$backup/xtrabackup_binlog_info")"
fi

chown -R "$RESTORE_OWNER:$RESTORE_OWNER" "$datadir"
log "restored $backup into $datadir (copy-back ${copy_ms} ms, $(du -sb "$datadir" | cut -f1) bytes)"
