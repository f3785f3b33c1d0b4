#!/usr/bin/env bash
# Full physical backup of the gateway's MariaDB node, prepared and checksummed.
#
# Runs from gateway-backup.timer on ONE Galera node that is not the writer
# (HAProxy sends writes to db1; run this on db3). The steps:
#   1. mariadb-backup --backup --galera-info   (hot copy; InnoDB is not locked
#      for the copy, only BACKUP STAGE BLOCK_COMMIT for a moment at the end)
#   2. mariadb-backup --prepare                (applies the redo log: the copy
#      becomes a consistent data directory, ready for --copy-back)
#   3. SHA256SUMS of every file, then the directory is renamed from
#      <stamp>.partial to <stamp>: a directory without .partial is complete
#   4. retention: backups older than BACKUP_RETENTION_DAYS are deleted, but
#      the newest BACKUP_KEEP_MIN are always kept
#   5. optional copy off the host (BACKUP_RSYNC_TARGET)
#
# Settings (environment, or /etc/gateway/backup.env through the unit):
#   BACKUP_DIR               where backups go            (/var/backups/gateway)
#   BACKUP_RETENTION_DAYS    age after which one is deleted (14)
#   BACKUP_KEEP_MIN          newest backups always kept  (3)
#   BACKUP_DEFAULTS_FILE     server option file read instead of the system's
#                            (unset: /etc/mysql/my.cnf and its includes)
#   BACKUP_CREDENTIALS_FILE  [client] + [mariadb-backup] user/password of the
#                            backup account, read after it (/etc/gateway/backup.cnf)
#   BACKUP_PARALLEL          copy threads                (2)
#   BACKUP_RSYNC_TARGET      e.g. backup@vault:/srv/gateway-db/ (unset: no copy)
#   BACKUP_TEXTFILE_DIR      node_exporter textfile directory for the
#                            gateway_backup_* metrics (unset: none written)
#
# The backup account needs: RELOAD, PROCESS, LOCK TABLES, BINLOG MONITOR,
# SLAVE MONITOR (10.11: "REPLICA MONITOR") on *.*  (deploy/mariadb/galera.cnf).
#
# Exit status: 0 = complete backup kept; anything else = no new backup
# (the .partial directory is removed).
set -euo pipefail
umask 077

BACKUP_DIR=${BACKUP_DIR:-/var/backups/gateway}
BACKUP_RETENTION_DAYS=${BACKUP_RETENTION_DAYS:-14}
BACKUP_KEEP_MIN=${BACKUP_KEEP_MIN:-3}
BACKUP_CREDENTIALS_FILE=${BACKUP_CREDENTIALS_FILE:-/etc/gateway/backup.cnf}
BACKUP_PARALLEL=${BACKUP_PARALLEL:-2}

log() { printf '%s gateway-backup: %s\n' "$(date -u +%FT%TZ)" "$*" >&2; }
now_ms() { date +%s%3N; }

stamp=$(date -u +%Y%m%dT%H%M%SZ)
target="$BACKUP_DIR/$stamp.partial"
mkdir -p "$BACKUP_DIR"
options_file=""
cleanup() {
  if [[ -n $target && -d $target ]]; then rm -rf -- "$target"; fi
  if [[ -n $options_file ]]; then rm -f -- "$options_file"; fi
}
trap cleanup EXIT
trap 'log "failed at line $LINENO; logs: $BACKUP_DIR/$stamp.*.log"' ERR

# mariadb-backup takes only one of --defaults-file / --defaults-extra-file,
# and only as its first option: with both settings, one file includes both.
options=()
if [[ -n ${BACKUP_DEFAULTS_FILE:-} ]]; then
  options_file=$(mktemp)
  printf '!include %s\n' "$BACKUP_DEFAULTS_FILE" > "$options_file"
  if [[ -f $BACKUP_CREDENTIALS_FILE ]]; then printf '!include %s\n' "$BACKUP_CREDENTIALS_FILE" >> "$options_file"; fi
  options+=("--defaults-file=$options_file")
elif [[ -f $BACKUP_CREDENTIALS_FILE ]]; then
  options+=("--defaults-extra-file=$BACKUP_CREDENTIALS_FILE")
fi

# A donor, joiner or desynced node has no consistent state to copy; a node
# outside the Primary component may be behind. Refuse rather than keep a
# backup nobody should restore.
state=$(mariadb "${options[@]}" -N -B -e "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE_COMMENT'" || true)
if [[ -n $state && $state != Synced ]]; then
  log "node is '$state', not Synced: no backup taken"
  exit 2
fi
log "node state: ${state:-standalone (wsrep off)}; writing $target"

start=$(now_ms)
mariadb-backup "${options[@]}" --backup --galera-info --parallel="$BACKUP_PARALLEL" \
  --target-dir="$target" 2>"$BACKUP_DIR/$stamp.backup.log"
backup_ms=$(( $(now_ms) - start ))

start=$(now_ms)
mariadb-backup "${options[@]}" --prepare --target-dir="$target" 2>"$BACKUP_DIR/$stamp.prepare.log"
prepare_ms=$(( $(now_ms) - start ))

# Checksums of the prepared files: the restore script checks them first.
start=$(now_ms)
(cd "$target" && find . -type f ! -name SHA256SUMS -print0 | sort -z | xargs -0 sha256sum > SHA256SUMS)
checksum_ms=$(( $(now_ms) - start ))

bytes=$(du -sb "$target" | cut -f1)
galera_info=$(cat "$target/xtrabackup_galera_info" 2>/dev/null || echo none)
cat > "$target/BACKUP_INFO" <<INFO
stamp=$stamp
host=$(hostname)
node_state=${state:-standalone}
galera_info=$galera_info
bytes=$bytes
backup_ms=$backup_ms
prepare_ms=$prepare_ms
checksum_ms=$checksum_ms
INFO
mv "$BACKUP_DIR/$stamp.backup.log" "$BACKUP_DIR/$stamp.prepare.log" "$target/"
mv -- "$target" "$BACKUP_DIR/$stamp"
target=""
log "complete: $BACKUP_DIR/$stamp ($bytes bytes; backup ${backup_ms} ms, prepare ${prepare_ms} ms, checksum ${checksum_ms} ms; galera $galera_info)"

# Retention. Names sort by time (UTC stamps); leftovers of crashed runs go too.
find "$BACKUP_DIR" -maxdepth 1 -type d -name '*.partial' -mmin +1440 -exec rm -rf -- {} +
mapfile -t complete < <(find "$BACKUP_DIR" -maxdepth 1 -mindepth 1 -type d -name '20*Z' -printf '%f\n' | sort -r)
for ((i = BACKUP_KEEP_MIN; i < ${#complete[@]}; i++)); do
  old="$BACKUP_DIR/${complete[i]}"
  if [[ -n $(find "$old" -maxdepth 0 -mtime +"$BACKUP_RETENTION_DAYS") ]]; then
    log "retention: deleting ${complete[i]}"
    rm -rf -- "$old"
  fi
done

if [[ -n ${BACKUP_RSYNC_TARGET:-} ]]; then
  rsync -a --delete-after "$BACKUP_DIR/" "$BACKUP_RSYNC_TARGET"
  log "copied to $BACKUP_RSYNC_TARGET"
fi

if [[ -n ${BACKUP_TEXTFILE_DIR:-} ]]; then
  # Written then renamed, so node_exporter never reads half a file.
  cat > "$BACKUP_TEXTFILE_DIR/gateway_backup.prom.$$" <<PROM
# HELP gateway_backup_last_success_timestamp_seconds End of the last complete database backup.
# TYPE gateway_backup_last_success_timestamp_seconds gauge
gateway_backup_last_success_timestamp_seconds $(date +%s)
# HELP gateway_backup_last_size_bytes Size of the last complete database backup.
# TYPE gateway_backup_last_size_bytes gauge
gateway_backup_last_size_bytes $bytes
# HELP gateway_backup_last_duration_seconds Backup + prepare + checksum time of the last backup.
# TYPE gateway_backup_last_duration_seconds gauge
gateway_backup_last_duration_seconds $(( (backup_ms + prepare_ms + checksum_ms) / 1000 ))
PROM
  mv "$BACKUP_TEXTFILE_DIR/gateway_backup.prom.$$" "$BACKUP_TEXTFILE_DIR/gateway_backup.prom"
fi
