#!/usr/bin/env bash
# Idempotent: a supported Node.js (scripts/use-node.sh), node modules, Chromium from Debian, and the local NATS (JetStream) and Postgres.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=use-node.sh
source scripts/use-node.sh

if [ -L node_modules ]; then
  # Linked from another checkout: npm ci would empty the directory it points to, under that checkout.
  [ ! package-lock.json -nt node_modules/.package-lock.json ] ||
    echo "note: node_modules is a link and older than package-lock.json; run npm ci where it points if the lockfile changed" >&2
elif [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi

# The worker and the end-to-end tests drive real git repositories.
if ! command -v git >/dev/null && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git >/dev/null) ||
    echo "warning: could not install git; the worker and the end-to-end tests need it" >&2
fi

if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ||
    echo "warning: could not install chromium; browser tests will report it" >&2
fi

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if ! port_open 4222; then
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
fi
if ! port_open 5432; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
fi
for i in $(seq 1 50); do port_open 4222 && port_open 5432 && exit 0; sleep 0.2; done
echo "NATS (4222) or Postgres (5432) did not come up" >&2
exit 1
