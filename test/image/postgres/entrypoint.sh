#!/bin/sh
# First start: initdb with POSTGRES_USER / POSTGRES_PASSWORD (scram-sha-256 over the network) and POSTGRES_DB.
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "POSTGRES_PASSWORD is required" >&2; exit 1; }
  pwfile=$(mktemp)
  printf '%s' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 -E UTF8 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    postgres --single -D "$PGDATA" postgres <<SQL >/dev/null
CREATE DATABASE "$POSTGRES_DB" OWNER "$POSTGRES_USER";
SQL
  fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
