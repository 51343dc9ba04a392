#!/usr/bin/env bash
# Installs what the failover suite (packages/server/test/Sql/Failover.ha.test.ts) needs, from Debian:
# pg_auto_failover for PostgreSQL 15 (`pg_autoctl` and the monitor's extension) and HAProxy. Idempotent:
# does nothing when both are there. Called from .ci/run; by hand: `scripts/install-ha.sh`.
set -euo pipefail

if [ ! -x /usr/bin/pg_autoctl ] || [ ! -x /usr/sbin/haproxy ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    postgresql-15-auto-failover haproxy >/dev/null
fi
# The first line of each version (sed reads to the end: `head -n 1` could close the pipe while the program
# still writes, and its SIGPIPE would fail the script under pipefail, as it once did in CI).
pg_autoctl --version | sed -n 1p
haproxy -v | sed -n 1p
