#!/bin/sh
# The nightly ERP load: the ERP drops its export (Windows-1252, ";", German dates and decimal
# commas) in $EXPORT at 01:30; this loads it into the CRM at 02:00 and branches on crm's exit code.
#
# crontab -e (as the user that owns the journal; cron's PATH is short, so name node's):
#   0 2 * * * /opt/erp-sync/nightly.sh >> /var/log/erp-sync.log 2>&1
#
# The API key comes from a file only this user reads, never from a flag (other users see command
# lines): CRM_BASE_URL and CRM_TENANT_ID are set here, the key in /opt/erp-sync/api-key.
set -u
cd "$(dirname "$0")" || exit 1
EXPORT=${EXPORT:-./export}
OUT=./out/$(date +%Y-%m-%d)
mkdir -p "$OUT" || exit 1
export CRM_BASE_URL=${CRM_BASE_URL:-https://crm.example.com/api}
export CRM_TENANT_ID=${CRM_TENANT_ID:-tenant_erp}
# The crm command: installed with the SDK (node_modules/.bin/crm); CRM="npx crm" runs it from here.
CRM=${CRM:-crm}

$CRM sync apply \
  --journal ./erp.db \
  --api-key-file ./api-key \
  --map ./mapping.json --encoding windows-1252 --delimiter ';' \
  --accounts "$EXPORT/kunden.csv" \
  --contacts "$EXPORT/ansprechpartner.csv" \
  --opportunities "$EXPORT/auftraege.csv" \
  --failed "$OUT/failed" \
  --ids "$OUT/ids.csv" \
  --report "$OUT/report.json" \
  --summary > "$OUT/summary.json"
code=$?

case $code in
  0) echo "erp-sync: loaded whole" ;;
  9)
    # Finished, but some rows failed (or are in doubt, or removals were refused). The failed rows
    # are in $OUT/failed/, each file as the ERP wrote it plus "error" and "field" columns: fix them
    # (or fix the ERP) and load that directory's files the same way; records in doubt are listed by
    # crm sync status and settled with crm sync resolve.
    echo "erp-sync: incomplete; fix the rows in $OUT/failed and load them again" >&2
    ls -l "$OUT/failed" >&2
    ;;
  10) echo "erp-sync: another run holds the journal; tonight's run is skipped, tomorrow's catches up" >&2 ;;
  11) echo "erp-sync: the journal is corrupt: restore erp.db from the backup before the next run" >&2 ;;
  12) echo "erp-sync: the journal cannot be opened (see the message above: permissions, disk)" >&2 ;;
  2) echo "erp-sync: the export or the mapping is wrong (nothing was sent): see the message above" >&2 ;;
  3) echo "erp-sync: the API key was refused: rotate it (crm api-key generate) and update ./api-key" >&2 ;;
  5 | 6) echo "erp-sync: the CRM was unreachable or kept us waiting; the next run resumes" >&2 ;;
  *) echo "erp-sync: exit $code (see crm --help); the journal holds what was done" >&2 ;;
esac
exit $code
